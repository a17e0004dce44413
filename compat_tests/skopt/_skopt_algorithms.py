"""The public hdbo algorithms (from the engine registry) as pytest parameters, skipped where
their module is absent."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from hdbo_engine import available
from hdbo_engine.registry import entries

ALGORITHMS = tuple(e.name for e in entries(public=True))


def algorithm_params(slow: Collection[str] = ()) -> list:
    """``pytest.param`` per algorithm; those in ``slow`` carry the ``slow`` marker."""
    params = []
    present = set(available())
    for name in ALGORITHMS:
        marks = [pytest.mark.skipif(name not in present, reason=f"{name} not installed")]
        if name in slow:
            marks.append(pytest.mark.slow)
        params.append(pytest.param(name, marks=marks))
    return params
