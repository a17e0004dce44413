"""MS-UCB on the Ackley function in 20 dimensions, beside Optuna's RandomSampler."""

from __future__ import annotations

import math

import optuna

import optunahub

DIM = 20


def ackley(trial: optuna.Trial) -> float:
    """Ackley's function on [-5, 10]^20; its global minimum is 0, at the origin."""
    x = [trial.suggest_float(f"x{i}", -5.0, 10.0) for i in range(DIM)]
    mean_square = sum(v * v for v in x) / DIM
    mean_cos = sum(math.cos(2 * math.pi * v) for v in x) / DIM
    return -20 * math.exp(-0.2 * math.sqrt(mean_square)) - math.exp(mean_cos) + 20 + math.e


def main(n_trials: int = 100) -> optuna.Study:
    module = optunahub.load_module("samplers/hdbo_msucb")
    study = optuna.create_study(sampler=module.MSUCBSampler(seed=0, budget=n_trials))
    study.optimize(ackley, n_trials=n_trials)
    random_search = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    random_search.optimize(ackley, n_trials=n_trials)
    print(f"{n_trials} trials each: MS-UCB best {study.best_value:.3f}, "
          f"RandomSampler best {random_search.best_value:.3f} (the minimum is 0)")
    return study


if __name__ == "__main__":
    main()
