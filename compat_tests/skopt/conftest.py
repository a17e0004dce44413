"""Shared fixture: every hdbo algorithm (skipped where its module is absent)."""

from __future__ import annotations

import pytest
from _skopt_algorithms import algorithm_params


@pytest.fixture(params=algorithm_params())
def algorithm(request: pytest.FixtureRequest) -> str:
    return request.param
