"""Optimizer overhead of the hdbo skopt adapters vs ``skopt.Optimizer(base_estimator="gp")``.

One process, same problem (Ackley in 20-D by default), same initial design
size, 100 evaluations each: times every ``ask`` and every ``tell`` (the
objective excluded) and reports medians and totals as ratios to skopt's GP
optimizer. skopt fits its GP and optimises the acquisition inside ``tell``;
the hdbo optimizers do their work inside ``ask`` (``tell`` only records), so
the fair per-evaluation figure is ask + tell, reported alongside both parts.

Run (single-threaded BLAS, as every figure in this repo):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/skopt_overhead.py [--dim 20] [--n-calls 100] [--seed 0] \\
        [--algorithms msucb cobbo goucb bkb] [--plot objective.png] [--json out.json]

Algorithms whose engine module is missing are skipped. ``--plot`` saves
``skopt.plots.plot_objective`` of the first hdbo result (first 4 dimensions).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from skopt import Optimizer as SkoptOptimizer

from hdbo_adapters.skopt import HDBOOptimizer
from hdbo_cli.problems import make_problem
from hdbo_engine import get_algorithm


def run(make_opt, func, n_calls: int) -> tuple[np.ndarray, np.ndarray, object]:
    """Sequential ask/tell loop; per-evaluation ask and tell times and the last result."""
    opt = make_opt()
    ask_t, tell_t = [], []
    result = None
    for _ in range(n_calls):
        t0 = time.perf_counter()
        x = opt.ask()
        t1 = time.perf_counter()
        y = func(x)
        t2 = time.perf_counter()
        result = opt.tell(x, y)
        t3 = time.perf_counter()
        ask_t.append(t1 - t0)
        tell_t.append(t3 - t2)
    return np.array(ask_t), np.array(tell_t), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="ackley")
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--n-calls", type=int, default=100)
    parser.add_argument("--n-initial-points", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algorithms", nargs="+", default=["msucb", "cobbo", "goucb", "bkb"])
    parser.add_argument("--plot", default=None, help="save plot_objective of an hdbo result")
    parser.add_argument("--json", default=None, help="write the measurements here")
    args = parser.parse_args()

    problem = make_problem(args.problem, args.dim)
    dims = [(float(lo), float(hi)) for lo, hi in zip(problem.lower, problem.upper, strict=True)]

    def func(x: list[float]) -> float:
        return float(problem(np.asarray(x))[0])

    makers = {"skopt-gp": lambda: SkoptOptimizer(dims, base_estimator="gp",
                                                 n_initial_points=args.n_initial_points,
                                                 random_state=args.seed)}
    for name in args.algorithms:
        try:
            get_algorithm(name)
        except ImportError:
            print(f"skipping {name}: not installed")
            continue
        makers[name] = (lambda n=name: HDBOOptimizer(dims, n,
                                                     n_initial_points=args.n_initial_points,
                                                     random_state=args.seed))

    rows, results = {}, {}
    for name, make in makers.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ask_t, tell_t, res = run(make, func, args.n_calls)
        model = slice(args.n_initial_points, None)  # model-based evaluations only
        total = ask_t + tell_t
        rows[name] = {"ask_median_s": float(np.median(ask_t[model])),
                      "tell_median_s": float(np.median(tell_t[model])),
                      "per_eval_median_s": float(np.median(total[model])),
                      "total_s": float(total.sum()), "best": float(res.fun)}
        results[name] = res
        print(f"{name:>9}: median ask {rows[name]['ask_median_s']:.4f}s, "
              f"tell {rows[name]['tell_median_s']:.4f}s, total {rows[name]['total_s']:.1f}s, "
              f"best {res.fun:.3f}", flush=True)

    ref = rows["skopt-gp"]
    print(f"\n{args.problem} D={args.dim}, {args.n_calls} evaluations, "
          f"{args.n_initial_points} initial, seed {args.seed}; ratios to skopt-gp "
          "(< 1 means less overhead than skopt)")
    print(f"{'optimizer':>9} | {'tell':>8} | {'ask+tell':>8} | {'total':>8}")
    for name, r in rows.items():
        r["ratio_tell"] = r["tell_median_s"] / ref["tell_median_s"]
        r["ratio_per_eval"] = r["per_eval_median_s"] / ref["per_eval_median_s"]
        r["ratio_total"] = r["total_s"] / ref["total_s"]
        print(f"{name:>9} | {r['ratio_tell']:8.4f} | {r['ratio_per_eval']:8.3f} | "
              f"{r['ratio_total']:8.3f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "rows": rows}, fh, indent=2)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from skopt.plots import plot_objective

        name = next(n for n in results if n != "skopt-gp")
        axes = plot_objective(results[name], plot_dims=[0, 1, 2, 3])
        np.ravel(axes)[0].figure.savefig(args.plot, dpi=80)
        print(f"plot_objective of the {name} result: {args.plot}")


if __name__ == "__main__":
    main()
