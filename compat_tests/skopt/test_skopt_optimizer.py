"""skopt's own Optimizer / minimizer tests (skopt/tests/test_optimizer.py, test_common.py),
re-expressed against the hdbo skopt adapter for every available algorithm.

Documented differences from skopt (see hdbo_adapters.skopt): ask() is cached
during the initial design too, and a batch tell with more or fewer values
than points is rejected.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_almost_equal, assert_array_equal, assert_array_less
from scipy.optimize import OptimizeResult
from skopt.benchmarks import bench1, bench4, bench5, branin
from skopt.callbacks import DeadlineStopper, DeltaXStopper, DeltaYStopper
from skopt.space import Categorical, Integer, Real, Space

from hdbo_adapters import skopt as adapter
from hdbo_engine.registry import entries

# Exhausted finite spaces repeat points on purpose (skopt warns the same way);
# skopt itself warns that [low, high] lists will become categorical.
pytestmark = [pytest.mark.filterwarnings("ignore:The objective has been evaluated"),
              pytest.mark.filterwarnings("ignore:Dimension .* was inferred")]

# <Class>Optimizer and <name>_minimize per public algorithm, generated from the registry
OPTIMIZERS = {e.name: getattr(adapter, f"{e.class_name}Optimizer") for e in entries(public=True)}
MINIMIZERS = {e.name: getattr(adapter, f"{e.name}_minimize") for e in entries(public=True)}


# ------------------------------------------------------------ Optimizer tests
def test_multiple_asks(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=1, random_state=0)
    opt.run(bench1, n_iter=3)
    assert len(opt.models) == 3
    assert len(opt.Xi) == 3
    opt.ask()
    assert len(opt.models) == 3
    assert len(opt.Xi) == 3
    assert opt.ask() == opt.ask()
    opt.update_next()
    assert opt.ask() == opt.ask()


def test_model_queue_size(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=1, model_queue_size=2,
                                random_state=0)
    opt.run(bench1, n_iter=3)
    assert len(opt.models) == 2
    assert len(opt.Xi) == 3
    assert opt.ask() == opt.ask()


def test_invalid_tell_arguments(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=1)
    with pytest.raises(ValueError):  # single point, several values
        opt.tell([1.0], [1.0, 1.0])


def test_invalid_tell_arguments_list(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=1)
    with pytest.raises(ValueError):
        opt.tell([[1.0], [2.0]], [1.0, None])
    with pytest.raises(ValueError, match="expected 2 values"):  # stricter than skopt
        opt.tell([[1.0], [2.0]], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="expected a list of 2 values"):
        opt.tell([[1.0], [2.0]], 1.0)
    assert opt.Xi == [] and opt.engine.n_told == 0  # nothing recorded by bad calls


def test_bounds_checking_1d(algorithm):
    low, high = -2.0, 2.0
    opt = OPTIMIZERS[algorithm]([(low, high)], n_initial_points=1)
    for x, y in [([high + 0.5], 2.0), ([low - 0.5], 2.0),
                 ([high + 0.5, high], (2.0, 3.0)), ([low - 0.5, high], (2.0, 3.0))]:
        with pytest.raises(ValueError):
            opt.tell(x, y)


def test_bounds_checking_2d(algorithm):
    low, high = -2.0, 2.0
    opt = OPTIMIZERS[algorithm]([(low, high), (low + 4, high + 4)], n_initial_points=1)
    for x in ([high + 0.5, high + 4.5], [low - 0.5, low - 4.5],
              [high + 0.5, high + 0.5], [low - 0.5, high + 0.5]):
        with pytest.raises(ValueError, match="not within the bounds"):
            opt.tell(x, 2.0)


def test_bounds_checking_2d_multiple_points(algorithm):
    low, high = -2.0, 2.0
    opt = OPTIMIZERS[algorithm]([(low, high), (low + 4, high + 4)], n_initial_points=1)
    with pytest.raises(ValueError):
        opt.tell([(high + 0.5, high + 0.5), (high + 0.5, high + 0.5)], [2.0, 3.0])
    with pytest.raises(ValueError):
        opt.tell([(low - 0.5, high + 0.5), (low - 0.5, high + 0.5)], [2.0, 3.0])


def test_dimension_checking_1d(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2, 2)])
    with pytest.raises(ValueError, match="Dimensions of point "):
        opt.tell([-1, -1], 2.0)


def test_dimension_checking_2d(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2, 2), (-2, 2)])
    with pytest.raises(ValueError, match="Dimensions of point "):
        opt.tell([-1], 2.0)
    with pytest.raises(ValueError, match="Dimensions of point "):
        opt.tell([-1, -1, -1], 2.0)


def test_dimension_checking_2d_multiple_points(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2, 2), (-2, 2)])
    with pytest.raises(ValueError, match="dimensions as the space"):
        opt.tell([[-1], [-1, 0], [-1, 1]], 2.0)
    with pytest.raises(ValueError, match="dimensions as the space"):
        opt.tell([[-1, -1, -1], [-1, 0], [-1, 1]], 2.0)


def test_returns_result_object(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=1)
    result = opt.tell([1.5], 2.0)
    assert isinstance(result, OptimizeResult)
    assert len(result.x_iters) == len(result.func_vals)
    assert np.min(result.func_vals) == result.fun
    for key in ("x", "fun", "func_vals", "x_iters", "space", "models", "random_state",
                "specs"):
        assert key in result


def test_optimizer_copy(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=1, random_state=3)
    opt.run(bench1, n_iter=3)
    opt_copy = opt.copy()
    assert type(opt_copy) is type(opt)
    assert_array_equal(opt_copy.Xi, opt.Xi)
    assert_array_equal(opt_copy.yi, opt.yi)
    assert opt_copy.ask() == opt.ask()  # same seed and history: same proposal
    opt_copy.tell(opt_copy.ask(), 0.5)
    assert len(opt.Xi) == 3  # independent histories


def test_exhaust_initial_calls(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)], n_initial_points=2, random_state=1)
    x0 = opt.ask()
    x1 = opt.ask()
    assert x0 == x1  # cached (skopt draws afresh during its random phase)
    r1 = opt.tell(x1, 3.0)
    assert len(r1.models) == 0
    x2 = opt.ask()
    assert x1 != x2
    r2 = opt.tell(x2, 4.0)
    assert len(r2.models) == 1
    x3 = opt.ask()
    assert x2 != x3
    x4 = opt.ask()
    r3 = opt.tell(x3, 1.0)
    assert x3 == x4
    assert len(r3.models) == 2


def test_dimensions_names(algorithm):
    space = [Real(0, 1, name="real"), Categorical(["a", "b", "c"], name="cat"),
             Integer(0, 1, name="int")]
    opt = OPTIMIZERS[algorithm](space, n_initial_points=1)
    result = opt.tell([(0.5, "a", 0.5)], [3])
    names = [d.name for d in result.space.dimensions]
    assert names == ["real", "cat", "int"]
    assert opt.engine_space.names == ["real", "cat", "int"]


@pytest.mark.parametrize("categories", [list(range(2, 12)), [str(i) for i in range(2, 12)]])
def test_categorical_only(algorithm, categories):
    opt = OPTIMIZERS[algorithm]([Categorical(categories), Categorical(categories)],
                                n_initial_points=10, random_state=0)
    for n in range(15):
        x = opt.ask()
        assert x[0] in categories and x[1] in categories
        res = opt.tell(x, 12 * n)
    assert len(res.x_iters) == 15
    assert len({tuple(x) for x in res.x_iters}) == 15  # no repeats in a 100-point space
    next_x = opt.ask(n_points=4)
    assert len(next_x) == 4
    assert len({tuple(x) for x in next_x + res.x_iters}) == 19


def test_categorical_only2(algorithm):
    opt = OPTIMIZERS[algorithm]([Categorical([1, 2, 3]), Categorical([4, 5, 6])],
                                n_initial_points=10, random_state=0)
    for _ in range(2):
        next_x = opt.ask(n_points=4)
        assert len(next_x) == 4
        opt.tell(next_x, [float(np.linalg.norm(x)) for x in next_x])
    next_x = opt.ask(n_points=4)
    assert len(next_x) == 4
    assert len({tuple(x) for x in next_x + opt.Xi}) == 9  # all 9 points, none twice


# --------------------------------------------------------- ask(n_points) tests
@pytest.mark.parametrize("strategy", ["cl_min", "cl_mean", "cl_max"])
def test_ask_n_points_distinct_and_reproducible(algorithm, strategy):
    dims = [(-5.0, 10.0), (0.0, 15.0)]
    runs = []
    for _ in range(2):
        opt = OPTIMIZERS[algorithm](dims, n_initial_points=3, random_state=7)
        batches = []
        for _ in range(3):
            X = opt.ask(n_points=3, strategy=strategy)
            assert X == opt.ask(n_points=3, strategy=strategy)  # cached until a tell
            assert len({tuple(x) for x in X}) == 3
            opt.tell(X, [branin(x) for x in X])
            batches.append(X)
        assert len({tuple(x) for x in opt.Xi}) == 9
        runs.append(batches)
    assert runs[0] == runs[1]


def test_ask_argument_checks(algorithm):
    opt = OPTIMIZERS[algorithm]([(-2.0, 2.0)])
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_points"):
            opt.ask(n_points=bad)
    with pytest.raises(ValueError, match="parallel_strategy"):
        opt.ask(n_points=2, strategy="cl_median")


# --------------------------------------------------------- minimizer API tests
def check_minimizer_api(result, n_calls, n_models=None):
    assert isinstance(result.space, Space)
    if n_models is not None:
        assert len(result.models) == n_models
    assert len(result.x_iters) == n_calls
    assert_array_equal(result.func_vals.shape, (n_calls,))
    assert isinstance(result.x, list)
    assert len(result.x) == 2
    assert isinstance(result.x_iters, list)
    for n in range(n_calls):
        assert isinstance(result.x_iters[n], list)
        assert len(result.x_iters[n]) == 2
        assert isinstance(result.func_vals[n], float)
        assert_almost_equal(result.func_vals[n], branin(result.x_iters[n]))
    assert_array_equal(result.x, result.x_iters[np.argmin(result.func_vals)])
    assert_almost_equal(result.fun, branin(result.x))
    assert isinstance(result.specs, dict)
    assert "args" in result.specs
    assert "function" in result.specs


def check_minimizer_bounds(result, n_calls):
    eps = 10e-9
    assert_array_less(result.x_iters, np.tile([10 + eps, 15 + eps], (n_calls, 1)))
    assert_array_less(np.tile([-5 - eps, 0 - eps], (n_calls, 1)), result.x_iters)


def check_result_callable(res):
    assert isinstance(res, OptimizeResult)
    assert len(res.x_iters) == len(res.func_vals)
    assert np.min(res.func_vals) == res.fun


@pytest.mark.parametrize("verbose", [True, False])
def test_minimizer_api(algorithm, verbose, capsys):
    n_calls, n_initial_points = 7, 3
    seen = []
    result = MINIMIZERS[algorithm](branin, [(-5.0, 10.0), (0.0, 15.0)],
                                   n_initial_points=n_initial_points, n_calls=n_calls,
                                   random_state=1, verbose=verbose,
                                   callback=[seen.append, check_result_callable])
    check_minimizer_api(result, n_calls, n_calls - n_initial_points + 1)
    check_minimizer_bounds(result, n_calls)
    assert len(seen) == n_calls
    assert result.specs["function"] == f"{algorithm}_minimize"
    assert ("Iteration No: 7 ended" in capsys.readouterr().out) == verbose
    with pytest.raises(ValueError):
        MINIMIZERS[algorithm](lambda x: x, [[-5, 10]])


def test_minimizer_api_random_only(algorithm):
    result = MINIMIZERS[algorithm](branin, [(-5.0, 10.0), (0.0, 15.0)], n_initial_points=5,
                                   n_calls=5, random_state=1)
    check_minimizer_api(result, 5)
    check_minimizer_bounds(result, 5)


def test_fixed_random_states_and_space_argument(algorithm):
    dims = [(-5.0, 10.0), (0.0, 15.0)]
    kw = {"n_calls": 5, "n_initial_points": 2, "random_state": 1}
    r1 = MINIMIZERS[algorithm](branin, dims, **kw)
    r2 = MINIMIZERS[algorithm](branin, Space(dims), **kw)
    check_minimizer_api(r2, 5)
    assert_array_equal(r1.x_iters, r2.x_iters)
    assert_array_equal(r1.func_vals, r2.func_vals)


@pytest.mark.parametrize("n_initial_points", [0, 2])
def test_init_vals_and_models(algorithm, n_initial_points):
    space = [(-5.0, 10.0), (0.0, 15.0)]
    x0 = [[1, 2], [3, 4], [5, 6]]
    y0 = list(map(branin, x0))
    n_calls = 5
    res = MINIMIZERS[algorithm](branin, space, x0=x0, y0=y0, random_state=0,
                                n_calls=n_calls, n_initial_points=n_initial_points)
    assert len(res.models) == n_calls - n_initial_points + 1
    res = MINIMIZERS[algorithm](branin, space, x0=x0, random_state=0, n_calls=n_calls,
                                n_initial_points=n_initial_points)
    assert len(res.models) == n_calls - len(x0) - n_initial_points + 1


def check_init_vals(minimizer, func, space, x0, n_calls):
    y0 = list(map(func, x0))
    res = minimizer(func, space, x0=x0, y0=y0, random_state=0, n_calls=n_calls)
    assert_array_equal(res.x_iters[0:len(x0)], x0)
    assert_array_equal(res.func_vals[0:len(y0)], y0)
    assert len(res.x_iters) == len(x0) + n_calls
    res = minimizer(func, space, x0=x0, random_state=0, n_calls=n_calls)
    assert_array_equal(res.x_iters[0:len(x0)], x0)
    assert_array_equal(res.func_vals[0:len(y0)], y0)
    assert len(res.x_iters) == n_calls
    res = minimizer(func, space, x0=x0[0], random_state=0, n_calls=n_calls)
    assert_array_equal(res.x_iters[0], x0[0])
    assert len(res.x_iters) == n_calls
    res = minimizer(func, space, x0=x0[0], y0=y0[0], random_state=0, n_calls=n_calls)
    assert_array_equal(res.x_iters[0], x0[0])
    assert_array_equal(res.func_vals[0], y0[0])
    assert len(res.x_iters) == 1 + n_calls
    with pytest.raises(ValueError, match="same length"):
        minimizer(func, space, x0=x0, y0=[1], n_calls=n_calls)


def test_init_vals(algorithm):
    check_init_vals(lambda *a, **k: MINIMIZERS[algorithm](*a, n_initial_points=1, **k),
                    branin, [(-5.0, 10.0), (0.0, 15.0)], [[1, 2], [3, 4], [5, 6]], 5)


def test_categorical_init_vals(algorithm):
    check_init_vals(lambda *a, **k: MINIMIZERS[algorithm](*a, n_initial_points=0, **k),
                    bench4, [("-2", "-1", "0", "1", "2")], [["0"], ["1"], ["2"]], 4)


def test_mixed_spaces(algorithm):
    check_init_vals(lambda *a, **k: MINIMIZERS[algorithm](*a, n_initial_points=0, **k),
                    bench5, [("-2", "-1", "0", "1", "2"), (-2.0, 2.0)],
                    [["0", 2.0], ["1", 1.0], ["2", 1.0]], 4)


def test_invalid_n_calls_arguments(algorithm):
    minimize = MINIMIZERS[algorithm]
    dims = [(-5.0, 10.0), (0.0, 15.0)]
    with pytest.raises(ValueError):
        minimize(branin, dims, n_calls=0, random_state=1)
    with pytest.raises(ValueError):
        minimize(branin, dims, n_initial_points=0, random_state=1)
    with pytest.raises(ValueError):
        minimize(branin, dims, n_calls=1, n_initial_points=10, random_state=1)
    with pytest.raises(ValueError):
        minimize(branin, dims, n_calls=1, x0=[[-1, 2], [-3, 3], [2, 5]], random_state=1,
                 n_initial_points=7)
    with pytest.raises(ValueError):
        minimize(branin, dims, n_calls=1, x0=[[-1, 2], [-3, 3], [2, 5]], y0=[2.0, 3.0, 5.0],
                 random_state=1, n_initial_points=7)


def test_repeated_x(algorithm):
    with pytest.warns(UserWarning, match="has been evaluated at"):
        MINIMIZERS[algorithm](bench4, [("0", "1")], x0=[["0"], ["1"]], n_calls=3,
                              n_initial_points=0)


def test_consistent_x_iter_dimensions(algorithm):
    minimize = MINIMIZERS[algorithm]
    res = minimize(bench1, dimensions=[(0, 1), (2, 3)], x0=[[0, 2], [1, 2]], n_calls=3,
                   n_initial_points=0)
    assert len({len(x) for x in res.x_iters}) == 1
    assert len(res.x_iters[0]) == 2
    res = minimize(bench1, dimensions=[(0, 1)], x0=[[0], [1]], n_calls=3, n_initial_points=0)
    assert len({len(x) for x in res.x_iters}) == 1
    assert len(res.x_iters[0]) == 1
    with pytest.raises(RuntimeError):
        minimize(bench1, dimensions=[(0, 1)], x0=[[0, 1]], n_calls=3, n_initial_points=0)
    with pytest.raises(RuntimeError):
        minimize(bench1, dimensions=[(0, 1)], x0=[0, 1], n_calls=3, n_initial_points=0)


# ----------------------------------------------------------------- callbacks
def test_early_stopping_delta_x(algorithm):
    n_calls = 11
    res = MINIMIZERS[algorithm](bench1, [(-1.0, 1.0)], callback=DeltaXStopper(0.1),
                                x0=[[-0.1], [0.1], [-0.9]], n_calls=n_calls,
                                n_initial_points=0, random_state=1)
    assert len(res.x_iters) < n_calls


def test_early_stopping_delta_y(algorithm):
    # a constant objective: the 2 best values differ by 0 as soon as there are two
    res = MINIMIZERS[algorithm](lambda x: 0.0, [(-1.0, 1.0)], n_calls=10, n_initial_points=3,
                                callback=DeltaYStopper(0.01, n_best=2), random_state=1)
    assert len(res.x_iters) == 2


def test_deadline_stopper(algorithm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = MINIMIZERS[algorithm](bench1, [(-1.0, 1.0)], n_calls=50, n_initial_points=5,
                                    callback=DeadlineStopper(0.0), random_state=1)
    assert len(res.x_iters) == 1
