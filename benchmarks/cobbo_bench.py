"""CobBO benchmarks (issue 3): quality, ask-time ratio and a long Ackley-200D run.

Run from the repository root with one BLAS thread, e.g.::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/cobbo_bench.py quality --problem rastrigin --dim 50 \\
        --evals 500 --seeds 0 1 2 3 4 --methods cobbo random gpucb

Subcommands (all minimise; values are the benchmark's own scale):

* ``quality``: best value after ``--evals`` sequential evaluations per method
  and seed; prints one row per run and a summary (median, IQR, median
  seconds per run). All methods use the same seeds and ``n_init`` = 20.
* ``asktime``: for each dimension, tells ``--history`` uniform random
  evaluated points to CobBO and to GP-UCB, makes one untimed ask/tell each
  (it triggers the hyperparameter refits the history needs), then times
  ``--asks`` ask/tell cycles, alternating between the two methods so both
  see the same machine load, and prints the median ask time of each method
  and their ratio, all in one process.
* ``long``: one CobBO run; prints the final best value, total wall time and
  the peak resident memory of the process (``resource.getrusage``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from hdbo_engine.algorithms import get_algorithm
from hdbo_engine.problems import make_problem


def run_once(method: str, problem: str, dim: int, evals: int, seed: int,
             n_init: int, report_every: int = 0) -> tuple[float, float, np.ndarray]:
    """One sequential run; returns best value, wall seconds and the ask times.

    ``report_every > 0`` prints progress (evaluations, best, seconds, peak memory).
    """
    prob = make_problem(problem, dim)
    opt = get_algorithm(method)(dim, seed=seed, budget=evals, n_init=n_init)
    times = []
    t0 = time.perf_counter()
    for _ in range(evals):
        a = time.perf_counter()
        (p,) = opt.ask()
        times.append(time.perf_counter() - a)
        opt.tell(p.x, float(prob.evaluate_unit(p.x)[0]))
        if report_every and opt.n_told % report_every == 0:
            print(f"  {opt.n_told:6d} evals  best {opt.best[1]:.4f}  "
                  f"{time.perf_counter() - t0:8.1f} s  peak {peak_mib():.0f} MiB", flush=True)
    return opt.best[1], time.perf_counter() - t0, np.array(times)


def peak_mib() -> float:
    """Peak resident memory of this process in MiB (``resource.getrusage``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2**20 if sys.platform == "darwin" else 2**10)  # bytes on macOS, KiB on Linux


def cmd_quality(args: argparse.Namespace) -> None:
    results: dict[str, list[tuple[float, float]]] = {m: [] for m in args.methods}
    print(f"# {args.problem}-{args.dim}D, {args.evals} evaluations, n_init={args.n_init}")
    print(f"{'method':8s} {'seed':>4s} {'best':>12s} {'seconds':>9s}")
    for seed in args.seeds:
        for m in args.methods:
            best, secs, _ = run_once(m, args.problem, args.dim, args.evals, seed, args.n_init)
            results[m].append((best, secs))
            print(f"{m:8s} {seed:4d} {best:12.4f} {secs:9.1f}", flush=True)
    print(f"\n{'method':8s} {'median':>10s} {'q25':>10s} {'q75':>10s} {'med s/run':>10s}  n")
    for m, rows in results.items():
        v = np.array([r[0] for r in rows])
        s = np.array([r[1] for r in rows])
        q25, med, q75 = np.percentile(v, [25, 50, 75])
        print(f"{m:8s} {med:10.3f} {q25:10.3f} {q75:10.3f} {np.median(s):10.1f}  {len(v)}")


def cmd_asktime(args: argparse.Namespace) -> None:
    print(f"# {args.problem}: median ask time after {args.history} evaluations "
          f"({args.asks} timed asks each)")
    print(f"{'D':>5s} {'cobbo ms':>10s} {'gpucb ms':>10s} {'gpucb/cobbo':>12s}")
    for dim in args.dims:
        prob = make_problem(args.problem, dim)
        rng = np.random.default_rng(args.seed)
        X = rng.random((args.history, dim))
        y = prob.evaluate_unit(X)
        opts = {}
        for m in ("cobbo", "gpucb"):
            opts[m] = get_algorithm(m)(dim, seed=args.seed,
                                       budget=args.history + args.asks + 1)
            opts[m].tell(X, y)
        times: dict[str, list[float]] = {m: [] for m in opts}
        for k in range(args.asks + 1):  # interleaved, so both see the same machine load
            for m, opt in opts.items():
                a = time.perf_counter()
                (p,) = opt.ask()
                if k:
                    times[m].append(time.perf_counter() - a)
                opt.tell(p.x, float(prob.evaluate_unit(p.x)[0]))
        med = {m: float(np.median(t)) for m, t in times.items()}
        print(f"{dim:5d} {1e3 * med['cobbo']:10.1f} {1e3 * med['gpucb']:10.1f} "
              f"{med['gpucb'] / med['cobbo']:12.1f}", flush=True)


def cmd_long(args: argparse.Namespace) -> None:
    print(f"# cobbo {args.problem}-{args.dim}D, {args.evals} evaluations, seed {args.seed}",
          flush=True)
    best, secs, times = run_once("cobbo", args.problem, args.dim, args.evals, args.seed,
                                 args.n_init, args.report_every)
    print(f"final best      {best:.4f}")
    print(f"total time      {secs:.1f} s (median ask {1e3 * np.median(times):.1f} ms, "
          f"max ask {1e3 * times.max():.1f} ms)")
    print(f"peak memory     {peak_mib():.1f} MiB (process RSS)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality", help="best value after a budget, several methods and seeds")
    q.add_argument("--problem", default="rastrigin")
    q.add_argument("--dim", type=int, default=50)
    q.add_argument("--evals", type=int, default=500)
    q.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    q.add_argument("--methods", nargs="+", default=["cobbo", "random", "gpucb"])
    q.add_argument("--n-init", type=int, default=20)
    t = sub.add_parser("asktime", help="median ask time, CobBO vs GP-UCB, in one process")
    t.add_argument("--problem", default="rastrigin")
    t.add_argument("--dims", type=int, nargs="+", default=[50, 200])
    t.add_argument("--history", type=int, default=500)
    t.add_argument("--asks", type=int, default=10)
    t.add_argument("--seed", type=int, default=0)
    lg = sub.add_parser("long", help="one long CobBO run: value, time, peak memory")
    lg.add_argument("--problem", default="ackley")
    lg.add_argument("--dim", type=int, default=200)
    lg.add_argument("--evals", type=int, default=2000)
    lg.add_argument("--seed", type=int, default=0)
    lg.add_argument("--n-init", type=int, default=20)
    lg.add_argument("--report-every", type=int, default=100)
    args = parser.parse_args(argv)
    {"quality": cmd_quality, "asktime": cmd_asktime, "long": cmd_long}[args.cmd](args)


if __name__ == "__main__":
    main()
