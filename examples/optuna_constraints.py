"""Constraints: hdbo's Auto on an engineering design problem with 11 constraints, in Optuna.

    python examples/optuna_constraints.py [--trials 120] [--seed 0]

The problem is Golinski's speed reducer (``hdbo_cli.constrained``): choose a gearbox's face
width, gear module, number of teeth, two shaft lengths and two shaft diameters to minimise
its weight, subject to 11 constraints on stresses, deflections and geometry. The best known
weight is 2996.348, with several constraints active there, so a good answer runs along the
boundary of the feasible set.

The objective reports each constraint with ``trial.set_constraint(name, value)`` (Optuna 5;
feasible iff every value is <= 0), and ``study.best_trial`` is then the best *feasible*
trial. ``AutoSampler`` reads the constraints with the values: its initial design looks for a
feasible point, and once one is found a constrained expected-improvement step joins its four
algorithms (``docs/constraints.md``). The script then gives Optuna's ``TPESampler``, which
reads ``set_constraint`` too, the same number of trials.

It prints, per sampler, the best feasible weight, the trial that reached it and how many
trials were feasible, then the best trial's design and the best known weight. A run with the
defaults takes one to two CPU minutes.
"""

from __future__ import annotations

import argparse

import numpy as np
import optuna

from hdbo_adapters.optuna import AutoSampler
from hdbo_cli.constrained import (
    SPEED_REDUCER_BEST,
    SPEED_REDUCER_LOWER,
    SPEED_REDUCER_UPPER,
    speed_reducer,
    speed_reducer_constraints,
)

NAMES = ("face_width", "module", "teeth", "shaft1_length", "shaft2_length", "shaft1_diameter",
         "shaft2_diameter")


def design(trial: optuna.Trial) -> np.ndarray:
    """The trial's seven design variables, in the problem's order."""
    return np.array([trial.suggest_float(name, low, high) for name, low, high
                     in zip(NAMES, SPEED_REDUCER_LOWER, SPEED_REDUCER_UPPER, strict=True)])


def objective(trial: optuna.Trial) -> float:
    x = design(trial)[None]
    for j, value in enumerate(speed_reducer_constraints(x)[0], start=1):
        trial.set_constraint(f"g{j:02d}", float(value))  # feasible iff <= 0
    return float(speed_reducer(x)[0])


def is_feasible(trial: optuna.trial.FrozenTrial) -> bool:
    """Whether every constraint the trial set is <= 0 (``trial.constraints``: name -> value)."""
    return all(value <= 0 for value in trial.constraints.values())


def report(label: str, study: optuna.Study) -> None:
    feasible = sum(is_feasible(t) for t in study.trials)
    try:
        best = study.best_trial
    except ValueError:  # no feasible trial
        print(f"{label}: no feasible trial in {len(study.trials)} trials")
        return
    print(f"{label}: best feasible weight {best.value:.4f} at trial {best.number} "
          f"({feasible} of {len(study.trials)} trials feasible)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=120, help="trials per sampler [120]")
    parser.add_argument("--seed", type=int, default=0, help="sampler seed [0]")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    auto = optuna.create_study(sampler=AutoSampler(seed=args.seed))
    auto.optimize(objective, n_trials=args.trials)
    tpe = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=args.seed))
    tpe.optimize(objective, n_trials=args.trials)

    report("AutoSampler", auto)
    report("TPESampler", tpe)
    if any(is_feasible(t) for t in auto.trials):
        print("AutoSampler's best design:")
        for name, value in auto.best_trial.params.items():
            print(f"  {name:<16} {value:.6f}")
    print(f"best known weight {SPEED_REDUCER_BEST[0]}")


if __name__ == "__main__":
    main()
