"""What Auto's noise estimate makes of deterministic problems.

With ``noisy=None`` (the default) :meth:`hdbo_engine.Auto.recommend` calls the told values
noisy when a GP fitted to them (the :data:`~hdbo_engine.algorithms.auto.RECOMMEND_MAX`
nearest the best one) estimates a noise variance of at least
:data:`~hdbo_engine.algorithms.auto.NOISY_VAR`, and then recommends the told point of lowest
posterior 0.9 quantile instead of the best one. This script runs Auto for 500 evaluations
on deterministic `hd` problems (instance and method seed ``--seeds``) and prints, at
evaluations 200, 300 and 500, the GP's noise variance, the best told value and the value
of the point ``recommend()`` returns.

Single process, one thread:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/noise_judgement.py --seeds 0,1
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from hdbo_cli.bench import make_bench_problem
from hdbo_engine import Auto
from hdbo_engine.algorithms.auto import RECOMMEND_MAX
from hdbo_engine.gp import GP

PROBLEMS = (("rotated_rastrigin", 100), ("lunar_lander", 12), ("shifted_levy", 100),
            ("swimmer", 16))
CHECKPOINTS = (200, 300, 500)


def judge(problem: str, dim: int, seed: int) -> dict[int, dict[str, float]]:
    """The noise estimate, the best told value and the recommendation's value."""
    bench = make_bench_problem(problem, dim, seed)
    opt = Auto(dim, seed=seed, budget=max(CHECKPOINTS))
    out = {}
    for k in range(1, max(CHECKPOINTS) + 1):
        (proposal,) = opt.ask()
        opt.tell(proposal.x, bench.evaluate_unit(proposal.x))
        if k in CHECKPOINTS:
            X, y = opt.X, opt.y
            near = np.argsort(np.abs(X - X[np.argmin(y)]).sum(axis=1),
                              kind="stable")[:RECOMMEND_MAX]
            noise_var = float(GP(dim).fit(X[near], y[near]).params.noise_var)
            recommended = int(np.flatnonzero((X == opt.recommend()).all(axis=1))[0])
            out[k] = {"noise_var": round(noise_var, 3), "best": round(float(y.min()), 2),
                      "recommended": round(float(y[recommended]), 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1", help="comma-separated seeds [0,1]")
    args = parser.parse_args()
    for problem, dim in PROBLEMS:
        for seed in (int(s) for s in args.seeds.split(",")):
            print(json.dumps({"problem": problem, "seed": seed,
                              "at": judge(problem, dim, seed)}), flush=True)


if __name__ == "__main__":
    main()
