"""How a GP's noise estimate alone judges deterministic problems.

Auto judges noise from a replicate (``docs/algorithms/auto.md#noise``). The alternative is
to read the noise variance of a GP fitted to the told values (the
:data:`~hdbo_engine.algorithms.auto.RECOMMEND_MAX` nearest the best one) and call the
values noisy above :data:`~hdbo_engine.algorithms.auto.NOISY_VAR`, then recommend the told
point of lowest posterior 0.9 quantile. This script runs Auto told that the objective is
noisy (``noisy=True``: no replicate is made) for 500 evaluations on deterministic `hd`
problems (instance and method seed ``--seeds``) and prints, at evaluations 200, 300 and 500,
the estimate, the best told value and the value of the point that rule would recommend
(equal to the best told value where the estimate is below the threshold).

``--replicate-cost PROBLEM:D`` instead runs Auto as the bench does (``noisy=None``: one
replicate where the design looks noisy) and Auto told ``noisy=True`` (no replicate, otherwise
the same rules) on that deterministic problem, and prints the best value of each after 250
and 500 evaluations: what the replicate's evaluation costs the search.

Single process, one thread:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/noise_judgement.py --seeds 0,1
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/noise_judgement.py --replicate-cost lunar_lander:12 --seeds 5,6,7,8,9
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy.special import ndtri

from hdbo_cli.bench import make_bench_problem
from hdbo_engine import Auto
from hdbo_engine.algorithms.auto import NOISY_VAR, RECOMMEND_MAX, RECOMMEND_QUANTILE
from hdbo_engine.gp import GP

PROBLEMS = (("rotated_rastrigin", 100), ("lunar_lander", 12), ("shifted_levy", 100),
            ("swimmer", 16))
CHECKPOINTS = (200, 300, 500)


def judge(problem: str, dim: int, seed: int) -> dict[int, dict[str, float]]:
    """The estimate, the best told value and the estimate rule's value at each checkpoint."""
    bench = make_bench_problem(problem, dim, seed)
    opt = Auto(dim, seed=seed, budget=max(CHECKPOINTS), noisy=True)
    out = {}
    for k in range(1, max(CHECKPOINTS) + 1):
        (proposal,) = opt.ask()
        opt.tell(proposal.x, bench.evaluate_unit(proposal.x))
        if k in CHECKPOINTS:
            X, y = opt.X, opt.y
            near = np.argsort(np.abs(X - X[np.argmin(y)]).sum(axis=1),
                              kind="stable")[:RECOMMEND_MAX]
            gp = GP(dim).fit(X[near], y[near])
            noise_var = float(gp.params.noise_var)
            rule = float(y.min())
            if noise_var >= NOISY_VAR:
                mean, var = gp.predict(X[near])
                quantile = mean + ndtri(RECOMMEND_QUANTILE) * np.sqrt(np.maximum(var, 0.0))
                rule = float(y[near][int(np.argmin(quantile))])
            out[k] = {"noise_var": round(noise_var, 3), "best": round(float(y.min()), 2),
                      "estimate_rule": round(rule, 2)}
    return out


def replicate_cost(problem: str, dim: int, seed: int) -> dict[str, list[float]]:
    """Best told value after 250 and 500 evaluations, with and without the replicate."""
    bench = make_bench_problem(problem, dim, seed)
    out = {}
    for variant, noisy in (("replicate", None), ("none", True)):
        opt = Auto(dim, seed=seed, budget=500, noisy=noisy)
        for k in range(1, 501):
            (proposal,) = opt.ask()
            opt.tell(proposal.x, bench.evaluate_unit(proposal.x))
            if k in (250, 500):
                out.setdefault(variant, []).append(round(float(opt.y.min()), 2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1", help="comma-separated seeds [0,1]")
    parser.add_argument("--replicate-cost", metavar="PROBLEM:D", default=None,
                        help="compare Auto with and without its replicate on this problem")
    args = parser.parse_args()
    if args.replicate_cost:
        problem, dim = args.replicate_cost.split(":")
        for seed in (int(s) for s in args.seeds.split(",")):
            print(json.dumps({"problem": problem, "seed": seed,
                              "best_at_250_500": replicate_cost(problem, int(dim), seed)}),
                  flush=True)
        return
    for problem, dim in PROBLEMS:
        for seed in (int(s) for s in args.seeds.split(",")):
            print(json.dumps({"problem": problem, "seed": seed,
                              "at": judge(problem, dim, seed)}), flush=True)


if __name__ == "__main__":
    main()
