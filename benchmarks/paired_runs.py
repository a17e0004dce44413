"""A variant's cells against the cells of the same method and seeds in a run folder.

A change to an engine algorithm is measured by running `hdbo bench` with the changed code into
a folder of its own (named ``...-pair`` so that the tables skip it) and comparing each of its
cells with the cell of the same group, method and seed in the folder it would replace. Usage:

    python benchmarks/paired_runs.py hdbo_runs/bench-hd-fresh \\
        hdbo_runs/bench-hd-fresh-noisy-pmi-pair --method auto

A change that reaches several methods (Auto's design reaches Auto and ``auto-cobyla``, its
part that runs the design and COBYLA alone) names them all, ``--method auto,auto-cobyla``:
each is compared (its lines start with its name) and the counts take all of them in place.

Prints, per group, the final value of each seed before -> after (noisy groups: the
noise-free value of the final recommendation, as ``hdbo report`` scores them) and the
medians; then how many runs the variant made better, worse and equal (within the report's
relative ``SAME_RUN_RTOL``), the
one-sided sign test's chance of at least that many better runs among the unequal ones, and,
for ``--method auto``, the counts of ``hdbo report``'s Targets with the variant's cells in
place of the folder's: groups where Auto beats every listed peer (those won in at least 60%
of bootstrap resamples in brackets), groups where it is at most its best part's median (firm
ones in brackets) and at most its parts' median, and its leads at evaluations 50 / 100 / 200.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import Counter
from pathlib import Path

from hdbo_cli.report import (
    BOOTSTRAP_WIN,
    CHECKPOINTS,
    SAME_RUN_RTOL,
    GroupStats,
    load_results,
    targets,
)


def sign_test(better: int, worse: int) -> float:
    """P(at least ``better`` of ``better + worse`` fair coin flips come up better)."""
    n = better + worse
    return sum(math.comb(n, k) for k in range(better, n + 1)) / 2**n if n else 1.0


def compare(base: dict[str, GroupStats], variant: list[GroupStats], method: str
            ) -> tuple[list[str], Counter[str]]:
    """Per-group lines and how many runs the variant made ``"better"``, ``"worse"`` and
    ``"equal"``, over the seeds both folders have."""
    lines: list[str] = []
    tally: Counter[str] = Counter()
    for g in variant:
        if not g.runs.get(method) or g.name not in base:
            continue
        before_runs = base[g.name].runs.get(method, {})
        seeds = sorted(s for s in g.runs[method] if s in before_runs)
        if not seeds:
            continue
        before = [before_runs[s].final for s in seeds]
        after = [g.runs[method][s].final for s in seeds]
        for a, b in zip(before, after, strict=True):
            same = math.isclose(a, b, rel_tol=SAME_RUN_RTOL)
            tally["equal" if same else "better" if b < a else "worse"] += 1
        lines.append(f"{g.name}, seeds {seeds[0]}-{seeds[-1]}: "
                     f"{' / '.join(f'{v:.4g}' for v in before)} -> "
                     f"{' / '.join(f'{v:.4g}' for v in after)} (median "
                     f"{statistics.median(before):.4g} -> {statistics.median(after):.4g})")
    return lines, tally


def counts(groups: list[GroupStats]) -> str:
    """``hdbo report``'s Targets counts for ``groups`` (module docstring)."""
    tg = targets(groups)
    verdicts, parts = tg["auto"], tg["auto_parts"]
    won = sum(v["status"] == "won" for v in verdicts.values())
    firm = sum(v["status"] == "won" and (v.get("share") or 0.0) >= BOOTSTRAP_WIN
               for v in verdicts.values())
    best = sum(v["best"] for v in parts.values())
    best_firm = sum(v["best"] and v["share"] >= BOOTSTRAP_WIN for v in parts.values())
    median = sum(v["median"] for v in parts.values())
    leads = " / ".join(str(sum(tg["auto_leads"][k].values())) for k in CHECKPOINTS)
    return (f"every peer beaten on {won} of {len(verdicts)} groups ({firm} firm); at most the "
            f"best part on {best} of {len(parts)} ({best_firm} firm), at most the parts' median "
            f"on {median}; leads at evaluations {' / '.join(map(str, CHECKPOINTS))}: {leads}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the hdbo bench folder the variant would change")
    parser.add_argument("variant", type=Path, help="the variant's hdbo bench folder")
    parser.add_argument("--method", default="auto",
                        help="the method the variant changes, or several separated by commas")
    args = parser.parse_args()
    methods = args.method.split(",")
    groups = load_results(args.base)
    base = {g.name: g for g in groups}
    variant = load_results(args.variant)
    tally: Counter[str] = Counter()
    for method in methods:
        lines, found = compare(base, variant, method)
        tally += found
        for line in lines:
            print(f"{method}: {line}" if len(methods) > 1 else line)
    print(f"better {tally['better']}, worse {tally['worse']}, equal {tally['equal']}; "
          f"one-sided sign test {sign_test(tally['better'], tally['worse']):.3g}")
    if "auto" in methods:
        print(f"{args.base} as it is: {counts(groups)}")
        for g in variant:
            for method in methods:
                if g.name in base and method in base[g.name].runs:
                    base[g.name].runs[method].update(g.runs.get(method, {}))
        print(f"with the variant's cells: {counts(groups)}")


if __name__ == "__main__":
    main()
