"""CobBO on 50 parameters of which 5 matter: the backoff rule learns which ones to move."""

from __future__ import annotations

import optuna

import optunahub

DIM, ACTIVE = 50, 5
TARGET = 0.2


def sparse_quadratic(trial: optuna.Trial) -> float:
    """Squared distance of x0..x4 from 0.2; the other 45 parameters barely count."""
    x = [trial.suggest_float(f"x{i:02d}", 0.0, 1.0) for i in range(DIM)]
    return sum((v - TARGET) ** 2 for v in x[:ACTIVE]) + 1e-4 * sum(x[ACTIVE:])


def main(n_trials: int = 150) -> optuna.Study:
    sampler = optunahub.load_module("samplers/hdbo_cobbo").CobBOSampler(seed=0, budget=n_trials)
    study = optuna.create_study(sampler=sampler)
    study.optimize(sparse_quadratic, n_trials=n_trials)
    active = {name: round(value, 3) for name, value in sorted(study.best_params.items())[:ACTIVE]}
    print(f"best {study.best_value:.4f} after {n_trials} trials; x0..x4 = {active} "
          f"(optimum: all {TARGET})")
    return study


if __name__ == "__main__":
    main()
