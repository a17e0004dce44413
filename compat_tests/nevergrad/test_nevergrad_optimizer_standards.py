"""Nevergrad's own optimizer standards applied to the hdbo optimizers.

Nevergrad's registry-wide tests (``nevergrad/optimization/test_optimizerlib.py``)
skip every name containing "BO" (so ``CobBO``) and skip or shrink Bayesian
optimizers elsewhere, so the checks are called explicitly here, with the
settings those tests use:

* ``check_optimizer`` (convergence on a 2-d quadratic with 2 workers,
  best-value tracking, every ask told, tell-not-asked counted);
* minimal budgets, the ``test_optimizers_minimal`` targets (1-d, bounded and
  unbounded), ``test_infnan``'s ``buggy_function``, ``test_parametrization_offset``
  and ``test_optim_pickle``;
* smaller budgets than Nevergrad's in the default suite (GO-UCB costs about a
  second per ask); Nevergrad's own budgets in the ``slow`` variants;
* recommendation reproducibility for a fixed seed against
  ``recommendations.csv`` (``test_optimizers_recommendation``'s protocol).
  Regenerate the file after an intended change with::

      HDBO_RECORD_RECOMMENDATIONS=1 PYTHONPATH=$PWD python -m pytest \\
          compat_tests/nevergrad -k recommendation

Long versions (Nevergrad's budgets: 300 for ``check_optimizer``, 100 for the
minimal targets, 70 for inf/nan) are marked ``slow``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nevergrad as ng
import numpy as np
import pandas as pd
import pytest
from nevergrad.common import testing
from nevergrad.optimization.test_optimizerlib import Fitness, buggy_function, check_optimizer

import hdbo_adapters.nevergrad as H
from hdbo_engine import available
from hdbo_engine.registry import entries

ENGINE_NAME = {e.nevergrad_name: e.name for e in entries(public=True)}
PRESENT = set(available())
NAMES = [pytest.param(n, marks=pytest.mark.skipif(a not in PRESENT,
                                                  reason=f"engine module {a} not present"))
         for n, a in ENGINE_NAME.items()]
RECORD_FILE = Path(__file__).with_name("recommendations.csv")
RECORD_ENV = "HDBO_RECORD_RECOMMENDATIONS"


def optimizer_cls(name: str) -> ng.optimizers.base.ConfiguredOptimizer:
    return ng.optimizers.registry[name]


# ------------------------------------------------------------ check_optimizer
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("budget", [1, 4, 30])
def test_check_optimizer_minimal_budgets(name: str, budget: int) -> None:
    """Nevergrad's check with the budget its own tests give Bayesian optimizers (4) and others."""
    np.random.seed(0)  # noqa: NPY002 (check_optimizer draws its tell-not-asked point there)
    check_optimizer(optimizer_cls(name), budget=budget, verify_value=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_check_optimizer_converges(name: str) -> None:
    """Nevergrad's full check: budget 300, recommendation within 0.15 of the optimum."""
    check_optimizer(optimizer_cls(name), budget=300, verify_value=True)


# ------------------------------------------------------ minimal test targets
def _targets() -> list[tuple[ng.p.Parameter, object, float, float]]:
    return [
        (ng.p.Array(shape=(1,)), lambda x: float(np.sum((x - 1.1) ** 2)), 1.04, 1.16),
        (ng.p.Array(shape=(1,)), lambda x: float(np.sum((x + 1.1) ** 2)), -1.16, -1.04),
        (ng.p.Scalar(lower=0.0, upper=1.0), lambda x: (x - 1.1) ** 2, 0.94, 1.01),
        (ng.p.Scalar(lower=-0.3, upper=0.3), lambda x: (x + 1.1) ** 2, -0.31, -0.24),
    ]


def _check_minimal(name: str, budget: int, bounded_only: bool = False) -> None:
    for param, func, low, high in _targets()[2 if bounded_only else 0:]:
        opt = optimizer_cls(name)(param, budget)
        opt.parametrization.random_state.seed(0)
        with testing.suppress_nevergrad_warnings():
            value = float(np.ravel(opt.minimize(func).value)[0])
        assert low < value < high, f"{name} on {param}: {value} not in ({low}, {high})"


@pytest.mark.parametrize("name", NAMES)
def test_optimizers_minimal_bounded_targets_small_budget(name: str) -> None:
    """``test_optimizers_minimal``'s bounded 1-d targets and tolerances at budget 20."""
    _check_minimal(name, 20, bounded_only=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_optimizers_minimal_targets(name: str) -> None:
    """``test_optimizers_minimal`` exactly: budget 100."""
    _check_minimal(name, 100)


# --------------------------------------------------------------- inf and nan
@pytest.mark.parametrize("name", NAMES)
def test_infnan(name: str) -> None:
    """``test_infnan``: NaN/inf regions; the recommendation must be good.

    Nevergrad's budget is 70 (the ``slow`` variant); 25 here, with a 5-point
    initial design so that most evaluations are model-based.
    """
    _check_infnan(H.families()[name](n_init=5), 25)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_infnan_nevergrad_budget(name: str) -> None:
    _check_infnan(optimizer_cls(name), 70)


def _check_infnan(family: ng.optimizers.base.ConfiguredOptimizer, budget: int) -> None:
    opt = family(parametrization=2, budget=budget)
    opt.parametrization.random_state.seed(0)
    with testing.suppress_nevergrad_warnings():
        recom = opt.minimize(buggy_function)
    assert buggy_function(recom.value) < 2.0
    assert np.isinf(opt.engine.y).any()  # failures were recorded as failures
    assert opt.engine.n_told == budget


# ------------------------------------------------------ parametrization offset
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n_init", [None, 2])
def test_parametrization_offset(name: str, n_init: int | None) -> None:
    """``test_parametrization_offset``: candidates stay near an init of 1e12.

    ``n_init=2`` makes most of the ten asks model-based (constant losses).
    """
    parametrization = ng.p.Instrumentation(ng.p.Array(init=[1e12, 1e12]))
    family = H.families()[name](n_init=n_init) if n_init else optimizer_cls(name)
    with testing.suppress_nevergrad_warnings():
        optimizer = family(parametrization, budget=100, num_workers=1)
    for k in range(10):
        candidate = optimizer.ask()
        assert candidate.args[0][0] > 100, f"ask #{k} below 100: {candidate.value}"
        optimizer.tell(candidate, 0)


# ------------------------------------------------------------------- pickling
@pytest.mark.parametrize("name", NAMES)
def test_optim_pickle(name: str) -> None:
    """``test_optim_pickle``, before any ask and in the middle of a parallel run."""
    optim = optimizer_cls(name)(parametrization=12, budget=100, num_workers=2)
    with tempfile.TemporaryDirectory() as folder:
        optim.dump(Path(folder) / "dump_test.pkl")
        for _ in range(3):
            optim.tell(optim.ask(), 1.0)
        optim.ask()
        optim.dump(Path(folder) / "dump_test.pkl")
        loaded = H.HDBOOptimizer.load(Path(folder) / "dump_test.pkl")
    assert loaded.num_ask == 4 and loaded.num_tell == 3
    np.testing.assert_array_equal(loaded.ask().value, optim.ask().value)


# ------------------------------------------------------------ reproducibility
def _recommendation(name: str) -> np.ndarray:
    """``test_optimizers_recommendation``'s protocol: dimension 4, seed 12 set on the
    parametrization's random state; budget 12 with a 6-point initial design and no line
    search after it, so the six model-based proposals decide the recommendation (with the
    line search every algorithm recommends the same design point)."""
    budget, dimension = 12, 4
    fitness = Fitness([0.5, -0.8, 0, 4])
    with testing.suppress_nevergrad_warnings():
        family = H.families()[name](n_init=6, line_search=False)
        optim = family(parametrization=dimension, budget=budget, num_workers=1)
        optim.parametrization.random_state.seed(12)
        assert optim.name == repr(family)
        recom = optim.minimize(fitness)
    return np.asarray(recom.value, dtype=float)


@pytest.mark.parametrize("name", NAMES)
def test_recommendation_reproducible(name: str) -> None:
    first = _recommendation(name)
    np.testing.assert_array_equal(first, _recommendation(name))
    table = (pd.read_csv(RECORD_FILE, index_col=0) if RECORD_FILE.exists()
             else pd.DataFrame(columns=[f"v{k}" for k in range(len(first))]))
    if os.environ.get(RECORD_ENV):
        for k, v in enumerate(first):
            table.loc[name, f"v{k}"] = round(float(v), 10)
        table.sort_index().to_csv(RECORD_FILE)
        return
    if name not in table.index:
        pytest.skip(f"no recorded recommendation for {name}; record it with "
                    f"{RECORD_ENV}=1 python -m pytest compat_tests/nevergrad -k recommendation")
    np.testing.assert_array_almost_equal(
        first, table.loc[name].to_numpy(dtype=float)[: len(first)], decimal=5,
        err_msg=f"recommendation of {name} changed; if intended, re-record {RECORD_FILE.name} "
                f"({RECORD_ENV}=1)")
