"""Where COBYLA from the centre of the box goes: its best value and how far its best point
lies from the box's diagonal. Usage:

    python benchmarks/centre_cobyla.py ackley 100 500 --seeds 100-100 --at 101,150,300,500

Runs SciPy's COBYLA (the engine's ask/tell wrapper, the radius Auto uses) from the centre of
the unit cube on a bench function for ``BUDGET`` evaluations, as NGOpt does on a bounded,
noise-free problem, and prints at each evaluation of ``--at`` the best value so far, the
standard deviation of that point's unit-cube coordinates about their mean (0 on the
diagonal) and their mean.
"""

from __future__ import annotations

import numpy as np
from cell_args import problem_parser, seed_range

from hdbo_cli.functions import make_function
from hdbo_engine.algorithms.auto import COBYLA_RHOBEG
from hdbo_engine.cobyla import AskTellCobyla


def main() -> None:
    parser = problem_parser(__doc__.splitlines()[0])
    parser.add_argument("--at", default="101,150,300,500", help="evaluations to print at")
    args = parser.parse_args()
    at = {int(e) for e in args.at.split(",")}
    for seed in seed_range(args.seeds):
        problem = make_function(args.problem, args.dim, seed)
        if problem is None:
            parser.error(f"problem: no bench function named {args.problem!r}")
        run = AskTellCobyla(np.full(args.dim, 0.5), rhobeg=COBYLA_RHOBEG, max_evals=args.budget)
        best_value, best_x = np.inf, None
        for n in range(1, args.budget + 1):
            if run.point is None:
                break
            x = run.point.copy()
            value = float(problem.evaluate_unit(x[None])[0])
            run.tell(value)
            if value < best_value:
                best_value, best_x = value, x
            if n in at:
                print(f"{args.problem} D = {args.dim}, seed {seed}, evaluation {n}: best "
                      f"{best_value:.4g}, coordinates' spread {best_x.std():.4f} about "
                      f"their mean {best_x.mean():.3f}")


if __name__ == "__main__":
    main()
