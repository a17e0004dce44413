import numpy as np
import pytest

from hdbo_engine.space import Categorical, Integer, Real, Space


def test_real_round_trip_linear_and_log():
    space = Space([Real(-3.0, 5.0), Real(1e-4, 10.0, log=True)])
    rows = [[-3.0, 1e-4], [5.0, 10.0], [0.25, 0.01]]
    cube = space.encode(rows)
    assert cube.shape == (3, 2)
    assert np.all((cube >= 0) & (cube <= 1))
    np.testing.assert_allclose(space.decode(cube), rows, rtol=1e-12)
    # log scale: geometric midpoint sits at 0.5
    assert space.encode([[0.0, np.sqrt(1e-4 * 10.0)]])[0, 1] == pytest.approx(0.5)


def test_integer_bins_are_equal_width_and_round_trip():
    dim = Integer(2, 5)
    u = np.linspace(0, 1, 100001)[:, None]
    values = np.array(dim.decode(u))
    counts = np.bincount(values - 2)
    assert counts.min() / counts.max() > 0.999
    cube = dim.encode([2, 3, 4, 5])
    assert dim.decode(cube) == [2, 3, 4, 5]
    assert all(type(v) is int for v in dim.decode(cube))


def test_integer_log_round_trip():
    dim = Integer(1, 1000, log=True)
    vals = [1, 2, 10, 999, 1000]
    assert dim.decode(dim.encode(vals)) == vals


def test_categorical_one_hot_argmax_and_single_choice():
    dim = Categorical(["a", "b", 3])
    cube = dim.encode(["b", 3])
    np.testing.assert_array_equal(cube, [[0, 1, 0], [0, 0, 1]])
    assert dim.decode(np.array([[0.2, 0.1, 0.7]])) == [3]
    single = Space([Categorical(["only"]), Real(0, 1)])
    assert single.n_columns == 2
    assert single.decode(np.array([[0.3, 0.5]])) == [["only", 0.5]]


def test_mixed_space_round_trip_and_snap():
    space = Space([Real(0, 1), Integer(-5, 5), Categorical([True, False]), Real(1, 100, log=True)],
                  names=["a", "b", "c", "d"])
    assert space.n_columns == 5
    rows = [[0.5, -5, False, 3.0], [1.0, 5, True, 100.0]]
    np.testing.assert_allclose(np.array(space.decode(space.encode(rows)), dtype=float),
                               np.array(rows, dtype=float))
    rng = np.random.default_rng(0)
    snapped = space.snap(rng.random((20, 5)))
    np.testing.assert_allclose(space.snap(snapped), snapped)  # idempotent


def test_huge_ranges_do_not_overflow():
    dim = Real(-1e308, 1e308)
    cube = dim.encode([-1e308, 0.0, 1e308])
    np.testing.assert_allclose(cube[:, 0], [0.0, 0.5, 1.0])
    assert dim.decode(cube) == pytest.approx([-1e308, 0.0, 1e308])
    big = Integer(0, 10**12)
    assert big.decode(big.encode([0, 123456789, 10**12])) == [0, 123456789, 10**12]


@pytest.mark.parametrize("factory, match", [
    (lambda: Real(1.0, 1.0), "low < high"),
    (lambda: Integer(3, 3), "low < high"),
    (lambda: Real(0.0, 1.0, log=True), "low > 0"),
    (lambda: Integer(-1, 4, log=True), "low > 0"),
    (lambda: Real(0.0, float("inf")), "finite"),
    (lambda: Integer(0.5, 3), "whole numbers"),
    (lambda: Categorical([]), "non-empty"),
    (lambda: Space([]), "at least one"),
    (lambda: Space(0), ">= 1"),
])
def test_invalid_dimensions_raise_clear_errors(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


@pytest.mark.parametrize("factory, match", [
    (lambda: Real("a", 1.0), "Real: low must be a real number, got 'a'"),
    (lambda: Real(0.0, None), "Real: high must be a real number, got None"),
    (lambda: Integer(0, "8"), "Integer: high must be a real number, got '8'"),
])
def test_bounds_of_the_wrong_type_name_the_argument(factory, match):
    with pytest.raises(TypeError, match=match):
        factory()


def test_encode_errors_name_the_parameter():
    space = Space([Real(0, 1), Categorical(["x", "y"])], names=["lr", "opt"])
    with pytest.raises(ValueError, match="'lr'.*outside"):
        space.encode([[2.0, "x"]])
    with pytest.raises(ValueError, match="'opt'.*not one of"):
        space.encode([[0.5, "z"]])
    with pytest.raises(ValueError, match="has 3 values, expected 2"):
        space.encode([[0.5, "x", 1]])
    with pytest.raises(ValueError, match="3 columns"):
        space.decode(np.zeros((1, 2)))
    with pytest.raises(TypeError, match="dimension 0"):
        Space([(0, 1)])


def test_int_space_is_unit_cube():
    space = Space(3)
    assert space.is_unit_cube and space.n_columns == 3
    x = np.array([[0.1, 0.2, 0.3]])
    np.testing.assert_array_equal(space.snap(x), x)
