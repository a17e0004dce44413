"""AutoSampler with two trials at a time; each trial records which algorithm proposed it."""

from __future__ import annotations

from collections import Counter

import optuna

import optunahub

DIM = 30


def rosenbrock(trial: optuna.Trial) -> float:
    """Rosenbrock's valley on [-2, 2]^30; its minimum is 0, at x_i = 1."""
    x = [trial.suggest_float(f"x{i}", -2.0, 2.0) for i in range(DIM)]
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(DIM - 1))


def main(n_trials: int = 100) -> optuna.Study:
    module = optunahub.load_module("samplers/hdbo_auto")
    study = optuna.create_study(sampler=module.AutoSampler(seed=0, budget=n_trials))
    study.optimize(rosenbrock, n_trials=n_trials, n_jobs=2)  # running trials are pending
    proposers = Counter(t.system_attrs.get("hdbo:proposal", {}).get("meta", {})
                        .get("algorithm", "initial design") for t in study.trials)
    print(f"best {study.best_value:.2f} in {n_trials} trials; proposed by {dict(proposers)}")
    return study


if __name__ == "__main__":
    main()
