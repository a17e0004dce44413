"""Probe (session 16, issue 18): a line search after the axis design, outside the engine.

``python benchmarks/design_line_search_probe.py ALGO PROBLEM DIM SEED [--budget B] [--out F]``
    Runs ``ALGO`` (engine name, default options) on the bench's ``PROBLEM``
    instance ``SEED`` for ``B`` evaluations (default 500) in an ask/tell loop
    that, once the initial design is told, evaluates a few points along the
    design's finite-difference descent direction and tells them too, then
    asks the algorithm for the rest. Prints the best value after the design,
    after the line search and at the end; ``--out`` appends them as a JSON line.

The slope of coordinate j comes from the design's axis probes (metas
``{"axis": [k, sign]}``): the plus probe against the point it stepped from
or, where both signs were probed, their central difference; unprobed
coordinates get 0. The direction d is minus the slopes, scaled to a largest
entry of 1; the steps are best + s d for s = 1/6, 1/3, 2/3 (kept while they
improve) and then 1/12, 1/24 when none of the long steps did.

Kept because its numbers are in BENCHMARKS.md (preface, session 16): the
line search is a candidate for the design itself (``hdbo_engine/base.py``,
"Initial design"), not yet part of it.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from hdbo_cli.bench import make_bench_problem
from hdbo_engine import get_algorithm

STEPS = (1 / 6, 1 / 3, 2 / 3, 1 / 12, 1 / 24)  # line-search steps, as fractions of the box


def design_slopes(X: list[np.ndarray], y: list[float], metas: list[dict[str, Any]]
                  ) -> np.ndarray:
    """Finite-difference slope per coordinate from the design's axis probes (0 if unprobed)."""
    slopes = np.zeros(X[0].shape[0])
    best_x, best_y = X[0], y[0]
    plus: dict[int, tuple[float, float]] = {}
    for x, value, meta in zip(X[1:], y[1:], metas[1:], strict=True):
        if "axis" in meta:
            j = int(np.flatnonzero(np.abs(x - best_x) > 1e-12)[0])
            step = x[j] - best_x[j]
            if meta["axis"][1] == 1:
                plus[j] = (step, value)
                slopes[j] = (value - best_y) / step
            elif j in plus:
                plus_step, plus_value = plus[j]
                slopes[j] = (plus_value - value) / (plus_step - step)
        if value < best_y:
            best_x, best_y = x, value
    return slopes


def run(algo: str, problem: str, dim: int, seed: int, budget: int) -> dict[str, Any]:
    """One run of the probe; the best values after the design, the line search and the end."""
    prob = make_bench_problem(problem, dim, seed)
    opt = get_algorithm(algo)(dim, seed=seed, budget=budget)
    X: list[np.ndarray] = []
    y: list[float] = []
    metas: list[dict[str, Any]] = []

    def evaluate(x: np.ndarray, meta: dict[str, Any]) -> float:
        value = float(prob.evaluate_unit(x))
        opt.tell(x, value)
        X.append(x.copy())
        y.append(value)
        metas.append(meta)
        return value

    start = time.process_time()
    while len(y) < min(opt.n_init, budget):
        (proposal,) = opt.ask()
        evaluate(proposal.x, proposal.meta)
    n_design = len(y)
    direction = -design_slopes(X, y, metas)
    direction /= max(float(np.abs(direction).max()), 1e-12)
    best = int(np.argmin(y))
    best_x, best_y = X[best], y[best]
    for step in STEPS:
        if len(y) >= budget:
            break
        value = evaluate(np.clip(best_x + step * direction, 0.0, 1.0), {"line_search": step})
        if value < best_y:
            best_x, best_y = X[-1], value
        elif step >= STEPS[0] and best_y < min(y[:n_design]):
            break  # a long step improved and the next one did not
    n_search = len(y) - n_design
    while len(y) < budget:
        (proposal,) = opt.ask()
        evaluate(proposal.x, proposal.meta)
    return {"algo": algo, "problem": problem, "dim": dim, "seed": seed, "budget": budget,
            "after_design": min(y[:n_design]), "after_line_search": min(y[:n_design + n_search]),
            "line_search_evaluations": n_search, "best": min(y),
            "cpu_s": time.process_time() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algo")
    parser.add_argument("problem")
    parser.add_argument("dim", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--out", help="append the result as a JSON line to this file")
    args = parser.parse_args()
    row = run(args.algo, args.problem, args.dim, args.seed, args.budget)
    print(json.dumps(row))
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
