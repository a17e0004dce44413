"""Unit tests of the scikit-optimize adapter (hdbo_adapters.skopt)."""

from __future__ import annotations

import pickle

import matplotlib
import numpy as np
import pytest
import skopt
from skopt.benchmarks import branin
from skopt.space import Categorical, Integer, Real

from hdbo_adapters import skopt as adapter
from hdbo_engine import available, get_algorithm
from hdbo_engine import space as es
from hdbo_engine.registry import register, unregister

matplotlib.use("Agg")

ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb")
PRESENT = set(available())


@pytest.fixture(params=[
    pytest.param(a, marks=pytest.mark.skipif(a not in PRESENT, reason=f"{a} not installed"))
    for a in ALGORITHMS
])
def algorithm(request: pytest.FixtureRequest) -> str:
    return request.param


def _sphere(x: list[float]) -> float:
    return float(np.sum((np.asarray(x, dtype=float) - 0.3) ** 2))


# ------------------------------------------------------- native equivalence
@pytest.mark.parametrize("batch", [1, 2])
def test_same_points_as_native_engine_loop(algorithm, batch):
    """Same seed, same continuous problem: the adapter proposes the native loop's points."""
    bounds = [(-5.0, 10.0), (0.0, 15.0), (-1.0, 1.0), (0.0, 2.0), (-3.0, 3.0), (1.0, 2.0)]
    opt = adapter.HDBOOptimizer(bounds, algorithm, n_initial_points=4, random_state=11)
    native = get_algorithm(algorithm)(es.Space([es.Real(lo, hi) for lo, hi in bounds]),
                                      seed=11, n_init=4)
    for _ in range(8 // batch):
        X = opt.ask(n_points=batch)
        proposals = native.ask(batch)
        expected = [native.space.decode(p.x)[0] for p in proposals]
        assert X == expected
        y = [_sphere(x) for x in X]
        opt.tell(X, y)
        native.tell(np.array([p.x for p in proposals]), y)
    np.testing.assert_array_equal(opt.engine.X, native.X)
    assert opt.engine.metas == native.metas


def test_asked_points_keep_their_metadata():
    opt = adapter.MSUCBOptimizer([(0.0, 1.0)] * 6, n_initial_points=2, random_state=0)
    for _ in range(8):  # 2 design points, at most 5 line-search points, then the model
        x = opt.ask()
        opt.tell(x, _sphere(x))
    assert opt.engine.metas[0] == {"init": True, "centre": True}
    assert opt.engine.metas[2]["line"] == 1 / 6  # the design's line search survived too
    assert "t" in opt.engine.metas[-1]  # MS-UCB's iteration index survived the round trip
    assert len(opt.engine.pending) == 0


def test_unasked_points_are_encoded_and_pending_points_distinct():
    opt = adapter.MSUCBOptimizer([(-2.0, 2.0), Integer(0, 4), Categorical(["a", "b"])],
                                 n_initial_points=2, random_state=0)
    opt.tell([[0.5, 1.5, "b"], [1.0, 3, "a"]], [1.0, 2.0])  # 1.5 in an Integer: as in skopt
    np.testing.assert_allclose(opt.engine.X[0],
                               opt.engine_space.encode([[0.5, 2, "b"]])[0])
    first = opt.ask(n_points=2)
    second = opt.ask(n_points=3)  # different request: new points, distinct from pending ones
    assert len({tuple(x) for x in first + second}) == 5
    assert len(opt.engine.pending) == 5
    opt.tell(second, [0.0, 0.0, 0.0])
    assert len(opt.engine.pending) == 2
    opt.update_next()
    assert len(opt.engine.pending) == 0


# ---------------------------------------------------------------- dimensions
def test_priors_and_types_map_to_the_engine_codec():
    dims = [Real(1e-4, 1.0, prior="log-uniform"), Integer(1, 1000, prior="log-uniform"),
            Integer(-3, 3), Categorical(["relu", "tanh", "gelu"]), (0.0, 1.0)]
    opt = adapter.HDBOOptimizer(dims, "random", n_initial_points=400, random_state=0)
    enc = opt.engine_space.dimensions
    assert enc[0].log and enc[1].log and not enc[2].log
    assert isinstance(enc[3], es.Categorical) and enc[3].choices == ["relu", "tanh", "gelu"]
    X = opt.ask(n_points=400)
    assert all(x in opt.space for x in X)
    lr = np.array([x[0] for x in X])
    units = np.array([x[1] for x in X])
    assert all(isinstance(x[1], int) and isinstance(x[2], int) for x in X)
    # log-uniform: about half of the draws fall below the geometric midpoint
    assert 0.4 < np.mean(lr < 1e-2) < 0.6
    assert 0.35 < np.mean(units < 32) < 0.65
    assert {x[3] for x in X} == {"relu", "tanh", "gelu"}


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="n_initial_points"):
        adapter.MSUCBOptimizer([(0.0, 1.0)], n_initial_points=-1)
    with pytest.raises(ValueError, match="algorithm: unknown name"):
        adapter.HDBOOptimizer([(0.0, 1.0)], "nope")
    with pytest.raises(TypeError, match="unexpected keyword"):
        adapter.MSUCBOptimizer([(0.0, 1.0)], not_an_option=3)
    with pytest.raises(ValueError, match="lower bound"):
        adapter.MSUCBOptimizer([(1.0, 0.0)])


def test_missing_algorithm_module_gives_import_error():
    """An algorithm registered in the engine whose module this installation lacks."""
    register("ghost", "ghost:Ghost")  # there is no hdbo_engine.algorithms.ghost
    try:
        with pytest.raises(ImportError, match="'ghost' is not available"):
            adapter.HDBOOptimizer([(0.0, 1.0)], "ghost")
    finally:
        unregister("ghost")


def test_n_initial_points_zero_and_random_state_kinds():
    opt = adapter.MSUCBOptimizer([(0.0, 1.0)], n_initial_points=0, random_state=0)
    x = opt.ask()  # first point of an empty optimizer is random
    assert len(opt.tell(x, 1.0).models) == 1
    a = adapter.MSUCBOptimizer([(0.0, 1.0)], random_state=np.random.RandomState(5))
    b = adapter.MSUCBOptimizer([(0.0, 1.0)], random_state=np.random.RandomState(5))
    assert a.ask(n_points=3) == b.ask(n_points=3)


# ---------------------------------------------------------------- tell/result
def test_numpy_inputs_and_failed_evaluations():
    opt = adapter.MSUCBOptimizer([(-2.0, 2.0), (-2.0, 2.0)], n_initial_points=2,
                                 random_state=0)
    res = opt.tell(np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([np.inf, 3.0]))
    assert res.fun == 3.0 and res.x == [0.3, 0.4]
    for bad, match in ((np.nan, "y: Input y contains NaN"), (-np.inf, "y: -inf")):
        with pytest.raises(ValueError, match=match):  # NaN as skopt; nothing recorded
            opt.tell(np.array([[1.0, 1.0], [0.5, 0.5]]), np.array([2.0, bad]))
        assert len(opt.yi) == 2 and opt.engine.n_told == 2
    res = opt.tell(np.array([1.0, 1.0]), np.float64(np.inf))
    assert res.fun == 3.0 and len(res.func_vals) == 3
    pred = res.models[-1].predict([[0.5, 0.5]])
    assert np.isfinite(pred).all()
    x = opt.ask()
    assert x in opt.space


def test_result_snapshots_do_not_change_after_later_tells():
    opt = adapter.MSUCBOptimizer([(-2.0, 2.0)], n_initial_points=1, random_state=0)
    res = opt.tell([0.0], 1.0)
    opt.tell([1.0], 0.5)
    assert res.x_iters == [[0.0]] and len(res.func_vals) == 1 and len(res.models) == 1
    assert opt.get_result().fun == 0.5


def test_copy_with_new_random_state_keeps_history():
    opt = adapter.HDBOOptimizer([(-2.0, 2.0)], "gpucb", n_initial_points=2, random_state=0)
    opt.run(lambda x: x[0] ** 2, n_iter=3)
    c = opt.copy(random_state=123)
    assert c.Xi == opt.Xi and c.yi == opt.yi and c.algorithm == "gpucb"
    assert c.engine.seed == 123
    assert c.engine.metas == opt.engine.metas


# ------------------------------------------------------------ skopt tooling
@pytest.fixture(scope="module")
def branin_result():
    dims = [Real(-5.0, 10.0, name="x1"), Real(0.0, 15.0, name="x2"), Integer(1, 5, name="k"),
            Categorical(["a", "b"], name="c")]

    def f(x):
        return branin(x[:2]) + 0.1 * x[2] + (0.0 if x[3] == "a" else 1.0)

    return adapter.msucb_minimize(f, dims, n_calls=14, n_initial_points=8, random_state=0)


def test_plots_accept_our_results(branin_result):
    from skopt.plots import plot_convergence, plot_evaluations, plot_objective

    _, ax = matplotlib.pyplot.subplots()  # a fresh axes: plot_convergence draws on gca()
    (line,) = plot_convergence(branin_result, ax=ax).get_lines()  # best value after each call
    np.testing.assert_allclose(line.get_ydata(), np.minimum.accumulate(branin_result.func_vals))
    assert len(plot_evaluations(branin_result).figure.axes) >= 16  # 4 x 4 grid
    axes = plot_objective(branin_result, n_points=8, n_samples=30)
    assert len(axes.figure.axes) >= 16
    repr(branin_result)  # scipy's formatter copes with our specs
    matplotlib.pyplot.close("all")


def test_expected_minimum_uses_the_surrogate(branin_result):
    from skopt.utils import expected_minimum

    x, fun = expected_minimum(branin_result, n_random_starts=3, random_state=0)
    assert x in branin_result.space
    assert np.isfinite(fun)


def test_dump_load_round_trip(branin_result, tmp_path):
    path = tmp_path / "res.pkl"
    skopt.dump(branin_result, path, store_objective=False)
    loaded = skopt.load(path)
    assert loaded.x_iters == branin_result.x_iters
    np.testing.assert_array_equal(loaded.func_vals, branin_result.func_vals)
    assert loaded.fun == branin_result.fun and loaded.x == branin_result.x
    assert loaded.space == branin_result.space
    Xt = branin_result.space.transform(branin_result.space.rvs(5, random_state=1))
    np.testing.assert_allclose(loaded.models[-1].predict(Xt),
                               branin_result.models[-1].predict(Xt))
    # models share one copy of the told data, so the file grows linearly
    sizes = [len(pickle.dumps(branin_result.models[:k])) for k in (1, len(branin_result.models))]
    assert sizes[1] < 2 * sizes[0]


def test_gp_surrogate_is_an_sklearn_style_regressor():
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    rng = np.random.default_rng(0)
    X = rng.random((25, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    model = adapter.GPSurrogate()
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, y)
    mean, std = model.predict(X, return_std=True)
    np.testing.assert_allclose(mean, y, atol=0.05)
    assert (std >= 0).all()
    assert model.score(X, y) > 0.99
    assert clone(model).get_params() == {"fit_maxiter": 60, "restarts": 1}
    assert pickle.loads(pickle.dumps(model))._gp is None
    with pytest.raises(ValueError, match="columns"):
        model.predict(X[:, :2])


def test_optimizer_pickles_and_continues_identically():
    opt = adapter.MSUCBOptimizer([(-2.0, 2.0)] * 3, n_initial_points=3, random_state=2)
    opt.run(_sphere, n_iter=5)
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.ask(n_points=2) == opt.ask(n_points=2)


def test_tell_without_fit_adds_no_model():
    opt = adapter.MSUCBOptimizer([(-2.0, 2.0)], n_initial_points=1, random_state=0)
    assert opt.tell([0.5], 1.0, fit=False).models == []
    assert len(opt.tell([0.7], 1.0).models) == 1


def test_minimize_passes_budget_and_algorithm_options():
    res = adapter.hdbo_minimize(_sphere, [(-1.0, 1.0)] * 3, "msucb", n_calls=6,
                                n_initial_points=3, random_state=0, d=2, x0=[[0.0] * 3],
                                y0=[_sphere([0.0] * 3)])
    assert len(res.func_vals) == 7
    assert res.specs["function"] == "hdbo_minimize"
    assert res.specs["args"]["d"] == 2 and "algorithm_kwargs" not in res.specs["args"]
    opt = adapter.MSUCBOptimizer([(-1.0, 1.0)] * 3, d=2, budget=40)
    assert opt.engine.d == 2 and opt.engine.budget == 40


# ---------------------------------------------------------------- constraints
def test_tell_with_constraints_reports_the_best_feasible_point():
    opt = adapter.MSUCBOptimizer([(-2.0, 2.0)], n_initial_points=2, random_state=0)
    res = opt.tell([[0.0], [1.0]], [1.0, 0.5], constraints=[[-1.0], [2.0]])
    assert res.fun == 1.0 and res.x == [0.0]  # 0.5 is infeasible
    np.testing.assert_array_equal(res.constraints, [[-1.0], [2.0]])
    with pytest.raises(ValueError, match="constraints"):
        opt.tell([1.5], 0.1, constraints=[0.0, 0.0])
    with pytest.raises(ValueError, match="constraints"):
        opt.tell([1.5], 0.1)
    assert len(opt.yi) == 2 and opt.engine.n_told == 2
    res = opt.tell([-1.0], 0.7, constraints=[0.0])
    assert res.fun == 0.7 and res.x == [-1.0]
    np.testing.assert_array_equal(opt.copy().get_result().constraints, res.constraints)


def test_minimize_with_constraints_calls_them_per_point_and_returns_feasible():
    calls = []

    def plane(x):
        calls.append(list(x))
        return [x[0]]  # x_0 <= 0 excludes the sphere's centre at 0.3

    res = adapter.hdbo_minimize(_sphere, [(-1.0, 1.0)] * 3, "random", n_calls=12,
                                random_state=0, x0=[[0.0] * 3], constraints=plane)
    assert calls == res.x_iters and len(calls) == 12
    feasible = res.constraints[:, 0] <= 0
    assert res.x[0] <= 0 and res.fun == min(np.asarray(res.func_vals)[feasible])
    named = adapter.msucb_minimize(_sphere, [(-1.0, 1.0)] * 3, n_calls=8, random_state=0,
                                   constraints=plane)
    assert named.constraints.shape == (8, 1) and named.specs["args"]["constraints"] is plane


def test_minimize_result_and_recommend_give_autos_pick_under_noise():
    """With a noisy objective ``x`` is the luckiest draw and ``x_recommended`` the point the
    engine recommends, which the native loop with the same seed and values gives."""
    noise = np.random.default_rng(1).normal(0.0, 0.3, 30)
    calls = iter(range(30))

    def f(x: list[float]) -> float:
        return float(np.sum((np.round(np.asarray(x), 12) - 0.3) ** 2) + noise[next(calls)])

    res = adapter.auto_minimize(f, [(0.0, 1.0)] * 3, n_calls=30, random_state=8, noisy=True)
    native = get_algorithm("auto")(3, seed=8, budget=30, noisy=True)
    for i in range(30):
        (p,) = native.ask(1)
        native.tell(p.x, float(np.sum((np.round(p.x, 12) - 0.3) ** 2) + noise[i]))
    np.testing.assert_allclose(res.x_iters, native.X, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.x_recommended, native.recommend(), rtol=0, atol=1e-12)
    assert res.x_recommended in res.x_iters
    assert res.x_recommended != res.x  # the case this test is about


def test_recommend_is_none_before_a_finite_value_and_x_without_noise():
    opt = adapter.MSUCBOptimizer([(0.0, 1.0)] * 2, random_state=0)
    assert opt.recommend() is None
    for _ in range(6):
        res = opt.tell(x := opt.ask(), _sphere(x))
    assert opt.recommend() == res.x
