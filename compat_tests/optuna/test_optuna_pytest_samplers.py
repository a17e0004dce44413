"""Optuna's own sampler test cases (``optuna.testing.pytest_samplers``) for each named sampler.

The base classes expect a ``sampler`` fixture returning a zero-argument
factory; it is parametrised here over the four named samplers (algorithms
that are not importable yet are skipped).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _optuna_samplers import FAST_KWARGS, sampler_params
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)


@pytest.fixture(params=sampler_params())
def _sampler_factory(request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
    name, cls = request.param
    return lambda: cls(seed=0, n_startup_trials=2, **FAST_KWARGS.get(name, {}))


class TestBasic(BasicSamplerTestCase):
    @pytest.fixture
    def sampler(self, _sampler_factory: Callable[[], BaseSampler]) -> Callable[[], BaseSampler]:
        return _sampler_factory


class TestRelative(RelativeSamplerTestCase):
    @pytest.fixture
    def sampler(self, _sampler_factory: Callable[[], BaseSampler]) -> Callable[[], BaseSampler]:
        return _sampler_factory


class TestSingleOnly(SingleOnlySamplerTestCase):
    @pytest.fixture
    def sampler(self, _sampler_factory: Callable[[], BaseSampler]) -> Callable[[], BaseSampler]:
        return _sampler_factory
