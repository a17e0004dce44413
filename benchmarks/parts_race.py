"""Could a race among Auto's parts reach the best part? Reads `hdbo bench` cells.

A race runs each part (the four members alone and `auto-cobyla`, where the group has their
cells) for ``L`` evaluations after the shared design, keeps the one whose best told value is
lowest at that point, and gives it the rest of the budget. Its value on a seed is read from
the parts' own cells: the leader at its evaluation ``n_init + L`` (the design's size, Auto's
``n_init``), continued on its own run to evaluation
``budget - (k - 1) L`` for ``k`` parts, since the pilot spent ``(k - 1) L`` evaluations on the
others. The parts' runs are independent, so the race here shares no model between them: it is
what evidence from the parts' own progress can pick, with nothing else changed. Usage:

    python benchmarks/parts_race.py hdbo_runs/bench-hd-fresh --seeds 100-104 --at 25,50,100

Noisy groups pick the leader by its best noisy value (what a race can see) and score the
noise-free value of the recommendation, as ``hdbo report`` does. Prints, per group, Auto's
median, the best part's median and each race's median over the seeds, then how many groups
each is at most the best part's median on, and on how many seeds the race's leader is the part
that ends best.
"""

from __future__ import annotations

import numpy as np
from cell_args import parse_cell_args

from hdbo_cli.report import SINGLE_ALGORITHMS, load_results
from hdbo_engine.registry import get_algorithm

COBYLA = "auto-cobyla"


def main() -> None:
    run, seeds, pilots = parse_cell_args(__doc__.splitlines()[0], "25,50,100")
    met = dict.fromkeys(["auto", *pilots], 0)
    right = dict.fromkeys(pilots, 0)  # seeds whose leader is the part that ends best
    n_groups = 0
    for group in load_results(run):
        parts = [m for m in (*SINGLE_ALGORITHMS, COBYLA) if m in group.runs]
        if "auto" not in group.runs or len(parts) < 2 or not all(
                seed in group.runs[m] for m in ("auto", *parts) for seed in seeds):
            continue
        n_groups += 1
        budget = group.budget
        start = get_algorithm("auto").preset_n_init("practical", group.dim, budget)
        finals = {m: float(np.median([group.runs[m][s].value_at(budget) for s in seeds]))
                  for m in ("auto", *parts)}
        best_part = min(parts, key=finals.__getitem__)
        line = (f"{group.name:38s} auto {finals['auto']:9.4g}   best part "
                f"{finals[best_part]:9.4g} ({best_part})")
        met["auto"] += finals["auto"] <= finals[best_part]
        for pilot in pilots:
            values = []
            for seed in seeds:
                runs = {m: group.runs[m][seed] for m in parts}
                leader = min(parts, key=lambda m: runs[m].curve[start + pilot - 1])
                right[pilot] += leader == min(parts, key=lambda m: runs[m].value_at(budget))
                values.append(runs[leader].value_at(budget - (len(parts) - 1) * pilot))
            race = float(np.median(values))
            met[pilot] += race <= finals[best_part]
            line += f"   race L={pilot} {race:9.4g}"
        print(line)
    counts = ", ".join(f"race L={p} {met[p]}" for p in pilots)
    print(f"at most the best part's median, of {n_groups} groups: auto {met['auto']}, {counts}")
    picks = ", ".join(f"L={p} {right[p]}" for p in pilots)
    print(f"the leader is the part that ends best, of {n_groups * len(seeds)} seeds: {picks}")


if __name__ == "__main__":
    main()
