"""GO-UCB benchmarks: the paper's synthetic experiments (Sec. 6.1) and a scale run.

Liu & Wang, "Global Optimization with Parametric Function Approximation",
Sec. 6.1: three 20-D functions on [-5, 5]^20, maximised in the paper and
minimised here (negated):

* ``f1`` (realizable): the paper's model with every weight and bias 1,
  ``f1(x) = 25 sigmoid(sum(x) + 1) + 1``; n = 5, T = 25.
* ``f2`` Styblinski-Tang, ``f3`` Rastrigin (misspecified); n = 8, T = 64.

Each method gets ``n + T`` evaluations, the first ``n`` uniform (same
initial design size for GO-UCB and GP-UCB; the same seed gives both the same
initial points). GO-UCB's horizon (``budget``, the T of its lambda and beta_t)
is ``n + T``; everything else is at its defaults. Reported: cumulative regret
``sum_t f(x_t) - f_min`` over all evaluations, mean and the paper's error bar
``1.96 sd / sqrt(seeds)``, plus the median best value, and the sampler time.

Usage (one thread each, niced, as the shared machine asks)::

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/goucb_bench.py synthetic
    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/goucb_bench.py acquisition
    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/goucb_bench.py scale --dim 200 --evals 200
    OMP_NUM_THREADS=1 python benchmarks/goucb_bench.py variants --problem shifted_ackley \
        --dim 100 --evals 500 --seeds 0 '{}' '{"beta_scale": 10}'

``variants`` runs GO-UCB with each JSON dict of constructor options on a
problem of ``hdbo_engine.problems`` (the ``hd`` suite's instances) and prints
the median best value after 100, 200, 300 and ``evals`` evaluations and the
mean ask time.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hdbo_engine.algorithms import get_algorithm  # noqa: E402

LOW, HIGH, DIM = -5.0, 5.0, 20


def f1(X: np.ndarray) -> np.ndarray:
    """Minus the paper's realizable f1 (all weights 1): -(25 sigmoid(sum x + 1) + 1)."""
    return -(25.0 / (1.0 + np.exp(-(X.sum(1) + 1.0))) + 1.0)


def f2(X: np.ndarray) -> np.ndarray:
    """Styblinski-Tang, 0.5 sum(x^4 - 16 x^2 + 5 x) (minus the paper's f2)."""
    return 0.5 * (X**4 - 16 * X**2 + 5 * X).sum(1)


def f3(X: np.ndarray) -> np.ndarray:
    """Rastrigin on [-5, 5]^D, 10 D + sum(x^2 - 10 cos(2 pi x)) (minus the paper's f3)."""
    return 10.0 * X.shape[1] + (X**2 - 10.0 * np.cos(2 * np.pi * X)).sum(1)


# name: (function, minimum value on [-5, 5]^20, n, T)
PROBLEMS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float, int, int]] = {
    "f1": (f1, -(25.0 / (1.0 + np.exp(-(5.0 * DIM + 1.0))) + 1.0), 5, 25),
    "f2": (f2, -39.16616570377142 * DIM, 8, 64),
    "f3": (f3, 0.0, 8, 64),
}


def run_one(method: str, problem: str, seed: int, **kwargs: object) -> dict:
    """One run; returns values, cumulative regret and sampler time."""
    f, fmin, n, T = PROBLEMS[problem]
    budget = n + T
    cls = get_algorithm(method)
    opt = cls(DIM, seed=seed, budget=budget, n_init=n, **kwargs)
    ys, ask_time = [], 0.0
    for _ in range(budget):
        t0 = time.perf_counter()
        (p,) = opt.ask()
        ask_time += time.perf_counter() - t0
        y = float(f(LOW + (HIGH - LOW) * p.x[None])[0])
        opt.tell(p.x, y)
        ys.append(y)
    ys_arr = np.array(ys)
    return {"method": method, "problem": problem, "seed": seed, "values": ys,
            "cum_regret": float(np.sum(ys_arr - fmin)), "best": float(ys_arr.min()),
            "ask_time": ask_time}


def summarise(rows: list[dict], label: str = "method") -> None:
    keys = sorted({(r["problem"], r[label]) for r in rows})
    print(f"{'problem':8s} {label:22s} {'cum. regret (mean +- 1.96sd/sqrt(k))':>38s} "
          f"{'median best':>12s} {'ask s/run':>10s}")
    for prob, m in keys:
        sel = [r for r in rows if r["problem"] == prob and r[label] == m]
        cr = np.array([r["cum_regret"] for r in sel])
        half = 1.96 * cr.std(ddof=1) / np.sqrt(len(cr)) if len(cr) > 1 else 0.0
        print(f"{prob:8s} {str(m):22s} {cr.mean():24.1f} +- {half:9.1f} "
              f"{np.median([r['best'] for r in sel]):12.2f} "
              f"{np.median([r['ask_time'] for r in sel]):10.2f}")


def synthetic(args: argparse.Namespace) -> None:
    rows = []
    for problem in args.problems:
        for method in args.methods:
            for seed in range(args.seeds):
                row = run_one(method, problem, seed)
                rows.append(row)
                print(f"{problem} {method} seed={seed} cum_regret={row['cum_regret']:.1f} "
                      f"best={row['best']:.2f} ask={row['ask_time']:.1f}s", flush=True)
    summarise(rows)
    _dump(args, rows)


def acquisition(args: argparse.Namespace) -> None:
    """GO-UCB step 5: closed-form linearised inner maximum vs the paper's joint ascent."""
    rows = []
    for problem in args.problems:
        for acq in ("linearized", "joint"):
            for seed in range(args.seeds):
                row = run_one("goucb", problem, seed, acquisition=acq)
                row["acquisition"] = acq
                rows.append(row)
                print(f"{problem} {acq} seed={seed} cum_regret={row['cum_regret']:.1f} "
                      f"best={row['best']:.2f} ask={row['ask_time']:.1f}s", flush=True)
    summarise(rows, label="acquisition")
    _dump(args, rows)


def scale(args: argparse.Namespace) -> None:
    """GO-UCB at dimension ``dim`` for ``evals`` evaluations: time and peak memory."""
    import torch  # noqa: F401  (counted in the baseline, not in the run)

    from hdbo_engine.problems import make_problem

    prob = make_problem(args.problem, args.dim)
    opt = get_algorithm("goucb")(args.dim, seed=0, budget=args.evals)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    ask_times = []
    for _ in range(args.evals):
        t1 = time.perf_counter()
        (p,) = opt.ask()
        ask_times.append(time.perf_counter() - t1)
        opt.tell(p.x, float(prob.evaluate_unit(p.x)[0]))
    total = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t1 = time.perf_counter()
    rebuilt = get_algorithm("goucb").from_history(args.dim, opt.X, opt.y, opt.metas, seed=0,
                                                  budget=args.evals)
    rebuilt.ask()
    rebuild = time.perf_counter() - t1
    print(f"GO-UCB {args.problem} D={args.dim} d_w={opt.d_w} evals={args.evals} "
          f"n_init={opt.n_init}: total {total:.1f} s, median ask {np.median(ask_times):.3f} s, "
          f"max ask {max(ask_times):.3f} s; peak RSS {peak:.0f} MiB "
          f"(after imports and construction {rss0:.0f} MiB); rebuild + ask {rebuild:.1f} s; "
          f"best {opt.best[1]:.2f} (f_min {prob.f_min:.2f})")


def variants(args: argparse.Namespace) -> None:
    """GO-UCB with each JSON dict of options in ``args.options`` on one problem."""
    import torch

    from hdbo_engine.problems import make_problem

    torch.set_num_threads(1)
    marks = [k for k in (100, 200, 300) if k < args.evals] + [args.evals]
    for spec in args.options:
        kwargs = json.loads(spec)
        finals, times = [], []
        for seed in args.seeds:
            prob = make_problem(args.problem, args.dim, seed)
            opt = get_algorithm("goucb")(args.dim, seed=seed, budget=args.evals, **kwargs)
            best = []
            for _ in range(args.evals):
                t0 = time.process_time()
                (p,) = opt.ask()
                times.append(time.process_time() - t0)
                opt.tell(p.x, float(prob.evaluate_unit(p.x[None])[0]))
                best.append(opt.best[1])
            finals.append([best[k - 1] for k in marks])
        med = np.median(np.array(finals), axis=0)
        print(f"{args.problem} {spec}: median best at {marks}: "
              + " ".join(f"{v:.4g}" for v in med)
              + " | per seed: " + " ".join(f"{f[-1]:.4g}" for f in finals)
              + f" | mean ask {np.mean(times):.3f} CPU s", flush=True)


def _dump(args: argparse.Namespace, rows: list[dict]) -> None:
    if args.out:
        Path(args.out).write_text(json.dumps(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("synthetic", "acquisition"):
        p = sub.add_parser(name)
        p.add_argument("--problems", nargs="+", default=["f1", "f2", "f3"], choices=PROBLEMS)
        p.add_argument("--seeds", type=int, default=5)
        p.add_argument("--out", default="")
        if name == "synthetic":
            p.add_argument("--methods", nargs="+", default=["goucb", "gpucb", "random"])
    p = sub.add_parser("scale")
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--evals", type=int, default=200)
    p.add_argument("--problem", default="styblinski_tang")
    p = sub.add_parser("variants")
    p.add_argument("--problem", default="shifted_ackley")
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--evals", type=int, default=500)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("options", nargs="+", help="JSON dicts of GOUCB options")
    args = ap.parse_args()
    {"synthetic": synthetic, "acquisition": acquisition, "scale": scale,
     "variants": variants}[args.cmd](args)


if __name__ == "__main__":
    main()
