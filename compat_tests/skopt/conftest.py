"""Shared fixtures: the four hdbo algorithms, skipped where their module is absent."""

from __future__ import annotations

import pytest

from hdbo_engine.algorithms import get_algorithm

ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb")


def importable(name: str) -> bool:
    """Whether the engine algorithm ``name`` can be loaded in this installation."""
    try:
        get_algorithm(name)
    except ImportError:
        return False
    return True


@pytest.fixture(params=[
    pytest.param(a, marks=pytest.mark.skipif(not importable(a), reason=f"{a} not installed"))
    for a in ALGORITHMS
])
def algorithm(request: pytest.FixtureRequest) -> str:
    return request.param
