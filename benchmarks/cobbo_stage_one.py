"""CobBO's two assemblies of stage 1 on one run (docs/algorithms/cobbo.md, "Large D").

Above ``CACHED_DISTANCES_DIM`` CobBO solves its RBF interpolant from squared distances cached
as points are told; up to it, scipy's ``RBFInterpolator`` builds it from the coordinates.
One run of CobBO on ``scattered_hartmann6`` (the bench's construction) with ``--stage-one``:

* ``compare``: the cached assembly, and at every ``--every``-th ask after the design both
  assemblies' stage-1 data for the current pivot and block: whether the points are the same,
  and the largest relative difference of the values and of the extra noise;
* ``cached`` or ``scipy``: that assembly throughout, whatever D.

Prints the best value every 100 evaluations, then the final best and the optimizer's CPU s:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/cobbo_stage_one.py \\
        --dim 5000 --seed 0 --budget 500 --stage-one compare
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from hdbo_cli.bench import make_bench_problem
from hdbo_engine.algorithms.cobbo import CobBO, PairwiseDistances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--stage-one", choices=["compare", "cached", "scipy"],
                        default="compare")
    args = parser.parse_args()
    prob = make_bench_problem("scattered_hartmann6", args.dim, args.seed)
    cpu = 0.0
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # beyond the measured scale
        opt = CobBO(args.dim, seed=args.seed, budget=args.budget)
        opt.distances = None if args.stage_one == "scipy" else PairwiseDistances()
        for t in range(args.budget):
            if (args.stage_one == "compare" and opt.pivot is not None and t > opt.n_init
                    and t % args.every == 0):
                V, C = opt.X[opt.pivot], opt.block
                cached = opt._subspace_data(V, C)
                kept, opt.distances = opt.distances, None
                scipy = opt._subspace_data(V, C)
                opt.distances = kept
                rel = np.max(np.abs(cached[1] - scipy[1]) / np.maximum(np.abs(scipy[1]), 1e-300))
                print(f"ask {t}: same points {np.array_equal(cached[0], scipy[0])}, "
                      f"values {rel:.2e}, extra noise {np.max(np.abs(cached[2] - scipy[2])):.2e}")
            start = time.process_time()
            (p,) = opt.ask()
            cpu += time.process_time() - start
            y = prob.evaluate_unit(p.x)
            start = time.process_time()
            opt.tell(p.x, y, p.meta)
            cpu += time.process_time() - start
            if (t + 1) % 100 == 0:
                print(f"evaluation {t + 1}: best {opt.best[1]:.4f}", flush=True)
    print(f"{args.stage_one}: best {opt.best[1]:.4f}, optimizer CPU {cpu:.0f} s")


if __name__ == "__main__":
    main()
