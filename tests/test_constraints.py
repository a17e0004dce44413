"""Constraints in the engine: the told history, the incumbent rule, the merit value, the
proposal step, rebuilds, Auto's records, minimize, and every algorithm on a constrained
problem whose optimum is known in closed form."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from hdbo_engine import get_algorithm, minimize
from hdbo_engine.algorithms.baselines import RandomSearch
from hdbo_engine.constraints import (
    FIT_POINTS,
    MAX_POINTS,
    constrained_ei,
    constraint_models,
    merit_values,
    probability_of_feasibility,
    steer,
    surrogate_values,
)

# D = 10 sphere centred at A, with the linear constraint sum(x) >= S excluding its centre.
# The constrained optimum is the projection of A onto the plane sum(x) = S:
# x* = A + (S - D A) / D, f* = (S - D A)^2 / D.
D, A, S = 10, 0.3, 6.0
F_STAR = (S - D * A) ** 2 / D
ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb", "auto")


def sphere(x: np.ndarray) -> float:
    return float(np.sum((x - A) ** 2))


def plane(x: np.ndarray) -> list[float]:
    return [S - float(np.sum(x))]


def run(name: str, seed: int, budget: int, dim: int = D) -> object:
    if name in ("goucb", "auto"):
        pytest.importorskip("torch")
    opt = get_algorithm(name)(dim, seed=seed, budget=budget)
    with threadpool_limits(1):
        for _ in range(budget):
            (p,) = opt.ask()
            opt.tell(p.x, sphere(p.x), constraints=plane(p.x))
    return opt


def test_best_is_the_lowest_feasible_value_once_one_exists():
    opt = RandomSearch(2, seed=0)
    opt.tell([0.1, 0.1], 1.0, constraints=[0.5])
    assert opt.best[1] == 1.0  # no feasible point yet: the least violating
    opt.tell([0.2, 0.2], 3.0, constraints=[-1.0])
    opt.tell([0.3, 0.3], 0.5, constraints=[2.0])
    opt.tell([0.4, 0.4], 2.0, constraints=[0.0])  # c = 0 is feasible
    x, y = opt.best
    assert y == 2.0 and np.array_equal(x, [0.4, 0.4])
    np.testing.assert_array_equal(opt.recommend(), [0.4, 0.4])
    np.testing.assert_array_equal(opt.feasible, [False, True, False, True])
    assert opt.constraints.shape == (4, 1)


def test_before_any_feasible_point_best_is_the_least_total_violation():
    opt = RandomSearch(2, seed=0)
    X = [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3], [0.4, 0.4]]
    # total violations sum(max(c, 0)): 1.5, 0.2, NaN -> violated without measure, 0.2
    C = [[0.5, 1.0], [0.2, -3.0], [np.nan, -1.0], [-5.0, 0.2]]
    opt.tell(X, [1.0, 2.0, 0.5, 1.5], constraints=C)
    assert not opt.feasible.any()
    assert opt.best[1] == 1.5  # violation 0.2 twice: the lower value of the two


def test_merit_ranks_infeasible_points_after_earlier_values_by_violation():
    y = np.array([3.0, 1.0, 5.0, 2.0, np.nan])
    C = np.array([[-1.0], [2.0], [-0.5], [1.0], [4.0]])
    # point 1: largest value so far 3, range 3 - 1 = 2, violation 2 of at most 2 -> 3 + 2
    # point 3: largest value 5, range 4, violation 1 of at most 2 -> 5 + 4 / 2
    expected = [3.0, 5.0, 5.0, 7.0, np.nan]
    np.testing.assert_array_equal(merit_values(y, C), expected)
    for n in range(1, len(y)):  # a prefix's merit never changes later
        np.testing.assert_array_equal(merit_values(y[:n], C[:n]), expected[:n])


def test_the_trust_region_sees_the_merit_and_the_surrogate_the_objective():
    opt = get_algorithm("msucb")(2, seed=0)
    opt.tell([[0.1, 0.1], [0.9, 0.9]], [3.0, 1.0], constraints=[[-1.0], [1.0]])
    np.testing.assert_array_equal(opt.merit, [3.0, 5.0])
    # the objective is defined at the infeasible point too: the surrogate fits its value
    np.testing.assert_array_equal(opt.model_data()[1], [3.0, 1.0])
    np.testing.assert_array_equal(opt.y, [3.0, 1.0])
    assert opt.trust_region.best == 3.0


@pytest.mark.parametrize("name", ["msucb", "bkb", "goucb"])
def test_model_proposals_stay_in_the_trust_region_of_the_feasible_incumbent(name):
    """The infeasible points have the lowest objective values; the trust region (side
    0.2) must still be centred on the feasible incumbent, as SCBO centres it."""
    opt = get_algorithm(name)(3, seed=0, budget=40, n_init=4)
    X = [[0.2, 0.2, 0.2], [0.8, 0.8, 0.8], [0.25, 0.2, 0.2], [0.8, 0.75, 0.8]]
    opt.tell(X, [1.0, 0.0, 1.1, 0.1], constraints=[[-1.0], [1.0], [-1.0], [1.0]])
    opt.trust_region.length = 0.2
    for _ in range(3):
        p = opt.ask()[0]
        assert np.all(np.abs(p.x - 0.2) <= 0.1 + 1e-9), p.x
        opt.tell(p.x, 1.0 + float(np.sum(p.x)), constraints=[-1.0], meta=p.meta)


def test_constraint_width_is_fixed_by_the_first_tell_and_checked_before_any_change():
    opt = RandomSearch(2, seed=0)
    opt.tell([0.1, 0.1], 1.0, constraints=[0.5, -1.0])
    with pytest.raises(ValueError, match="constraints"):
        opt.tell([0.2, 0.2], 1.0, constraints=[0.5])
    with pytest.raises(ValueError, match="constraints"):
        opt.tell([[0.2, 0.2], [0.3, 0.3]], [1.0, 2.0], constraints=[0.5, 1.0])
    with pytest.raises(TypeError, match="constraints"):
        opt.tell([0.2, 0.2], 1.0, constraints=["a", 1.0])
    assert opt.n_told == 1 and opt.constraints.shape == (1, 2)


def test_values_and_constraints_are_told_together_or_not_at_all():
    opt = RandomSearch(2, seed=0)
    opt.tell([0.1, 0.1], np.nan)  # a failure before any constraint
    opt.tell([0.2, 0.2], 1.0, constraints=[-1.0])
    opt.tell([0.3, 0.3], np.inf)  # a failure may come without constraints
    with pytest.raises(ValueError, match="constraints"):
        opt.tell([0.4, 0.4], 1.0)
    assert opt.n_told == 3
    assert np.isnan(opt.constraints[[0, 2]]).all() and opt.constraints[1, 0] == -1.0
    later = RandomSearch(2, seed=0)
    later.tell([0.1, 0.1], 1.0)
    with pytest.raises(ValueError, match="constraints"):
        later.tell([0.2, 0.2], 1.0, constraints=[-1.0])
    assert later.n_told == 1 and later.constraints is None


def test_steer_moves_a_likely_infeasible_proposal_to_the_feasible_side():
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    C = X[:, :1] - 0.5  # feasible iff x_0 <= 0.5
    incumbent = np.array([0.45, 0.5])
    inside, outside = np.array([0.2, 0.5]), np.array([0.9, 0.5])
    (kept, kept_meta), (moved, moved_meta) = steer(
        X, C, incumbent, [(inside, {"k": 1}), (outside, {"k": 2})], rng)
    np.testing.assert_array_equal(kept, inside)
    assert kept_meta["k"] == 1 and "steered" not in kept_meta and kept_meta["pof"] > 0.5
    assert moved_meta["steered"] and moved_meta["k"] == 2
    assert 0.3 <= moved[0] <= 0.55  # near the boundary x_0 = 0.5, not at the incumbent


def test_steer_keeps_the_moves_of_a_proposal_that_only_one_coordinate_makes_infeasible():
    # Feasible iff x_0 <= 0.55. The proposal moves all ten coordinates from the incumbent
    # by +0.4; only its x_0 crosses the boundary. The nearest feasible point keeps the other
    # nine moves: (0.5, 0.9, ..., 0.9) at distance 0.4, where the segment to the incumbent
    # turns feasible only at (0.55, ..., 0.55), distance 0.35 * sqrt(10) = 1.1, and a
    # Gaussian step moves every coordinate. Candidates are random, so count over 20 draws.
    rng = np.random.default_rng(1)
    X = rng.random((60, 10))
    C = X[:, :1] - 0.55
    incumbent, proposal = np.full(10, 0.5), np.full(10, 0.9)
    keeps_moves = 0
    for seed in range(20):
        ((moved, meta),) = steer(X, C, incumbent, [(proposal, {})], np.random.default_rng(seed))
        assert meta["steered"] and moved[0] <= 0.6
        assert np.linalg.norm(moved - proposal) < 0.7
        keeps_moves += int(np.sum(moved[1:] == proposal[1:]) >= 8)
    assert keeps_moves >= 10


def test_random_search_stays_uniform_under_constraints():
    plain, constrained = RandomSearch(3, seed=4), RandomSearch(3, seed=4)
    for _ in range(12):
        (p,), (q,) = plain.ask(), constrained.ask()
        np.testing.assert_array_equal(p.x, q.x)
        plain.tell(p.x, sphere(p.x))
        constrained.tell(q.x, sphere(q.x), constraints=[q.x[0] - 0.1])


def test_constraint_models_condition_on_the_nearest_points_and_skip_inactive_ones():
    rng = np.random.default_rng(1)
    X = rng.random((MAX_POINTS + 50, 2))
    C = np.column_stack([X[:, 0] - 0.5, -1.0 - X[:, 1]])  # the second is never violated
    centre = np.array([0.5, 0.5])
    (model,) = constraint_models(X, C, centre)
    assert FIT_POINTS < len(model.X) == MAX_POINTS
    nearest = np.sort(np.abs(X - centre).sum(axis=1))[:MAX_POINTS]
    np.testing.assert_allclose(np.sort(np.abs(model.X - centre).sum(axis=1)), nearest)
    mean, _ = model.predict(np.array([[0.2, 0.5], [0.8, 0.5]]))
    np.testing.assert_allclose(mean, [-0.3, 0.3], atol=0.05)  # c = x_0 - 0.5


def test_constraint_models_resolve_the_boundary_where_points_cluster_near_it():
    # c = (x0 - 0.5)(1 + x1), exact values; 30 points within 1e-3 of a boundary point, as a
    # search converging onto an active constraint tells them. 2e-5 either side of the
    # boundary the model must tell feasible from infeasible (a noise variance floored at 1e-6
    # of the values' variance leaves PoF at 0.3 and 0.7 there).
    rng = np.random.default_rng(0)
    centre = np.array([0.5, 0.4, 0.6])
    X = np.vstack([rng.random((30, 3)), centre + rng.uniform(-1e-3, 1e-3, (30, 3))])
    C = (X[:, :1] - 0.5) * (1.0 + X[:, 1:2])
    models = constraint_models(X, C, centre)
    pof = probability_of_feasibility(models, centre + [[2e-5, 0.0, 0.0], [-2e-5, 0.0, 0.0]])
    assert pof[0] < 0.05 and pof[1] > 0.95


@pytest.mark.parametrize("name", ALGORITHMS)
def test_rebuild_with_constraints_proposes_the_same_point(name):
    opt = run(name, seed=2, budget=24, dim=6)
    assert any(m.get("steered") or "pof" in m for m in opt.metas)
    rebuilt = type(opt).from_history(6, opt.X, opt.y, opt.metas, constraints=opt.constraints,
                                     seed=2, budget=24)
    with threadpool_limits(1):
        np.testing.assert_array_equal(rebuilt.ask()[0].x, opt.ask()[0].x)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_rebuild_after_the_first_feasible_point_proposes_the_same_point(name):
    """Model proposals asked before and after the first feasible point, where the surrogates
    switch from the merit value to the objective (constraints.surrogate_values)."""
    if name in ("goucb", "auto"):
        pytest.importorskip("torch")
    dim, budget = 6, 30
    opt = get_algorithm(name)(dim, seed=3, budget=budget, n_init=8)
    with threadpool_limits(1):
        for _ in range(budget):
            (p,) = opt.ask()
            opt.tell(p.x, sphere(p.x), constraints=[4.6 - float(np.sum(p.x))], meta=p.meta)
    first = int(np.argmax(opt.feasible))
    model = [i for i, m in enumerate(opt.metas) if not m.get("init")]
    assert opt.feasible.any() and min(model) <= first < max(model)
    rebuilt = type(opt).from_history(dim, opt.X, opt.y, opt.metas,
                                     constraints=opt.constraints, seed=3, budget=budget,
                                     n_init=8)
    with threadpool_limits(1):
        np.testing.assert_array_equal(rebuilt.ask()[0].x, opt.ask()[0].x)


def test_surrogates_see_the_merit_until_a_point_is_feasible_then_the_objective():
    y = np.array([3.0, 1.0, 5.0])
    C = np.array([[1.0], [2.0], [0.5]])
    # no feasible point: the merit, largest value so far + its range * violation share
    # (point 0: 3 + 1 * 1; point 1: 3 + 2 * 2 / 2; point 2: 5 + 4 * 0.5 / 2)
    np.testing.assert_array_equal(surrogate_values(y, C), [4.0, 5.0, 6.0])
    C = np.array([[1.0], [2.0], [-0.5]])  # point 2 feasible: every point its value
    np.testing.assert_array_equal(surrogate_values(y, C), [3.0, 1.0, 5.0])


def test_auto_counts_a_success_only_for_a_new_best_feasible_value():
    auto = get_algorithm("auto")(2, seed=0, members=("msucb", "cobbo"))
    metas = [{}, {"algorithm": "msucb"}, {"algorithm": "cobbo"}, {"algorithm": "msucb"}]
    X = [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3], [0.4, 0.4]]
    # msucb: 1.0 infeasible (failure), then 3.0 < 4.0 feasible (success); cobbo: 4.0 < 5.0
    auto.tell(X, [5.0, 1.0, 4.0, 3.0], metas, constraints=[[-1.0], [1.0], [-1.0], [-1.0]])
    # a feasible value exists, so the constrained-EI arm takes part, with no proposals yet
    assert auto.records() == {"msucb": (1, 1), "cobbo": (1, 0), "cei": (0, 0)}


def disc_history(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n uniform points of [0, 1]^2 with f = (x0 - 0.9)^2 + (x1 - 0.9)^2 and the one
    constraint x0 + x1 - 1 <= 0: the constrained optimum is (0.5, 0.5), f = 0.32."""
    X = np.random.default_rng(seed).random((n, 2))
    return X, ((X - 0.9) ** 2).sum(axis=1), (X.sum(axis=1) - 1.0)[:, None]


def propose(X, y, C, incumbent, value, radius, pending, n):
    """constrained_ei with the constraint models built around the incumbent."""
    with threadpool_limits(1):
        return constrained_ei(X, y, constraint_models(X, C, incumbent), incumbent, value,
                              radius, np.asarray(pending).reshape(-1, 2), n,
                              np.random.default_rng(0))


def test_constrained_ei_proposes_near_the_constrained_optimum():
    X, y, C = disc_history(40, seed=0)
    feasible = C[:, 0] <= 0
    i = int(np.flatnonzero(feasible)[np.argmin(y[feasible])])
    (x,) = propose(X, y, C, X[i], y[i], 0.5, [], 1)
    assert np.linalg.norm(x - [0.5, 0.5]) < 0.05  # on the boundary, at the optimum
    assert x.sum() - 1.0 < 0.01
    assert ((x - 0.9) ** 2).sum() < y[i]


def test_constrained_ei_stays_in_its_box_and_moves_towards_the_optimum():
    X, y, C = disc_history(40, seed=1)
    incumbent = np.array([0.2, 0.3])  # f = 0.85, feasible, 0.42 from the optimum
    (x,) = propose(X, y, C, incumbent, 0.85, 0.05, [], 1)
    assert np.abs(x - incumbent).max() <= 0.05 + 1e-12
    np.testing.assert_allclose(x, [0.25, 0.35], atol=0.01)  # the box's corner nearest it


def test_constrained_ei_spreads_a_batch_and_avoids_pending_points():
    X, y, C = disc_history(40, seed=2)
    feasible = C[:, 0] <= 0
    i = int(np.flatnonzero(feasible)[np.argmin(y[feasible])])
    first, second = propose(X, y, C, X[i], y[i], 0.5, [], 2)
    (after_pending,) = propose(X, y, C, X[i], y[i], 0.5, [first], 1)
    assert np.linalg.norm(first - second) > 1e-3
    assert np.linalg.norm(first - after_pending) > 1e-3


def test_auto_constrained_ei_box_halves_after_two_failures_and_doubles_on_a_success():
    auto = get_algorithm("auto")(2, seed=0, members=("msucb",))
    cei = {"algorithm": "cei"}
    # told values (all feasible unless marked): 5 design; 4 cei success (r 0.1 -> 0.2);
    # 6, 7 cei failures (-> 0.1); 3 infeasible cei, 8 cei (failures -> 0.05); 2 msucb
    # success (not the arm's); 1 cei success (-> 0.1); 9 cei failure (one, no change)
    y = [5.0, 4.0, 6.0, 7.0, 3.0, 8.0, 2.0, 1.0, 9.0]
    metas = [{}, cei, cei, cei, cei, cei, {"algorithm": "msucb"}, cei, cei]
    feasible = [True, True, True, True, False, True, True, True, True]
    X = np.linspace(0.05, 0.95, len(y))[:, None] * [1.0, 0.5]
    expected = [0.1, 0.2, 0.2, 0.1, 0.1, 0.05, 0.05, 0.1, 0.1]
    for k in range(len(y)):
        auto.tell(X[k], y[k], metas[k], constraints=[-1.0 if feasible[k] else 1.0])
        assert auto.arms["cei"].radius(auto) == pytest.approx(expected[k])


def test_auto_constrained_ei_box_keeps_its_size_after_a_single_failure():
    auto = get_algorithm("auto")(2, seed=0, members=("msucb",))
    auto.tell([0.5, 0.5], 1.0, {}, constraints=[-1.0])
    auto.tell([0.6, 0.5], 2.0, {"algorithm": "cei"}, constraints=[-1.0])
    assert auto.arms["cei"].radius(auto) == pytest.approx(0.1)  # it takes two failures in a row


def test_auto_asks_the_constrained_ei_arm_only_once_a_point_is_feasible():
    pytest.importorskip("torch")
    auto = get_algorithm("auto")(2, seed=0, members=("msucb",))
    X, y, C = disc_history(20, seed=3)
    auto.tell(X, y + 10.0, constraints=C + 2.0)  # nothing feasible yet
    assert "cei" not in auto.records()
    auto.tell(X[:1] * 0.5, 0.7, constraints=[-0.5])
    assert "cei" in auto.records()
    with threadpool_limits(1):
        names = []
        for _ in range(12):
            (p,) = auto.ask()
            names.append(p.meta["algorithm"])
            x = p.x
            auto.tell(x, float(((x - 0.9) ** 2).sum()), p.meta, constraints=[x.sum() - 1.0])
    assert "cei" in names
    j = names.index("cei")
    rebuilt = type(auto).from_history(2, auto.X[: 21 + j], auto.y[: 21 + j],
                                      auto.metas[: 21 + j],
                                      constraints=auto.constraints[: 21 + j],
                                      seed=0, members=("msucb",))
    with threadpool_limits(1):
        (again,) = rebuilt.ask()
    np.testing.assert_array_equal(again.x, auto.X[21 + j])
    assert again.meta["algorithm"] == "cei"


def test_minimize_returns_the_best_feasible_point():
    res = minimize(lambda v: sphere(np.array(v)), D, algorithm="random", budget=40, seed=0,
                   progress=False, constraints=lambda v: plane(np.array(v)))
    assert res.constraints.shape == (40, 1)
    feasible = res.constraints[:, 0] <= 0
    assert res.fun == res.func_vals[feasible].min()
    assert plane(np.array(res.x))[0] <= 0


@pytest.mark.parametrize("name", ALGORITHMS)
def test_each_algorithm_beats_random_search_on_a_constrained_sphere(name):
    budget, seeds = 50, (0, 1, 2)
    gaps, random_gaps = [], []
    for seed in seeds:
        for algo, out in ((name, gaps), ("random", random_gaps)):
            opt = run(algo, seed, budget)
            x, y = opt.best
            assert plane(x)[0] <= 0 and y >= F_STAR - 1e-9  # feasible, so never below f*
            out.append(y - F_STAR)
    assert np.median(gaps) < np.median(random_gaps)
