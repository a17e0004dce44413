"""Which told point Auto should recommend when the objective is noisy.

Runs :class:`~hdbo_engine.Auto` for ``--budget`` [500] evaluations on each of the `hd`
suite's noisy problems (``noisy_lunar_lander`` at D = 12, ``noisy_shifted_ackley`` at
D = 100; instance and method seed ``--seeds``; told ``noisy=True``, so no replicate is
made), then scores candidate recommendation rules
on the same history by the noise-free value of the point each recommends (lower is better):

* ``best``: the lowest noisy value told;
* ``mean``: the lowest posterior mean of a GP fitted to the told points nearest the best
  one (:data:`~hdbo_engine.algorithms.auto.RECOMMEND_MAX` of them);
* ``q<z>``: the lowest posterior quantile ``mu + z sigma`` on the same GP (z = 1.28 is the
  0.9 quantile that :meth:`Auto.recommend` uses).

Single process, one thread; prints one line per problem and seed, then the medians:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/noisy_recommendation.py --seeds 0,1,2
"""

from __future__ import annotations

import argparse

import numpy as np

from hdbo_cli.bench import make_bench_problem
from hdbo_engine import Auto
from hdbo_engine.algorithms.auto import RECOMMEND_MAX
from hdbo_engine.gp import GP

PROBLEMS = (("noisy_lunar_lander", 12), ("noisy_shifted_ackley", 100))
QUANTILES = (1.0, 1.28, 2.0)


def rule_values(problem: str, dim: int, budget: int, seed: int) -> dict[str, float]:
    """The noise-free value of each rule's recommendation after one run of Auto."""
    bench = make_bench_problem(problem, dim, seed)
    assert bench.evaluate_true_unit is not None
    opt = Auto(dim, seed=seed, budget=budget, noisy=True)
    for _ in range(budget):
        (proposal,) = opt.ask()
        opt.tell(proposal.x, bench.evaluate_unit(proposal.x))
    X, y = opt.X, opt.y
    best = int(np.argmin(y))
    near = np.argsort(np.abs(X - X[best]).sum(axis=1), kind="stable")[:RECOMMEND_MAX]
    mean, var = GP(dim).fit(X[near], y[near]).predict(X[near])
    sd = np.sqrt(np.maximum(var, 0.0))
    picks = {"best": X[best], "mean": X[near][int(np.argmin(mean))]}
    picks |= {f"q{z}": X[near][int(np.argmin(mean + z * sd))] for z in QUANTILES}
    return {rule: bench.evaluate_true_unit(x) for rule, x in picks.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds [0,1,2]")
    parser.add_argument("--budget", type=int, default=500, help="evaluations per run [500]")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    for problem, dim in PROBLEMS:
        rows = []
        for seed in seeds:
            values = rule_values(problem, dim, args.budget, seed)
            rows.append(values)
            print(problem, seed, {k: round(v, 2) for k, v in values.items()}, flush=True)
        medians = {k: round(float(np.median([r[k] for r in rows])), 2) for k in rows[0]}
        print(problem, "median", medians, flush=True)


if __name__ == "__main__":
    main()
