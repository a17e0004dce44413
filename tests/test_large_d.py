"""Large D: an algorithm asked for more than it was measured to finish within the scale
targets (15 CPU minutes and 2 GiB on one core; the ``scale`` suite at D = 5000) says so at
construction, naming D and the budget."""

from __future__ import annotations

import warnings

import pytest

from hdbo_engine import get_algorithm

# D x budget up to which each algorithm does not warn (its docs page, "Large D"): 500
# evaluations at D = 5000, for GO-UCB, which peaked at 3.1 GiB there, 300, and for CobBO,
# measured at 2000 evaluations there, 2000 (and at most 2000 evaluations at any D)
LIMITS = {"msucb": 5000 * 500, "cobbo": 5000 * 2000, "bkb": 5000 * 500, "goucb": 5000 * 300}
MAX_BUDGET = {"cobbo": 2000}


def _construct(name: str, dim: int, budget: int | None) -> list[str]:
    if name == "goucb":
        pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        get_algorithm(name)(dim, seed=0, budget=budget)
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_a_budget_beyond_the_measured_scale_warns_naming_d_and_budget(name: str) -> None:
    budget = LIMITS[name] // 5000 + 1
    (message,) = _construct(name, 5000, budget)
    assert "D = 5000" in message and f"budget = {budget}" in message
    assert f"docs/algorithms/{name}.md" in message


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_measured_sizes_and_unknown_budgets_do_not_warn(name: str) -> None:
    for dim, budget in ((5000, LIMITS[name] // 5000), (5000, None),
                        (100, MAX_BUDGET.get(name, 10_000))):
        assert _construct(name, dim, budget) == []


def test_cobbo_warns_beyond_the_largest_budget_measured_at_any_d() -> None:
    (message,) = _construct("cobbo", 20, 2001)
    assert "D = 20" in message and "budget = 2001" in message and "budget <= 2000" in message
