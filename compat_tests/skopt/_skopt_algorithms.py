"""The four hdbo algorithms as pytest parameters, skipped where their module is absent."""

from __future__ import annotations

from collections.abc import Collection

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


def algorithm_params(slow: Collection[str] = ()) -> list:
    """``pytest.param`` per algorithm; those in ``slow`` carry the ``slow`` marker."""
    params = []
    for name in ALGORITHMS:
        marks = [pytest.mark.skipif(not importable(name), reason=f"{name} not installed")]
        if name in slow:
            marks.append(pytest.mark.slow)
        params.append(pytest.param(name, marks=marks))
    return params
