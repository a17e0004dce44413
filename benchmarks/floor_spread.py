"""How firmly the seeds decide Auto's floor in a benchmark folder.

Auto's floor (``hdbo report``'s "Targets"): on each group, a lower median than random
search's and TPE's, and a median at most the median of the four single algorithms' medians.
With a handful of seeds and a wide spread of end values a median is itself a draw. For each
group of ``RUN`` (a folder ``hdbo report`` reads) this prints, on the seeds that Auto and
the four single algorithms all have (and, for TPE, that Auto and TPE both have), as
``hdbo report`` compares them:

* Auto's median, the single algorithms' median of medians (the floor) and TPE's median;
* ``margin``: the floor minus Auto's median, in standard deviations of the single
  algorithms' pooled end values (positive: the floor is met);
* ``p``: the two-sided Mann-Whitney U test of Auto's end values against the single
  algorithms' pooled ones (a large p: the seeds do not tell them apart);
* ``P(meet)``: the share of bootstrap resamples (each method's seeds drawn with replacement)
  in which Auto's median is at most the floor, and ``P(TPE)`` the share in which it is below
  TPE's median;
* ``stall``: per method, the median over seeds of the longest run of evaluations without an
  improvement of the best value by more than TuRBO's threshold, ``1e-3 |best|``.

A cell's end value is the one ``hdbo report`` ranks by: the noise-free value of the final
recommendation where the cell has one (noisy groups), else the best value. A cell stopped by
its CPU limit counts with its value at its last evaluation (``hdbo report`` compares it at
equal evaluations instead).

    python benchmarks/floor_spread.py hdbo_runs/bench-hd --groups hopper-D33-n500 \\
        swimmer-D16-n500
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu

SINGLES = ("msucb", "cobbo", "goucb", "bkb")
STALL_METHODS = ("auto", *SINGLES, "optuna-tpe", "ng-cma")


def end_values(group: Path, method: str) -> dict[int, float]:
    """The end values of ``method``'s cells in ``group``, by seed."""
    values = {}
    for path in (group / method).glob("seed*.json"):
        cell = json.loads(path.read_text())
        true = cell.get("final_true_value")
        values[int(path.stem.removeprefix("seed"))] = float(cell["best"] if true is None
                                                            else true)
    return values


def on_shared_seeds(runs: list[dict[int, float]]) -> list[np.ndarray]:
    """Each method's end values on the seeds every one of them has, in seed order."""
    seeds = sorted(set.intersection(*(set(r) for r in runs)))
    return [np.array([r[s] for s in seeds]) for r in runs]


def longest_stall(csv_path: Path) -> int:
    """The longest run of evaluations without an improvement of more than ``1e-3 |best|``."""
    best, run, longest = np.inf, 0, 0
    with csv_path.open() as f:
        for row in csv.DictReader(f):
            y = float(row["value"])
            improved = not np.isfinite(best) or y < best - 1e-3 * abs(best)
            run = 0 if improved else run + 1
            longest = max(longest, run)
            best = min(best, y)
    return longest


def spread(group: Path, boot: int, rng: np.random.Generator) -> dict[str, object]:
    """The figures of the module docstring for one group."""
    runs = [end_values(group, m) for m in ("auto", *SINGLES)]
    auto, *singles = on_shared_seeds([r for r in runs if r])
    auto_t, tpe = on_shared_seeds([runs[0], end_values(group, "optuna-tpe")])
    floor = float(np.median([np.median(v) for v in singles]))
    pooled = np.concatenate(singles)
    meets = below_tpe = 0
    for _ in range(boot):
        meets += (np.median(rng.choice(auto, len(auto)))
                  <= np.median([np.median(rng.choice(v, len(v))) for v in singles]))
        below_tpe += (np.median(rng.choice(auto_t, len(auto_t)))
                      < np.median(rng.choice(tpe, len(tpe))))
    stalls = {m: int(np.median([longest_stall(p) for p in sorted((group / m).glob("seed*.csv"))]))
              for m in STALL_METHODS if any((group / m).glob("seed*.csv"))}
    return {"group": group.name, "seeds": len(auto), "auto": float(np.median(auto)),
            "floor": floor, "tpe_seeds": len(tpe), "auto_vs_tpe": float(np.median(auto_t)),
            "tpe": float(np.median(tpe)),
            "margin": (floor - float(np.median(auto))) / float(np.std(pooled)),
            "p": float(mannwhitneyu(auto, pooled, alternative="two-sided").pvalue),
            "P(meet)": meets / boot, "P(TPE)": below_tpe / boot, "stall": stalls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a bench folder (with cells/)")
    parser.add_argument("--groups", nargs="+", help="these groups only [every group]")
    parser.add_argument("--boot", type=int, default=5000, help="bootstrap resamples [5000]")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    cells = args.run / "cells"
    groups = args.groups or sorted(p.name for p in cells.iterdir() if (p / "auto").is_dir())
    for name in groups:
        s = spread(cells / name, args.boot, rng)
        stall = " ".join(f"{m} {v}" for m, v in s["stall"].items())
        print(f"{s['group']}: {s['seeds']} seeds, Auto {s['auto']:.4g}, floor {s['floor']:.4g}, "
              f"margin {s['margin']:+.2f} sd, p {s['p']:.2f}, P(meet) {s['P(meet)']:.2f}; "
              f"{s['tpe_seeds']} seeds, Auto {s['auto_vs_tpe']:.4g}, TPE {s['tpe']:.4g}, "
              f"P(TPE) {s['P(TPE)']:.2f}; stall: {stall}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
