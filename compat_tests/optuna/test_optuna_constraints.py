"""Constraints through Optuna, checked the way Optuna checks its own samplers'
``constraints_func`` (storage under its system attribute, one call per trial, NaN refused,
``study.best_trial`` feasible) plus ``trial.set_constraint`` and a constrained problem whose
optimum is known in closed form."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import optuna
import pytest
from _optuna_samplers import NAMED, sampler_params
from optuna.study._constrained_optimization import _CONSTRAINTS_KEY
from optuna.trial import FrozenTrial

optuna.logging.set_verbosity(optuna.logging.WARNING)

# Sphere centred at 0.3 in [-1, 1]^4 with sum(x) >= 1.6: the optimum is the projection of
# the centre onto the plane, x* = 0.4 in every coordinate, f* = 4 * 0.1^2.
DIM, CENTRE, TOTAL = 4, 0.3, 1.6
F_STAR = (TOTAL - DIM * CENTRE) ** 2 / DIM


def xs(trial: optuna.Trial) -> list[float]:
    return [trial.suggest_float(f"x{i}", -1.0, 1.0) for i in range(DIM)]


def plane(x: Sequence[float]) -> float:
    return TOTAL - sum(x)


def sphere(x: Sequence[float]) -> float:
    return sum((v - CENTRE) ** 2 for v in x)


def constrained_objective(trial: optuna.Trial) -> float:
    x = xs(trial)
    trial.set_constraint("plane", plane(x))
    return sphere(x)


def engine_of(sampler: optuna.samplers.BaseSampler):
    """The engine optimizer the sampler told its last history to."""
    return sampler._cache.optimizer


@pytest.mark.parametrize("value", [-1.0, 0.0, 1.0, -math.inf, math.inf])
def test_constraints_func_is_called_once_per_trial_and_stored_as_optuna_does(value):
    calls = 0

    def constraints_func(trial: FrozenTrial) -> Sequence[float]:
        nonlocal calls
        calls += 1
        return (value,)

    with pytest.warns(FutureWarning, match="constraints_func"):
        sampler = NAMED["auto"](seed=0, n_startup_trials=2, constraints_func=constraints_func)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: sum(xs(t)), n_trials=5)
    assert calls == 5
    for trial in study.trials:
        assert trial.system_attrs[_CONSTRAINTS_KEY] == (value,)
    told = engine_of(sampler).constraints
    assert told.shape == (4, 1) and (told == value).all()


def test_nan_from_constraints_func_is_refused_as_optuna_refuses_it():
    with pytest.warns(FutureWarning):
        sampler = NAMED["auto"](seed=0, constraints_func=lambda t: (math.nan,))
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match="NaN"):
        study.optimize(lambda t: sum(xs(t)), n_trials=3)
    assert len(study.trials) == 1
    assert study.trials[0].system_attrs[_CONSTRAINTS_KEY] is None


def test_set_constraint_values_reach_the_engine_in_completion_order():
    sampler = NAMED["auto"](seed=0, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler)
    study.optimize(constrained_objective, n_trials=6)
    expected = [[t.constraints["plane"]] for t in study.trials[:5]]
    np.testing.assert_array_equal(engine_of(sampler).constraints, expected)


def test_a_trial_without_constraints_in_a_constrained_study_counts_as_violated():
    sampler = NAMED["auto"](seed=0, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler)
    study.optimize(constrained_objective, n_trials=2)
    study.optimize(lambda t: sphere(xs(t)), n_trials=2)  # the second is sampled after the first
    told = engine_of(sampler).constraints
    assert told.shape == (3, 1) and np.isnan(told[2, 0]) and not np.isnan(told[:2]).any()


def test_trials_with_different_numbers_of_constraints_are_refused():
    def two_constraints(trial: optuna.Trial) -> float:
        x = xs(trial)
        trial.set_constraint("plane", plane(x))
        trial.set_constraint("box", x[0] - 0.9)
        return sphere(x)

    study = optuna.create_study(sampler=NAMED["auto"](seed=0, n_startup_trials=2))
    study.optimize(constrained_objective, n_trials=1)
    study.optimize(two_constraints, n_trials=1)
    with pytest.raises(ValueError, match="number of constraints"):
        study.optimize(constrained_objective, n_trials=1)


def test_a_new_sampler_continues_a_constrained_study_exactly():
    def run(switch_at: int | None) -> dict[str, float]:
        sampler = NAMED["msucb"](seed=1, n_startup_trials=4)
        study = optuna.create_study(sampler=sampler)
        study.optimize(constrained_objective, n_trials=10)
        if switch_at is not None:
            study.sampler = NAMED["msucb"](seed=1, n_startup_trials=4)
        return study.ask().params

    assert run(None) == run(10)


@pytest.mark.parametrize("named", sampler_params())
def test_the_sampler_finds_the_feasible_optimum_region(named):
    name, cls = named
    n_trials, seeds = 30, (0, 1)
    gaps, random_gaps = [], []
    for seed in seeds:
        for sampler, out in ((cls(seed=seed), gaps),
                             (optuna.samplers.RandomSampler(seed=seed), random_gaps)):
            study = optuna.create_study(sampler=sampler)
            study.optimize(constrained_objective, n_trials=n_trials)
            best = study.best_trial  # Optuna's rule: the best feasible trial
            assert plane([best.params[f"x{i}"] for i in range(DIM)]) <= 0
            assert best.value >= F_STAR - 1e-9
            out.append(best.value - F_STAR)
    assert np.mean(gaps) < np.mean(random_gaps), (name, gaps, random_gaps)
