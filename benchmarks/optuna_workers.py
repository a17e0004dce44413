"""Auto through Optuna, one trial at a time or in synchronous rounds of ``--workers`` trials.

`hdbo bench` asks the engine directly; a user asks through the Optuna sampler, where the
first trial is sampled before the search space is known and every trial asked while others
run is a salted ask with those trials pending. This runs `AutoSampler` over a bench
problem's unit cube (one `FloatDistribution(0, 1)` per coordinate) as a user would, asking
``--workers`` trials (`study.ask`) before telling them, and prints the best value at
evaluations 50, 100, 200 and the budget, how many of the first 130 trials were axis probes,
and the process's CPU seconds; on a noisy problem also the noise-free values of
`study.best_trial` and of `sampler.recommended_trial(study)`. ``--uniform-first`` passes the
sampler its own `TrialSeededRandomSampler`, so the first trial is a uniform draw instead of
the centre. ``--threads`` runs `study.optimize(n_jobs=workers)` instead, each evaluation
0.02 s longer so that the threads' trials overlap (asynchronous workers; best values in
trial-number order). Usage:

    python benchmarks/optuna_workers.py shifted_levy 100 500 --seeds 100-102 --workers 8
"""

from __future__ import annotations

import time

import numpy as np
import optuna
from cell_args import problem_parser, seed_range

from hdbo_adapters.optuna import ATTR_PROPOSAL, AutoSampler, TrialSeededRandomSampler
from hdbo_cli.bench import make_bench_problem

CHECKPOINTS = (50, 100, 200)


def run(problem_name: str, dim: int, budget: int, seed: int, workers: int,
        uniform_first: bool, threads: bool) -> str:
    problem = make_bench_problem(problem_name, dim, seed)
    names = [f"x{i:04d}" for i in range(dim)]
    space = {n: optuna.distributions.FloatDistribution(0.0, 1.0) for n in names}
    own = {"independent_sampler": TrialSeededRandomSampler(seed)} if uniform_first else {}
    study = optuna.create_study(sampler=AutoSampler(seed=seed, budget=budget, **own))
    start = time.process_time()
    if threads:
        def objective(trial: optuna.Trial) -> float:
            x = np.array([trial.suggest_float(n, 0.0, 1.0) for n in names])
            time.sleep(0.02)  # so that the threads' trials overlap
            return problem.evaluate_unit(x)

        study.optimize(objective, n_trials=budget, n_jobs=workers)
    else:
        told = 0
        while told < budget:
            trials = [study.ask(fixed_distributions=space)
                      for _ in range(min(workers, budget - told))]
            for trial in trials:
                study.tell(trial, problem.evaluate_unit(
                    np.array([trial.params[n] for n in names])))
                told += 1
    best = np.minimum.accumulate([t.value for t in study.get_trials(deepcopy=False)])
    trace = {c: best[c - 1] for c in (*CHECKPOINTS, budget)}
    metas = [(t.system_attrs.get(ATTR_PROPOSAL) or {}).get("meta", {})
             for t in study.get_trials(deepcopy=False)[:130]]
    at = ", ".join(f"{k}: {v:.4g}" for k, v in trace.items())
    cpu = time.process_time() - start
    noise_free = ""
    if problem.evaluate_true_unit is not None:  # a noisy problem: score the two picks
        picks = {"best trial": study.best_trial, "recommended trial":
                 study.sampler.recommended_trial(study)}
        noise_free = "; noise-free value of the " + ", ".join(
            f"{k} {problem.evaluate_true_unit(np.array([t.params[n] for n in names])):.4g}"
            for k, t in picks.items())
    return (f"{problem_name} D={dim} seed {seed}, {workers} worker(s): best at {at}; "
            f"axis probes {sum('axis' in m for m in metas)} of the first 130; "
            f"CPU {cpu:.1f} s{noise_free}")


def main() -> None:
    parser = problem_parser(__doc__.splitlines()[0], "trials asked per round", 1)
    parser.add_argument("--uniform-first", action="store_true",
                        help="the first trial a uniform draw, not the centre")
    parser.add_argument("--threads", action="store_true",
                        help="study.optimize with n_jobs=workers instead of rounds")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for seed in seed_range(args.seeds):
        print(run(args.problem, args.dim, args.budget, seed, args.workers,
                  args.uniform_first, args.threads), flush=True)

if __name__ == "__main__":
    main()
