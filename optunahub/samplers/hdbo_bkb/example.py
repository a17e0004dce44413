"""BKB maximising a 10-dimensional objective (the negated Styblinski-Tang function)."""

from __future__ import annotations

import optuna

import optunahub

DIM = 10
MAXIMUM = 39.16599 * DIM  # at x_i = -2.903534 for every i


def negated_styblinski_tang(trial: optuna.Trial) -> float:
    x = [trial.suggest_float(f"x{i}", -5.0, 5.0) for i in range(DIM)]
    return -0.5 * sum(v**4 - 16 * v**2 + 5 * v for v in x)


def main(n_trials: int = 120) -> optuna.Study:
    module = optunahub.load_module("samplers/hdbo_bkb")
    study = optuna.create_study(direction="maximize",
                                sampler=module.BKBSampler(seed=0, budget=n_trials))
    study.optimize(negated_styblinski_tang, n_trials=n_trials)
    print(f"best {study.best_value:.2f} of a possible {MAXIMUM:.2f} in {n_trials} trials")
    return study


if __name__ == "__main__":
    main()
