"""GO-UCB on a mixed search space: log-scale, stepped, integer and categorical parameters."""

from __future__ import annotations

import math

import optuna

import optunahub

ACTIVATION_PENALTY = {"relu": 0.1, "tanh": 0.3, "gelu": 0.0}


def validation_loss(trial: optuna.Trial) -> float:
    """A made-up loss, lowest (0) at learning_rate=1e-3, 4 layers, width 256, dropout 0.1, gelu."""
    learning_rate = trial.suggest_float("learning_rate", 1e-5, 1e-1, log=True)
    n_layers = trial.suggest_int("n_layers", 1, 8)
    width = trial.suggest_int("width", 16, 512, step=16)
    dropout = trial.suggest_float("dropout", 0.0, 0.5, step=0.05)
    activation = trial.suggest_categorical("activation", list(ACTIVATION_PENALTY))
    return ((math.log10(learning_rate) + 3) ** 2 + 0.1 * (n_layers - 4) ** 2
            + ((width - 256) / 256) ** 2 + 4 * (dropout - 0.1) ** 2
            + ACTIVATION_PENALTY[activation])


def main(n_trials: int = 60) -> optuna.Study:
    module = optunahub.load_module("samplers/hdbo_goucb")
    study = optuna.create_study(sampler=module.GOUCBSampler(seed=0, budget=n_trials))
    study.optimize(validation_loss, n_trials=n_trials)
    print(f"best loss {study.best_value:.4f} at {study.best_params}")
    return study


if __name__ == "__main__":
    main()
