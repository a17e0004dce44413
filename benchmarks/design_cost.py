"""What Auto's design costs and brings where it runs COBYLA, against COBYLA from the centre.

Reads `hdbo bench` cells. NGOpt runs COBYLA from the centre of the box for the whole
budget on a bounded, continuous, noise-free problem with fewer than 200 evaluations per
dimension; Auto runs its design (``n_init`` points, then a line search of 2-5) and COBYLA
from the design's best point for the rest. For each group with both, per seed: NGOpt at
the budget less Auto's ``n_init`` (COBYLA from the centre with about the evaluations that
Auto's COBYLA gets: what the design's start is worth) and at the budget (the whole trade).
Usage:

    python benchmarks/design_cost.py hdbo_runs/bench-bbob-instances --seeds 100-104

Prints, per group, ``n_init``, the medians of Auto, of NGOpt at the budget less ``n_init``
and of NGOpt at the budget, and on how many seeds Auto's value is below each of NGOpt's.
Noisy groups are skipped: NGOpt does not run COBYLA there.
"""

from __future__ import annotations

import statistics

from cell_args import parse_cell_args

from hdbo_cli.report import load_results
from hdbo_engine.algorithms.auto import Auto

AUTO, CENTRE = "auto", "ng-ngopt"


def main() -> None:
    run, seeds, _ = parse_cell_args(__doc__.splitlines()[0], None)
    for group in load_results(run):
        if group.noise or not all(m in group.runs for m in (AUTO, CENTRE)):
            continue
        n_init = Auto.preset_n_init(dim=group.dim, budget=group.budget)
        rows = []
        for seed in seeds:
            if seed not in group.runs[AUTO] or seed not in group.runs[CENTRE]:
                continue
            auto, centre = group.runs[AUTO][seed], group.runs[CENTRE][seed]
            if centre.evaluations < group.budget:
                continue  # stopped early: no value at the budget to compare
            rows.append((auto.final, centre.value_at(group.budget - n_init), centre.final))
        if not rows:
            continue
        auto_med, short_med, full_med = (statistics.median(r[i] for r in rows) for i in range(3))
        short_wins = sum(a < s for a, s, _ in rows)
        full_wins = sum(a < f for a, _, f in rows)
        print(f"{group.name:36s} n_init {n_init:3d}: Auto {auto_med:.4g}; NGOpt at "
              f"{group.budget - n_init} {short_med:.4g}, at {group.budget} {full_med:.4g}; "
              f"Auto below them on {short_wins} / {full_wins} of {len(rows)} seeds")


if __name__ == "__main__":
    main()
