"""Is the axis design worth its evaluations at large D? The design-size rule's axis pass
against a short design of the algorithm's uniform size, both with the centre first.

For each seed, ``--algorithm`` [cobbo] minimises ``--problem`` [scattered_hartmann6]
(instance ``seed``) at ``--dim`` [5000] for ``--budget`` [500] evaluations twice: with the
design-size rule's ``n_init`` (``min(2 D + 1, budget // 4)`` axis points) and with
``n_init`` = the algorithm's uniform design size (the rest of the budget goes to the model).
Printed: the best value of each run, the centre's value, the design's length (the rule's
``n_init``, or 21 where the pass's first ten coordinates found no effect) and the optimizer's
CPU seconds (one thread, the objective excluded):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/large_d_design.py --dim 5000 --budget 500 --seeds 0 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hdbo_cli.problems import make_problem
from hdbo_engine import get_algorithm


def run(name: str, problem: str, dim: int, budget: int, seed: int,
        n_init: int | None) -> tuple[float, float, int]:
    """Best value, optimizer CPU seconds and design length of one run."""
    prob = make_problem(problem, dim, seed)
    opt = get_algorithm(name)(dim, seed=seed, budget=budget,
                              **({} if n_init is None else {"n_init": n_init}))
    cpu = 0.0
    while opt.n_told < budget:
        t0 = time.process_time()
        (p,) = opt.ask()
        cpu += time.process_time() - t0
        y = float(prob.evaluate_unit(p.x[None])[0])
        t0 = time.process_time()
        opt.tell(p.x, y, p.meta)
        cpu += time.process_time() - t0
    return float(np.nanmin(opt.y)), cpu, opt._design_length()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="cobbo")
    parser.add_argument("--problem", default="scattered_hartmann6")
    parser.add_argument("--dim", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args(argv)
    short = get_algorithm(args.algorithm).default_n_init
    print("| seed | centre | axis design (length) | best | CPU s | short design (length) "
          "| best | CPU s |\n|---|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for seed in args.seeds:
        centre = float(make_problem(args.problem, args.dim, seed).evaluate_unit(
            np.full((1, args.dim), 0.5))[0])
        axis = run(args.algorithm, args.problem, args.dim, args.budget, seed, None)
        small = run(args.algorithm, args.problem, args.dim, args.budget, seed, short)
        print(f"| {seed} | {centre:.4f} | {axis[2]} | {axis[0]:.4f} | {axis[1]:.0f} | "
              f"{small[2]} | {small[0]:.4f} | {small[1]:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
