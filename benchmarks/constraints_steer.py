"""What the constraint handling of :mod:`hdbo_engine.constraints` buys, and what it costs.

**Quality** (``--budget`` 50, ``--seeds`` 3): each engine algorithm minimises the D = 10
sphere ``sum (x_i - 0.3)^2`` on the unit cube under ``sum x_i >= 6``, which excludes the
sphere's centre; the constrained optimum is the projection of the centre onto the plane,
``f* = (6 - 3)^2 / 10 = 0.9``. Printed per algorithm: the median over seeds of the best
feasible value minus ``f*`` (``inf`` where a run found no feasible point) and the number of
runs that found one, with the full handling (``steer``: surrogate values, merit value and
proposal step) and without the proposal step (``no steer``: replaced by the identity), next
to random search.

**Cost** (``--cost``): CPU seconds of one :func:`~hdbo_engine.constraints.steer` call on
``--told`` [300] uniform points in ``--dim`` [124] dimensions with ``--constraints`` [68]
random linear constraints, each violated by about half the points (MOPTA08's size).

``--fit-points`` sets :data:`~hdbo_engine.constraints.FIT_POINTS` (the told points each
constraint GP's hyperparameters are fitted on) for both measurements.

Single process, one thread; CPU time (``time.process_time``):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/constraints_steer.py --budget 50 --seeds 3 --cost
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import hdbo_engine.base as base
import hdbo_engine.constraints as constraints
from hdbo_engine import get_algorithm
from hdbo_engine.constraints import steer

DIM, CENTRE, TOTAL = 10, 0.3, 6.0
F_STAR = (TOTAL - DIM * CENTRE) ** 2 / DIM


def gap(name: str, seed: int, budget: int) -> float:
    """Best feasible value minus f* after ``budget`` evaluations (inf: none feasible)."""
    opt = get_algorithm(name)(DIM, seed=seed, budget=budget)
    for _ in range(budget):
        (p,) = opt.ask()
        opt.tell(p.x, float(np.sum((p.x - CENTRE) ** 2)), constraints=[TOTAL - p.x.sum()])
    ok = opt.feasible & np.isfinite(opt.y)
    return float(opt.y[ok].min() - F_STAR) if ok.any() else float("inf")


def quality(algorithms: list[str], budget: int, seeds: int) -> None:
    identity: Callable[..., Any] = lambda X, C, incumbent, proposals, rng: proposals  # noqa: E731
    print("| algorithm | steer: median gap | feasible | no steer: median gap | feasible |")
    print("|---|---|---|---|---|")
    for name in algorithms:
        cells = []
        for step in (steer, identity):
            base.steer = step
            gaps = [gap(name, s, budget) for s in range(seeds)]
            cells += [f"{np.median(gaps):.4f}", f"{sum(np.isfinite(gaps))}/{seeds}"]
        base.steer = steer
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def cost(dim: int, told: int, m: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.random((told, dim))
    W = rng.normal(size=(dim, m))
    C = (X - 0.5) @ W  # each constraint violated by about half the points
    incumbent = X[int(np.argmin(np.maximum(C, 0).sum(axis=1)))]
    t0 = time.process_time()
    steer(X, C, incumbent, [(rng.random(dim), {})], rng)
    print(f"steer: D = {dim}, n = {told}, m = {m}: {time.process_time() - t0:.1f} CPU s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithms", default="random,msucb,cobbo,goucb,bkb,auto")
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--dim", type=int, default=124)
    parser.add_argument("--told", type=int, default=300)
    parser.add_argument("--constraints", type=int, default=68)
    parser.add_argument("--fit-points", type=int, default=constraints.FIT_POINTS)
    args = parser.parse_args()
    constraints.FIT_POINTS = args.fit_points
    with threadpool_limits(1):
        quality(args.algorithms.split(","), args.budget, args.seeds)
        if args.cost:
            cost(args.dim, args.told, args.constraints)


if __name__ == "__main__":
    main()
