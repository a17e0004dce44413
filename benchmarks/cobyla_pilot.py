"""Could a pilot tell where Auto's COBYLA phase should run? Reads `hdbo bench` cells.

For each group and seed, compares `auto-cobyla` (the design, then COBYLA) with the best of
the four members alone (`msucb`, `cobbo`, `goucb`, `bkb`), each run on its own, at the end
of the budget and at earlier evaluations. An evidence-based rule that ran both for a while
and kept the leader could at best pick the final winner where the leader at that evaluation
is the final one; this counts those seeds. Usage:

    python benchmarks/cobyla_pilot.py hdbo_runs/bench-hd-fresh --seeds 100-104 \
        --at 200,250,300,350

Noisy groups are compared on the noise-free value of each cell's recommendation, as
``hdbo report`` scores them. Prints, per group, one word per seed: the final winner (C:
COBYLA at most the best member, M: a member better), then the leader at each evaluation of
``--at``; and how many seeds the leader at each evaluation names the final winner.
"""

from __future__ import annotations

from cell_args import parse_cell_args

from hdbo_cli.report import SINGLE_ALGORITHMS, CellRun, load_results

COBYLA = "auto-cobyla"


def leader(runs: dict[str, CellRun], evaluation: int | None) -> str:
    """``C`` if COBYLA's value at ``evaluation`` (None: the end) is at most every member's,
    ``runs`` each method's cell of one seed (a noisy cell: its recommendation's noise-free
    value, as the report scores it)."""
    def at(method: str) -> float:
        run = runs[method]
        return run.value_at(run.evaluations if evaluation is None else evaluation)
    return "C" if at(COBYLA) <= min(at(m) for m in SINGLE_ALGORITHMS) else "M"


def main() -> None:
    run, seeds, evaluations = parse_cell_args(__doc__.splitlines()[0], "200,250,300,350")
    at = ",".join(map(str, evaluations))
    agree_total = dict.fromkeys(evaluations, 0)
    for group in load_results(run):
        if not all(m in group.runs for m in (COBYLA, *SINGLE_ALGORITHMS)):
            continue
        words, agree = [], dict.fromkeys(evaluations, 0)
        for seed in seeds:
            runs = {m: group.runs[m][seed] for m in (COBYLA, *SINGLE_ALGORITHMS)}
            final = leader(runs, None)
            early = [leader(runs, e) for e in evaluations]
            words.append(final + "".join(early))
            for e, lead in zip(evaluations, early, strict=True):
                agree[e] += lead == final
        for e in evaluations:
            agree_total[e] += agree[e]
        counts = " / ".join(str(agree[e]) for e in evaluations)
        print(f"{group.name:40s} {' '.join(words)}   leader names the winner: {counts}")
    total = " / ".join(str(agree_total[e]) for e in evaluations)
    print(f"{'all groups':40s} leader at {at} names the winner: {total}")


if __name__ == "__main__":
    main()
