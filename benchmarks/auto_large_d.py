"""Auto's four members against CobBO alone at large D (docs/algorithms/auto.md, "Large D").

Each run is one process on one thread: the bench's construction of the problem, the engine
optimizer with the given seed and budget, and every evaluation told in turn. Prints one
line per run: the best value, the optimizer's CPU seconds and the process's peak resident
memory.

    OMP_NUM_THREADS=1 python benchmarks/auto_large_d.py --dims 1000 2000 5000 --seeds 0
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

FOUR = ["goucb", "msucb", "bkb", "cobbo"]


def run_one(method: str, problem: str, dim: int, seed: int, budget: int) -> None:
    """One run in this process; prints a JSON line."""
    from threadpoolctl import threadpool_limits

    from hdbo_cli.bench import make_bench_problem
    from hdbo_engine import get_algorithm

    prob = make_bench_problem(problem, dim, seed)
    overrides = {"members": FOUR} if method == "auto-four" else {}
    name = "auto" if method == "auto-four" else method
    with threadpool_limits(1):
        opt = get_algorithm(name)(dim, seed=seed, budget=budget, **overrides)
        cpu = 0.0
        for _ in range(budget):
            start = time.process_time()
            (p,) = opt.ask()
            cpu += time.process_time() - start
            y = prob.evaluate_unit(p.x)
            start = time.process_time()
            opt.tell(p.x, y)
            cpu += time.process_time() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"method": method, "problem": problem, "dim": dim, "seed": seed,
                      "budget": budget, "best": opt.best[1], "optimizer_cpu_s": round(cpu, 1),
                      "peak_rss_mib": round(peak_mib)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[1000, 2000, 5000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--problem", default="scattered_hartmann6")
    parser.add_argument("--methods", nargs="+", default=["auto-four", "cobbo"],
                        help="'auto-four' is Auto with its four members at any D")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.methods[0], args.problem, args.dims[0], args.seeds[0], args.budget)
        return
    for dim in args.dims:
        for seed in args.seeds:
            for method in args.methods:
                subprocess.run([sys.executable, __file__, "--one", "--methods", method,
                                "--problem", args.problem, "--dims", str(dim), "--seeds",
                                str(seed), "--budget", str(args.budget)], check=True)


if __name__ == "__main__":
    main()
