"""Does the member that leads early end best? Reads `hdbo bench` cells of the members alone.

For each group with cells of the four members alone (`msucb`, `cobbo`, `goucb`, `bkb`), each
run on its own, finds the member with the lowest median over the seeds at each evaluation of
``--at`` and at the end of the budget, and per seed the member that leads at each evaluation
and the one that ends best. A choice among the members driven by how their proposals did so
far can at best follow the early leader; where the early leader is not the final best, that
choice is led away from the member it would need. It also counts the seeds whose member last
at each evaluation ends best: a choice that drops the trailing member (successive rejects,
Audibert & Bubeck, COLT 2010) would drop that seed's best. Usage:

    python benchmarks/member_leader.py hdbo_runs/bench-hd-fresh --seeds 100-104 --at 200,300

Noisy groups are compared on the noise-free value of each cell's recommendation, as
``hdbo report`` scores them. Prints, per group, the median leader at each evaluation and at
the end, and on how many seeds the leader, and the last, at each evaluation is the seed's
final best.
"""

from __future__ import annotations

import statistics

from cell_args import parse_cell_args

from hdbo_cli.report import SINGLE_ALGORITHMS, CellRun, load_results


def lowest(values: dict[str, float]) -> str:
    """The key of the lowest value (the first listed on ties)."""
    return min(values, key=lambda name: values[name])


def highest(values: dict[str, float]) -> str:
    """The key of the highest value (the first listed on ties)."""
    return max(values, key=lambda name: values[name])


def value(runs: dict[str, dict[int, CellRun]], member: str, seed: int,
          evaluation: int | None) -> float:
    """``member``'s value on ``seed`` after ``evaluation`` evaluations (None: the end)."""
    run = runs[member][seed]
    return run.value_at(run.evaluations if evaluation is None else evaluation)


def main() -> None:
    run, seeds, evaluations = parse_cell_args(__doc__.splitlines()[0], "200,300")
    at = ",".join(map(str, evaluations))
    same_median = same_total = 0
    agree_total = dict.fromkeys(evaluations, 0)
    last_total = dict.fromkeys(evaluations, 0)
    for group in load_results(run):
        if not all(m in group.runs and all(s in group.runs[m] for s in seeds)
                   for m in SINGLE_ALGORITHMS):
            continue
        runs: dict[str, dict[int, CellRun]] = {m: group.runs[m] for m in SINGLE_ALGORITHMS}
        medians = [lowest({m: statistics.median(value(runs, m, s, e) for s in seeds)
                           for m in SINGLE_ALGORITHMS}) for e in (*evaluations, None)]
        agree, last = dict.fromkeys(evaluations, 0), dict.fromkeys(evaluations, 0)
        for seed in seeds:
            final = lowest({m: value(runs, m, seed, None) for m in SINGLE_ALGORITHMS})
            for e in evaluations:
                then = {m: value(runs, m, seed, e) for m in SINGLE_ALGORITHMS}
                agree[e] += lowest(then) == final
                last[e] += highest(then) == final
        for e in evaluations:
            agree_total[e] += agree[e]
            last_total[e] += last[e]
        same_median += medians[0] == medians[-1]
        same_total += 1
        leaders = " -> ".join(medians)
        counts = " / ".join(str(agree[e]) for e in evaluations)
        lasts = " / ".join(str(last[e]) for e in evaluations)
        print(f"{group.name:40s} median leader at {at}, end: {leaders:30s} "
              f"seeds whose leader ends best: {counts}; whose last: {lasts}")
    total = " / ".join(str(agree_total[e]) for e in evaluations)
    lasts = " / ".join(str(last_total[e]) for e in evaluations)
    print(f"{'all groups':40s} median leader at {evaluations[0]} ends best on {same_median} "
          f"of {same_total} groups; seeds whose leader at {at} ends best: {total} of "
          f"{same_total * len(seeds)}; whose last: {lasts}")


if __name__ == "__main__":
    main()
