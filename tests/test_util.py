"""The shared checks and failure imputation (``hdbo_engine.util``), against values worked out
by hand from each function's docstring."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hdbo_engine.util import (
    as_float_array,
    check_bool,
    check_int,
    impute_failures,
    is_finite_number,
    is_int,
    is_number,
    warn_beyond_measured_scale,
)

nan, inf = float("nan"), float("inf")


@pytest.mark.parametrize("y, expected", [
    # the leading failure has no finite value before it: the worst of all, 3
    ([nan, 3.0, nan, 1.0, nan], [3.0, 3.0, 3.0, 1.0, 3.0]),
    # the worst finite value before each: 1 at index 2 (3 comes later), then 3
    ([nan, 1.0, nan, 3.0, inf, 2.0, -inf], [3.0, 1.0, 1.0, 3.0, 3.0, 2.0, 3.0]),
    ([nan, 2.0, inf, 1.0, -inf], [2.0, 2.0, 2.0, 1.0, 2.0]),
    ([nan, -inf], [0.0, 0.0]),  # nothing finite: 0
    ([4.0, -1.0], [4.0, -1.0]),  # nothing to impute
])
def test_impute_failures_takes_the_worst_finite_value_before_each(y, expected):
    np.testing.assert_array_equal(impute_failures(y), expected)


def test_impute_failures_leaves_its_argument_unchanged():
    y = np.array([1.0, nan, 2.0])
    out = impute_failures(y)
    assert np.isnan(y[1]) and out[1] == 1.0
    clean = np.array([1.0, 2.0])
    out = impute_failures(clean)
    out[0] = 5.0
    assert clean[0] == 1.0


def test_is_int_is_number_and_is_finite_number_refuse_bools():
    assert is_int(3) and is_int(np.int64(-2))
    assert not is_int(True) and not is_int(3.0) and not is_int("3")
    assert is_number(1.5) and is_number(np.float32(1.5)) and is_number(np.int8(1))
    assert not is_number(False) and not is_number("1") and not is_number(1j)
    assert is_finite_number(2) and is_finite_number(np.float64(-1e300))
    assert not is_finite_number(inf) and not is_finite_number(nan)
    assert not is_finite_number(np.bool_(True))


def test_as_float_array_converts_numbers_and_nested_sequences():
    out = as_float_array([[1, 2], [3, 4]], "X", "a matrix")
    assert out.dtype == np.float64 and out.shape == (2, 2)
    np.testing.assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])
    assert as_float_array(7, "y", "a number") == 7.0
    np.testing.assert_array_equal(as_float_array([True, False], "m", "flags"), [1.0, 0.0])


@pytest.mark.parametrize("value", ["0.5", None, [1.0, None], 1j, [[1.0, 2.0], [3.0]],
                                   {"a": 1}])
def test_as_float_array_refuses_what_is_not_a_number_naming_the_argument(value):
    with pytest.raises(TypeError, match=r"^X: expected an array of numbers, got "):
        as_float_array(value, "X", "an array of numbers")


def test_as_float_array_refuses_a_number_too_large_for_float64():
    with pytest.raises(ValueError, match=r"^y: expected a number; a value is too large"):
        as_float_array([1, 10**400], "y", "a number")


def test_check_int_accepts_ints_from_low_and_none_only_when_optional():
    check_int("n", 1, 1)
    check_int("n", np.int32(5), 1)
    check_int("n", None, 1, optional=True)
    for bad in (0, 2.0, True, None, "2"):
        with pytest.raises(ValueError, match=r"^n: expected an int >= 1, got "):
            check_int("n", bad, 1)
    with pytest.raises(ValueError, match=r"^n: expected an int >= 1 or None, got 0$"):
        check_int("n", 0, 1, optional=True)


def test_check_bool_accepts_python_and_numpy_bools_only():
    check_bool("flag", False)
    check_bool("flag", np.bool_(True))
    for bad in (1, 0, "yes", None):
        with pytest.raises(TypeError, match=r"^flag: expected a bool, got "):
            check_bool("flag", bad)


def test_the_scale_warning_fires_only_beyond_the_limit_or_the_budget_cap():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_beyond_measured_scale("X", "x", 10, 100, limit=1000)  # 10 x 100 = the limit
        warn_beyond_measured_scale("X", "x", 10**6, None)  # no budget: nothing to judge
        warn_beyond_measured_scale("X", "x", 1, 50, max_budget=50)
    with pytest.warns(UserWarning, match=r"^X: D = 10 with budget = 101 .*"
                                         r"\(D x budget <= 1e\+03\).*docs/algorithms/x\.md"):
        warn_beyond_measured_scale("X", "x", 10, 101, limit=1000)
    with pytest.warns(UserWarning, match=r"D = 1 with budget = 51 .*budget <= 50\)"):
        warn_beyond_measured_scale("X", "x", 1, 51, max_budget=50)
