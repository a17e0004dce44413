"""Auto's COBYLA phase and the ask/tell COBYLA it runs: checked against SciPy's own COBYLA
called directly, which evaluates the objective itself."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from hdbo_engine import Auto, Integer, Real, Space
from hdbo_engine.algorithms.auto import LARGE_D, default_members, effective_dim
from hdbo_engine.cobyla import AskTellCobyla


def _bowl(x: np.ndarray) -> float:
    """An off-centre bowl with a ridge: every coordinate matters, the minimum is 0 at 0.3."""
    z = np.asarray(x, dtype=float) - 0.3
    return float((z**2).sum() + 0.5 * abs(z).sum())


def _scipy_points(x0: np.ndarray, objective, max_evals: int) -> list[np.ndarray]:
    """The points SciPy's COBYLA evaluates, called directly (bounds [0, 1], rhobeg 1/6)."""
    seen: list[np.ndarray] = []

    def recorded(x: np.ndarray) -> float:
        seen.append(np.array(x, dtype=float))
        return objective(seen[-1])

    minimize(recorded, x0, method="COBYLA", bounds=[(0.0, 1.0)] * len(x0),
             options={"rhobeg": 1 / 6, "maxiter": max_evals, "tol": 1e-8})
    return seen


def test_ask_tell_cobyla_asks_for_scipys_points_and_ends_with_its_run():
    x0 = np.full(4, 0.5)
    expected = _scipy_points(x0, _bowl, 1000)
    run = AskTellCobyla(x0, rhobeg=1 / 6, max_evals=1000)
    asked = []
    while run.point is not None:
        asked.append(run.point.copy())
        run.tell(_bowl(run.point))
    assert len(asked) == len(expected) > 40  # converged before max_evals
    assert all(np.array_equal(a, e) for a, e in zip(asked, expected, strict=True))
    with pytest.raises(RuntimeError, match="ended"):
        run.tell(1.0)


def test_ask_tell_cobyla_refuses_a_non_finite_value():
    run = AskTellCobyla(np.full(2, 0.5), rhobeg=0.1, max_evals=50)
    with pytest.raises(ValueError, match="value"):
        run.tell(float("nan"))


def test_ask_tell_cobyla_below_its_least_budget_runs_d_plus_2_points_without_a_warning():
    """COBYLA needs D + 2 evaluations; a smaller cap is raised to that silently (SciPy would
    raise it too, with a UserWarning the user did not cause)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = AskTellCobyla(np.full(10, 0.5), rhobeg=0.1, max_evals=3)
        n = 0
        while run.point is not None:
            run.tell(_bowl(run.point))
            n += 1
    assert n == 12
    assert not caught, [str(w.message) for w in caught]


def _run_auto(opt: Auto, objective, n: int) -> None:
    for _ in range(n):
        (p,) = opt.ask()
        opt.tell(p.x, objective(p.x), p.meta)


def test_below_ten_evaluations_per_dimension_auto_runs_cobyla_from_the_designs_best():
    dim, budget = 8, 79  # 79 < 10 * 8
    opt = Auto(dim, seed=3, budget=budget)
    _run_auto(opt, _bowl, 60)
    design = [i for i, m in enumerate(opt.metas) if m.get("init")]
    model = [i for i, m in enumerate(opt.metas) if not m.get("init")]
    assert model and model[0] == len(design)  # the design first, then only COBYLA
    start = design[int(np.argmin(opt.y[design]))]
    assert all(opt.metas[i] == {"algorithm": "cobyla", "x0": start} for i in model)
    # SciPy's COBYLA from the design's best, whose first evaluation (the start) Auto answers
    # from the history instead of asking for it again.
    expected = _scipy_points(opt.X[start], _bowl, budget)
    assert np.array_equal(expected[0], opt.X[start])
    assert all(np.array_equal(opt.X[i], e)
               for i, e in zip(model, expected[1:], strict=False))
    assert opt.best[1] < opt.y[start]


def test_cobyla_phase_is_rebuilt_from_history_and_survives_a_copy():
    dim = 10
    opt = Auto(dim, seed=5, budget=90)
    _run_auto(opt, _bowl, 45)
    (failed,) = opt.ask()
    opt.tell(failed.x, float("nan"), failed.meta)
    _run_auto(opt, _bowl, 5)
    (live,) = opt.ask()
    assert live.meta["algorithm"] == "cobyla"
    opt.clear_pending()
    rebuilt = Auto.from_history(dim, opt.X, opt.y, opt.metas, seed=5, budget=90)
    for other in (rebuilt, copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        (p,) = other.ask()
        assert np.array_equal(p.x, live.x) and p.meta == live.meta


def test_a_failed_cobyla_point_counts_as_the_worst_value_fed():
    dim, budget = 6, 59
    failing = Auto(dim, seed=1, budget=budget)
    _run_auto(failing, _bowl, 30)
    first = next(i for i, m in enumerate(failing.metas) if m.get("algorithm") == "cobyla")
    start = failing.metas[first]["x0"]
    # Replace the second COBYLA value by NaN: a run told instead the largest finite value
    # among the start's and the first COBYLA value must ask for the same next point.
    X, y, metas = failing.X, failing.y, failing.metas
    worst = max(y[start], y[first])
    with_nan, with_worst = y.copy(), y.copy()
    with_nan[first + 1], with_worst[first + 1] = np.nan, worst
    a = Auto.from_history(dim, X, with_nan, metas, seed=1, budget=budget)
    b = Auto.from_history(dim, X, with_worst, metas, seed=1, budget=budget)
    for _ in range(dim + 3):  # past COBYLA's simplex, whose points do not use the values
        (pa,), (pb,) = a.ask(), b.ask()
        assert pa.meta["algorithm"] == "cobyla" and np.array_equal(pa.x, pb.x)
        a.tell(pa.x, _bowl(pa.x), pa.meta)
        b.tell(pb.x, _bowl(pb.x), pb.meta)


def test_when_cobyla_ends_the_members_take_their_turns():
    dim, budget = 3, 29
    opt = Auto(dim, seed=2, budget=budget)
    _run_auto(opt, _bowl, 60)  # past the budget: COBYLA's run ends at max_evals = budget
    names = [m.get("algorithm") for m in opt.metas if not m.get("init")]
    n_cobyla = names.count("cobyla")
    assert names[:n_cobyla] == ["cobyla"] * n_cobyla and n_cobyla == budget - 1
    assert set(names[n_cobyla:]) <= set(default_members()) and names[n_cobyla:]


@pytest.mark.parametrize("case", ["enough budget", "no budget", "integer", "noisy",
                                  "constraints", "batch"])
def test_no_cobyla_phase_outside_its_rule(case):
    dim = 6
    space = Space([Real(0, 1)] * (dim - 1) + [Integer(0, 9)]) if case == "integer" else dim
    budget = {"enough budget": 10 * dim, "no budget": None}.get(case, 10 * dim - 1)
    opt = Auto(space, seed=0, budget=budget, noisy=True if case == "noisy" else None)
    batch = 2 if case == "batch" else 1
    for _ in range(32 // batch):
        proposals = opt.ask(batch)
        for p in proposals:
            c = [p.x[0] - 0.9] if case == "constraints" else None
            opt.tell(p.x, _bowl(p.x), p.meta, constraints=c)
    assert not any(m.get("algorithm") == "cobyla" for m in opt.metas)
    assert any(m.get("algorithm") for m in opt.metas)


def test_no_cobyla_phase_above_large_d_or_after_a_flat_design():
    large = Auto(LARGE_D + 1, seed=0, budget=500)
    assert not large.arms["cobyla"].active(large)
    flat = Auto(30, seed=0, budget=200)
    # 0 everywhere but near (0.9, ..., 0.9): the centre and every axis probe see 0
    _run_auto(flat, lambda x: -max(0.0, 0.3 - float(np.linalg.norm(x - 0.9))), 60)
    assert flat.arms["es"].eligible(flat) and not flat.arms["cobyla"].active(flat)
    assert not any(m.get("algorithm") == "cobyla" for m in flat.metas)


def test_the_phase_counts_only_coordinates_the_design_found_an_effect_in():
    """Ten coordinates, a budget of 99: a function of all ten has 9.9 evaluations per
    coordinate and goes to COBYLA; a function of two of them (the design finds no effect in
    the other eight) has 49.5 and goes to the members."""
    dense, sparse = Auto(10, seed=0, budget=99), Auto(10, seed=0, budget=99)
    _run_auto(dense, _bowl, 30)
    _run_auto(sparse, lambda x: _bowl(x[[3, 7]]), 30)
    assert effective_dim(dense) == 10.0 and dense.arms["cobyla"].active(dense)
    assert effective_dim(sparse) == 2.0 and not sparse.arms["cobyla"].active(sparse)
    assert not any(m.get("algorithm") == "cobyla" for m in sparse.metas)



def test_cobyla_alone_runs_after_the_design_whatever_the_budget_and_restarts_from_the_best():
    """``arms=("cobyla",)``: 200 evaluations in 3-D is 67 per dimension, far above the
    phase's rule, yet every model ask is COBYLA's; on a bowl each run converges, and the next
    starts from the best point told before its first point."""
    opt = Auto(3, seed=0, budget=200, arms=("cobyla",), noisy=False)
    _run_auto(opt, _bowl, 200)
    model = [m for m in opt.metas if not m.get("init")]
    assert model and all(m["algorithm"] == "cobyla" for m in model)
    runs = [m.get("run", 0) for m in model]
    assert runs == sorted(runs) and runs[-1] >= 1  # runs follow one another
    for k in range(1, runs[-1] + 1):
        first = next(i for i, m in enumerate(opt.metas) if m.get("run") == k)
        assert opt.metas[first]["x0"] == int(np.argmin(opt.y[:first]))
    rebuilt = Auto.from_history(3, opt.X, opt.y, opt.metas, seed=0, budget=200,
                                arms=("cobyla",), noisy=False)
    assert np.array_equal(rebuilt.ask()[0].x, opt.ask()[0].x)


def test_arms_restrict_the_portfolio_and_bad_names_or_batches_are_refused():
    opt = Auto(6, seed=0, budget=60, arms=("msucb", "cobbo"), noisy=True)
    _run_auto(opt, _bowl, 40)
    assert {m["algorithm"] for m in opt.metas if "algorithm" in m} <= {"msucb", "cobbo"}
    assert list(opt.arms) == ["msucb", "cobbo"]
    with pytest.raises(ValueError, match="arms: unknown arm 'nope'"):
        Auto(6, arms=("nope",))
    with pytest.raises(ValueError, match="arms: expected a non-empty sequence"):
        Auto(6, arms="cobyla")
    alone = Auto(3, seed=0, budget=50, arms=("cobyla",), noisy=False)
    _run_auto(alone, _bowl, 20)
    with pytest.raises(ValueError, match="ask: none of the arms"):
        alone.ask(2)
    spanning = Auto(3, seed=0, budget=50, arms=("cobyla",), noisy=False)
    _run_auto(spanning, _bowl, spanning.n_init - 1)
    with pytest.raises(ValueError, match="ask: none of the arms"):
        spanning.ask(3)  # the design's last point and two that COBYLA alone cannot make
    assert len(spanning.pending) == 0  # the refused ask left no design point pending
