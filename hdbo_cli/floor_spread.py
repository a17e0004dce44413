"""``hdbo report DIR --spread``: how firmly the seeds decide Auto's floor in DIR.

Auto's floor (``hdbo report``'s "Targets"): on each group, a lower median than random
search's and TPE's, and a median at most the median of the four single algorithms' medians.
With a handful of seeds and a wide spread of end values a median is itself a draw. For each
group of ``DIR`` (a folder ``hdbo report`` reads) this prints, at equal evaluations, as
``hdbo report`` compares them
(:meth:`hdbo_cli.report.GroupStats.values_at_equal_evaluations`):

* on the seeds that Auto and the four single algorithms all have: Auto's median and the
  single algorithms' median of medians (the floor);
* ``margin``: the floor minus Auto's median, in robust standard deviations of the single
  algorithms' pooled end values (the median absolute deviation times 1.4826, which equals
  the standard deviation for normal values and is not swayed by a seed that failed; the
  standard deviation where half the values are equal; positive: the floor is met);
* ``p``: the two-sided Mann-Whitney U test of Auto's end values against the single
  algorithms' pooled ones (a large p: the seeds do not tell them apart);
* ``P(meet)``: the share of bootstrap resamples (each method's seeds drawn with replacement)
  in which Auto's median is at most the floor;
* ``seeds to decide``: how many seeds per method a two-sided test at level 0.05 would need
  to tell the margin from zero with power 0.8, ``2 (z_0.975 + z_0.8)^2 / margin^2`` (the
  normal approximation for a shift of ``margin`` standard deviations);
* for random search and for TPE, on the seeds Auto and that peer both have: both medians,
  the margin (the peer's median minus Auto's, in robust standard deviations of their pooled
  end values), ``P(below)``, the share of resamples in which Auto's median is the lower,
  and the seeds to decide;
* ``stall``: per method, the median over seeds of the longest run of evaluations without an
  improvement of the best value by more than TuRBO's threshold, ``1e-3 |best|``.

A cell's value is the one ``hdbo report`` ranks by: the noise-free value of the
recommendation where the cell has one (noisy groups), else the best value.

    hdbo report hdbo_runs/bench-hd --spread
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu, median_abs_deviation, norm

from .report import FLOOR_PEERS, SINGLE_ALGORITHMS, GroupStats, load_results

STALL_METHODS = ("auto", *SINGLE_ALGORITHMS, "optuna-tpe", "ng-cma")
ALPHA, POWER = 0.05, 0.8  # the test that ``seeds_to_decide`` sizes
BOOT = 5000  # bootstrap resamples per group


def robust_margin(difference: float, values: np.ndarray) -> float:
    """``difference`` in robust standard deviations of ``values`` (module docstring); NaN
    where the values are all equal."""
    scale = float(median_abs_deviation(values, scale="normal")) or float(np.std(values))
    return difference / scale if scale else np.nan


def seeds_to_decide(margin: float) -> float:
    """Seeds per method for a two-sided level-``ALPHA`` test to detect a shift of ``margin``
    standard deviations with probability ``POWER``, by the normal approximation."""
    z = norm.ppf(1.0 - ALPHA / 2.0) + norm.ppf(POWER)
    return float(np.ceil(2.0 * z**2 / margin**2)) if margin else np.inf


def longest_stall(curve: np.ndarray) -> int:
    """The longest run of evaluations along a best-so-far ``curve`` without an improvement
    of more than ``1e-3 |best|``."""
    best, run, longest = np.inf, 0, 0
    for y in curve:
        improved = not np.isfinite(best) or y < best - 1e-3 * abs(best)
        run = 0 if improved else run + 1
        longest = max(longest, run)
        best = min(best, float(y))
    return longest


@dataclass
class PeerSpread:
    """Auto against one reference peer on the seeds both have, at equal evaluations."""

    seeds: int
    auto: float  # Auto's median on those seeds
    peer: float  # the peer's median
    margin: float  # the peer's median minus Auto's, in robust standard deviations
    below: float  # the share of bootstrap resamples where Auto's median is the lower
    decide: float  # seeds per method to tell the margin from zero (:func:`seeds_to_decide`)


def peer_spread(g: GroupStats, peer: str, boot: int, rng: np.random.Generator
                ) -> PeerSpread | None:
    """Auto against ``peer`` (module docstring); None where they share no seed."""
    pair = g.values_at_equal_evaluations(["auto", peer])
    if pair is None:
        return None
    auto, other = pair["auto"], pair[peer]
    below = sum(np.median(rng.choice(auto, len(auto))) < np.median(rng.choice(other, len(other)))
                for _ in range(boot))
    margin = robust_margin(float(np.median(other) - np.median(auto)),
                           np.concatenate([auto, other]))
    return PeerSpread(len(other), float(np.median(auto)), float(np.median(other)), margin,
                      below / boot, seeds_to_decide(margin))


def spread(g: GroupStats, boot: int, rng: np.random.Generator) -> dict[str, object] | None:
    """The figures of the module docstring for one group; None where Auto and the single
    algorithms share no seed."""
    five = g.values_at_equal_evaluations(["auto", *SINGLE_ALGORITHMS])
    if five is None:
        return None
    auto, singles = five["auto"], [five[m] for m in SINGLE_ALGORITHMS]
    floor = float(np.median([np.median(v) for v in singles]))
    pooled = np.concatenate(singles)
    meets = sum(np.median(rng.choice(auto, len(auto)))
                <= np.median([np.median(rng.choice(v, len(v))) for v in singles])
                for _ in range(boot))
    stalls = {m: int(np.median([longest_stall(r.curve) for r in g.runs[m].values()]))
              for m in STALL_METHODS if g.runs.get(m)}
    margin = robust_margin(floor - float(np.median(auto)), pooled)
    return {"group": g.name, "seeds": len(auto), "auto": float(np.median(auto)),
            "floor": floor, "margin": margin, "decide": seeds_to_decide(margin),
            "p": float(mannwhitneyu(auto, pooled, alternative="two-sided").pvalue),
            "P(meet)": meets / boot, "stall": stalls,
            "peers": {peer: peer_spread(g, peer, boot, rng) for peer in FLOOR_PEERS}}


def spread_lines(run: Path, boot: int = BOOT) -> Iterator[str]:
    """One line of the module docstring's figures per group of ``run`` where Auto and the
    single algorithms share a seed."""
    for g in load_results(run):
        s = spread(g, boot, np.random.default_rng(0))  # the same draws whatever is printed
        if s is None:
            continue
        stall = " ".join(f"{m} {v}" for m, v in s["stall"].items())
        peers = "; ".join(
            f"{peer}: {v.seeds} seeds, Auto {v.auto:.4g} vs {v.peer:.4g}, "
            f"margin {v.margin:+.2f} sd, P(below) {v.below:.2f}, seeds to decide {v.decide:.0f}"
            for peer, v in s["peers"].items() if v is not None)
        yield (f"{s['group']}: {s['seeds']} seeds, Auto {s['auto']:.4g}, floor {s['floor']:.4g}, "
               f"margin {s['margin']:+.2f} sd, p {s['p']:.2f}, P(meet) {s['P(meet)']:.2f}, "
               f"seeds to decide {s['decide']:.0f}; {peers}; stall: {stall}")
