"""Large D: an algorithm asked for more than it was measured to finish within the scale
targets (15 CPU minutes and 2 GiB on one core; 500 evaluations at D = 5000, the ``scale``
suite) says so at construction, naming D and the budget."""

from __future__ import annotations

import warnings

import pytest

from hdbo_engine import get_algorithm

ALGORITHMS = ("msucb", "cobbo", "bkb", "goucb")


def _construct(name: str, dim: int, budget: int | None) -> list[str]:
    if name == "goucb":
        pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        get_algorithm(name)(dim, seed=0, budget=budget)
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("name", ALGORITHMS)
def test_a_budget_beyond_the_measured_scale_warns_naming_d_and_budget(name: str) -> None:
    (message,) = _construct(name, 5000, 2000)
    assert "D = 5000" in message and "budget = 2000" in message
    assert f"docs/algorithms/{name}.md" in message


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize(("dim", "budget"), [(5000, 500), (5000, None), (100, 20000)])
def test_measured_sizes_and_unknown_budgets_do_not_warn(name: str, dim: int,
                                                        budget: int | None) -> None:
    assert _construct(name, dim, budget) == []
