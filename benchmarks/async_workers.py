"""Auto with asynchronous workers: a fixed number of points in flight, each asked alone.

`hdbo bench` drives workers as synchronous batches; this drives them as Optuna's `n_jobs`
or Ray Tune do, asking one point whenever one is told, the oldest told first. In Auto's
COBYLA phase one worker's asks then go to COBYLA and the others' to the members. Builds
each problem and Auto as `hdbo bench` does and prints the best value after the budget and
how many points COBYLA and the members proposed, and how many of the first 130 points were
axis probes. ``--salted-rounds`` drives synchronous rounds instead, each of ``--workers``
single asks salted by the point's number with the round's earlier points pending, as the
Optuna sampler asks beside running trials. Usage:

    python benchmarks/async_workers.py shifted_levy 100 500 --seeds 100-101 --workers 2
"""

from __future__ import annotations

from collections import deque

import numpy as np
from cell_args import problem_parser, seed_range

from hdbo_cli.bench import make_bench_problem, make_runner

MEMBERS = ("msucb", "cobbo", "goucb", "bkb")


def main() -> None:
    parser = problem_parser(__doc__.splitlines()[0], "points in flight", 2)
    parser.add_argument("--salted-rounds", action="store_true",
                        help="synchronous rounds of salted single asks")
    args = parser.parse_args()
    for seed in seed_range(args.seeds):
        problem = make_bench_problem(args.problem, args.dim, seed)
        auto = make_runner("auto", args.dim, args.budget, seed, 1).recommend.__self__
        flight, told = deque(), 0
        while told < args.budget:
            if args.salted_rounds:
                flight.extend(auto.ask(salt=told + i)[0]
                              for i in range(min(args.workers, args.budget - told)))
            while len(flight) < args.workers and told + len(flight) < args.budget:
                flight.extend(auto.ask())
            while flight:
                point = flight.popleft()
                auto.tell(point.x, problem.evaluate_unit(point.x), point.meta)
                told += 1
                if not args.salted_rounds:
                    break
        names = [m.get("algorithm") for m in auto.metas]
        print(f"{args.problem} D={args.dim} seed {seed}: best {float(np.min(auto.y)):.4g}, "
              f"COBYLA {names.count('cobyla')} points, members "
              f"{sum(n in MEMBERS for n in names)}, axis probes "
              f"{sum('axis' in m for m in auto.metas[:130])} of the first 130")


if __name__ == "__main__":
    main()
