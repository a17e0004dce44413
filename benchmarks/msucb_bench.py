"""MS-UCB figures for the foundation issue (run from the repo root).

    python benchmarks/msucb_bench.py quality            # Ackley-50D, Hartmann6-in-100D, 200 evals
    python benchmarks/msucb_bench.py asktime            # median ask time at D=100 over 200 evals
    python benchmarks/msucb_bench.py scale              # D=1000, d=10, 300 evals: time, peak memory

Quality: best value after the budget, median and IQR over seeds, same seeds
and initial design for every method (DESIGN.md benchmark protocol).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from hdbo_adapters.cli import run_engine


def _quality(args: argparse.Namespace) -> None:
    for problem, dim in [(p, {"ackley": 50, "hartmann6": 100}[p]) for p in args.problems]:
        for algo in ("random", "msucb"):
            best = [run_engine(algo, problem, dim, args.budget, seed, progress=False)["best"]
                    for seed in range(args.seeds)]
            q1, med, q3 = np.percentile(best, [25, 50, 75])
            print(f"{problem}-{dim}D {algo:<7} median {med:.4f} IQR [{q1:.4f}, {q3:.4f}] "
                  f"seeds {np.round(best, 4).tolist()}", flush=True)


def _asktime(args: argparse.Namespace) -> None:
    res = run_engine("msucb", "ackley", 100, args.budget, 0, progress=False)
    times = np.array(res["ask_times"])
    print(f"msucb ackley-100D: median ask {np.median(times):.4f}s over {args.budget} asks "
          f"(model phase only: {np.median(times[20:]):.4f}s), total {res['total_time']:.1f}s")


def _scale(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    res = run_engine("msucb", "ackley", 1000, args.budget, 0, progress=True, d=10)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"msucb d=10 ackley-1000D, {args.budget} evals: best {res['best']:.4f}, total "
          f"{time.perf_counter() - start:.1f}s, median ask {np.median(res['ask_times']):.3f}s, "
          f"peak RSS {peak_mib:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["quality", "asktime", "scale"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--problems", nargs="+", default=["ackley", "hartmann6"],
                        choices=["ackley", "hartmann6"])
    args = parser.parse_args()
    args.budget = args.budget or {"quality": 200, "asktime": 200, "scale": 300}[args.what]
    {"quality": _quality, "asktime": _asktime, "scale": _scale}[args.what](args)


if __name__ == "__main__":
    main()
