"""How firmly the seeds decide Auto's floor in a benchmark folder.

Auto's floor (``hdbo report``'s "Targets"): on each group, a lower median than random
search's and TPE's, and a median at most the median of the four single algorithms' medians.
With a handful of seeds and a wide spread of end values a median is itself a draw. For each
group of ``RUN`` (a folder ``hdbo report`` reads) this prints, on the seeds that Auto and
the four single algorithms all have (and, for TPE, that Auto and TPE both have), at equal
evaluations, as ``hdbo report`` compares them
(:meth:`hdbo_cli.report.GroupStats.values_at_equal_evaluations`):

* Auto's median, the single algorithms' median of medians (the floor) and TPE's median;
* ``margin``: the floor minus Auto's median, in robust standard deviations of the single
  algorithms' pooled end values (the median absolute deviation times 1.4826, which equals
  the standard deviation for normal values and is not swayed by a seed that failed; the
  standard deviation where half the values are equal; positive: the floor is met);
* ``p``: the two-sided Mann-Whitney U test of Auto's end values against the single
  algorithms' pooled ones (a large p: the seeds do not tell them apart);
* ``P(meet)``: the share of bootstrap resamples (each method's seeds drawn with replacement)
  in which Auto's median is at most the floor, and ``P(TPE)`` the share in which it is below
  TPE's median;
* ``seeds``: how many seeds per method a two-sided test at level 0.05 would need to tell
  the margin from zero with power 0.8, ``2 (z_0.975 + z_0.8)^2 / margin^2`` (the normal
  approximation for a shift of ``margin`` standard deviations), and likewise for Auto
  against TPE with the margin in robust standard deviations of their pooled end values;
* ``stall``: per method, the median over seeds of the longest run of evaluations without an
  improvement of the best value by more than TuRBO's threshold, ``1e-3 |best|``.

A cell's value is the one ``hdbo report`` ranks by: the noise-free value of the
recommendation where the cell has one (noisy groups), else the best value.

    python benchmarks/floor_spread.py hdbo_runs/bench-hd --groups hopper-D33-n500 \\
        swimmer-D16-n500
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu, median_abs_deviation, norm

from hdbo_cli.report import SINGLE_ALGORITHMS, GroupStats, load_results

STALL_METHODS = ("auto", *SINGLE_ALGORITHMS, "optuna-tpe", "ng-cma")
ALPHA, POWER = 0.05, 0.8  # the test that ``seeds_to_decide`` sizes


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


def spread(g: GroupStats, boot: int, rng: np.random.Generator) -> dict[str, object] | None:
    """The figures of the module docstring for one group; None where Auto and the single
    algorithms share no seed."""
    five = g.values_at_equal_evaluations(["auto", *SINGLE_ALGORITHMS])
    pair = g.values_at_equal_evaluations(["auto", "optuna-tpe"])
    if five is None or pair is None:
        return None
    auto, singles = five["auto"], [five[m] for m in SINGLE_ALGORITHMS]
    auto_t, tpe = pair["auto"], pair["optuna-tpe"]
    floor = float(np.median([np.median(v) for v in singles]))
    pooled = np.concatenate(singles)
    meets = below_tpe = 0
    for _ in range(boot):
        meets += (np.median(rng.choice(auto, len(auto)))
                  <= np.median([np.median(rng.choice(v, len(v))) for v in singles]))
        below_tpe += (np.median(rng.choice(auto_t, len(auto_t)))
                      < np.median(rng.choice(tpe, len(tpe))))
    stalls = {m: int(np.median([longest_stall(r.curve) for r in g.runs[m].values()]))
              for m in STALL_METHODS if g.runs.get(m)}
    margin = robust_margin(floor - float(np.median(auto)), pooled)
    margin_tpe = robust_margin(float(np.median(tpe)) - float(np.median(auto_t)),
                               np.concatenate([auto_t, tpe]))
    return {"group": g.name, "seeds": len(auto), "auto": float(np.median(auto)),
            "floor": floor, "tpe_seeds": len(tpe), "auto_vs_tpe": float(np.median(auto_t)),
            "tpe": float(np.median(tpe)), "margin": margin, "margin_tpe": margin_tpe,
            "decide": seeds_to_decide(margin), "decide_tpe": seeds_to_decide(margin_tpe),
            "p": float(mannwhitneyu(auto, pooled, alternative="two-sided").pvalue),
            "P(meet)": meets / boot, "P(TPE)": below_tpe / boot, "stall": stalls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a bench folder (with cells/)")
    parser.add_argument("--groups", nargs="+", help="these groups only [every group]")
    parser.add_argument("--boot", type=int, default=5000, help="bootstrap resamples [5000]")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    for g in load_results(args.run):
        if args.groups and g.name not in args.groups:
            continue
        s = spread(g, args.boot, rng)
        if s is None:
            continue
        stall = " ".join(f"{m} {v}" for m, v in s["stall"].items())
        print(f"{s['group']}: {s['seeds']} seeds, Auto {s['auto']:.4g}, floor {s['floor']:.4g}, "
              f"margin {s['margin']:+.2f} sd, p {s['p']:.2f}, P(meet) {s['P(meet)']:.2f}, "
              f"seeds to decide {s['decide']:.0f}; {s['tpe_seeds']} seeds, "
              f"Auto {s['auto_vs_tpe']:.4g}, TPE {s['tpe']:.4g}, "
              f"margin {s['margin_tpe']:+.2f} sd, P(TPE) {s['P(TPE)']:.2f}, "
              f"seeds to decide {s['decide_tpe']:.0f}; stall: {stall}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
