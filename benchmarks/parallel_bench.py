"""Warm-start, rebuild-from-history and large-batch cost of the engine algorithms and Auto.

**Warm start** (``--dim`` 100, ``--told`` 300): an optimizer of each algorithm is told
``--told`` uniform random points of ``--problem`` without metas (a data set, enqueued
trials, another sampler's trials), then asks ``--live`` [5] + 1 times, each proposal told
with its meta. In CPU seconds: the tell of the points plus the first ask, the median of the
next ``--live`` asks, and the target ``3 x live + 1``; and whether an optimizer rebuilt
from the final history proposes what the live one does. Each algorithm first runs a small
untimed warm start (D = 5, 12 points), so that one-time costs of the process (imports,
torch's first optimiser: about 1 CPU s for GO-UCB and Auto) are not counted.

**Rebuild** (``--dim`` 100, ``--told`` 300): an optimizer of each algorithm is
told ``--told`` evaluations of ``--problem`` (Ackley): the first ``--told -
--asked`` are uniform random points told without an ask (a warm start, or
enqueued trials), the last ``--asked`` [20] come from the algorithm's own asks,
so their metas hold what it records at ask time. Then, in CPU seconds:

* ``ask``: the next ask of that optimizer (its state up to date: what a worker
  that keeps its sampler pays per trial);
* ``rebuild``: ``from_history(X, y, metas)`` plus its first ask (what a new
  process, or an Optuna worker that re-reads the study, pays once);

and whether the two proposed the same point (the exact-rebuild contract).

**Batch** (D = 3): an optimizer told ``--batch-told`` [12] uniform random
points of the problem; the CPU time of ``ask(--batch)`` [1000] and the number
of distinct points it returned.

Single process, one thread; CPU time (``time.process_time``), as in the
benchmark protocol of docs/ARCHITECTURE.md:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/parallel_bench.py --dim 100 --told 300 --batch 1000

(``--skip rebuild batch``: the warm start alone, as a Markdown table.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from hdbo_cli.problems import make_problem
from hdbo_engine import get_algorithm
from hdbo_engine.base import Optimizer

ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb", "auto")


def _cpu(fn: Any) -> tuple[Any, float]:
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def rebuild_row(name: str, dim: int, told: int, asked: int, problem: str, seed: int
                ) -> dict[str, Any]:
    """Build the history described in the module docstring; time one ask and a rebuild."""
    cls = get_algorithm(name)
    prob = make_problem(problem, dim)
    kwargs = {"seed": seed, "budget": told + 1}
    live: Optimizer = cls(dim, **kwargs)
    X = np.random.default_rng(seed).random((told - asked, dim))
    live.tell(X, prob.evaluate_unit(X))
    for _ in range(asked):
        (p,) = live.ask()
        live.tell(p.x, float(prob.evaluate_unit(p.x[None])[0]))
    (nxt,), ask_s = _cpu(live.ask)
    rebuilt, rebuild_s = _cpu(lambda: cls.from_history(dim, live.X, live.y, live.metas,
                                                        **kwargs).ask()[0])
    return {"ask_s": ask_s, "rebuild_s": rebuild_s, "ratio": rebuild_s / max(ask_s, 1e-9),
            "same_point": bool(np.array_equal(rebuilt.x, nxt.x))}


def warm_row(name: str, dim: int, told: int, live: int, problem: str,
             seed: int) -> dict[str, Any]:
    """Time the warm start described in the module docstring."""
    cls = get_algorithm(name)
    prob = make_problem(problem, dim)
    opt: Optimizer = cls(dim, seed=seed)
    X = np.random.default_rng(seed).random((told, dim))
    y = prob.evaluate_unit(X)

    def warm_start() -> list[Any]:
        opt.tell(X, y)
        return opt.ask()

    times = []
    for k in range(live + 1):
        (p,), seconds = _cpu(warm_start if k == 0 else opt.ask)
        times.append(seconds)
        opt.tell(p.x, float(prob.evaluate_unit(p.x[None])[0]), p.meta)
    nxt = opt.ask()[0]
    rebuilt = cls.from_history(dim, opt.X, opt.y, opt.metas, seed=seed).ask()[0]
    median = statistics.median(times[1:])
    return {"first_s": times[0], "live_s": median, "target_s": 3 * median + 1,
            "warm_same_point": bool(np.array_equal(rebuilt.x, nxt.x))}


def batch_row(name: str, n: int, told: int, problem: str, seed: int) -> dict[str, Any]:
    """CPU time of ask(n) at D = 3 after ``told`` uniform random evaluations."""
    opt: Optimizer = get_algorithm(name)(3, seed=seed)
    X = np.random.default_rng(seed).random((told, 3))
    opt.tell(X, make_problem(problem, 3).evaluate_unit(X))
    proposals, batch_s = _cpu(lambda: opt.ask(n))
    return {"batch_s": batch_s, "distinct": len({p.x.tobytes() for p in proposals}),
            "fillers": sum(bool(p.meta.get("batch_fill")) for p in proposals)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--told", type=int, default=300)
    parser.add_argument("--asked", type=int, default=20)
    parser.add_argument("--live", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--batch-told", type=int, default=12)
    parser.add_argument("--problem", default="ackley")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algorithms", nargs="*", default=list(ALGORITHMS))
    parser.add_argument("--skip", nargs="*", default=[], choices=["warm", "rebuild", "batch"])
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not 0 <= args.asked < args.told:
        parser.error(f"--asked: expected 0 <= asked < told, got {args.asked}")
    if args.live < 1:
        parser.error(f"--live: expected >= 1, got {args.live}")
    results: dict[str, dict[str, Any]] = {}
    for name in args.algorithms:
        try:
            get_algorithm(name)
        except ImportError as err:
            print(f"{name}: skipped ({err})", flush=True)
            continue
        row: dict[str, Any] = {}
        if "warm" not in args.skip:
            warm_row(name, 5, 12, 1, args.problem, args.seed)  # one-time costs (docstring)
            row.update(warm_row(name, args.dim, args.told, args.live, args.problem,
                                args.seed))
            print(f"{name}: warm start {row['first_s']:.2f} s, live ask {row['live_s']:.3f} s",
                  flush=True)
        if "batch" not in args.skip:
            row.update(batch_row(name, args.batch, args.batch_told, args.problem, args.seed))
            print(f"{name}: ask({args.batch}) {row['batch_s']:.2f} s", flush=True)
        if "rebuild" not in args.skip:
            row.update(rebuild_row(name, args.dim, args.told, args.asked, args.problem,
                                   args.seed))
            print(f"{name}: ask {row['ask_s']:.3f} s, rebuild {row['rebuild_s']:.3f} s",
                  flush=True)
        results[name] = row
    if "warm" not in args.skip:
        print(f"\nwarm start, D = {args.dim}, {args.told} points told without metas "
              f"({args.problem}, seed {args.seed}), CPU s\n")
        print(f"| algorithm | tell + first ask | live ask (median of {args.live}) "
              f"| 3 x live + 1 | rebuild proposes the same point |")
        print("|---|---:|---:|---:|---|")
        for name, r in results.items():
            print(f"| {name} | {r['first_s']:.2f} | {r['live_s']:.3f} | {r['target_s']:.2f} "
                  f"| {'yes' if r['warm_same_point'] else 'no'} |")
    if "rebuild" not in args.skip:
        print(f"\nrebuild vs one ask, D = {args.dim}, {args.told} told ({args.asked} asked), "
              f"CPU s")
        print(f"{'algorithm':<10} {'ask':>8} {'rebuild':>9} {'ratio':>7} {'same point':>11}")
        for name, r in results.items():
            print(f"{name:<10} {r['ask_s']:>8.3f} {r['rebuild_s']:>9.3f} {r['ratio']:>7.2f} "
                  f"{str(r['same_point']):>11}")
    if "batch" not in args.skip:
        print(f"\nask({args.batch}) at D = 3 after {args.batch_told} told, CPU s")
        print(f"{'algorithm':<10} {'ask(n)':>8} {'distinct':>9} {'fillers':>8}")
        for name, r in results.items():
            print(f"{name:<10} {r['batch_s']:>8.2f} {r['distinct']:>9} {r['fillers']:>8}")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results},
                                              indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
