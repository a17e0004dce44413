"""The trust region's rule (``hdbo_engine.trust_region``): TuRBO's counts, ties skipped.

Expected sides and counters are worked out by hand in each test from TuRBO's rule
(Eriksson et al., NeurIPS 2019, Sec. 2: double the side after ``success_tol`` consecutive
improvements, up to ``length_max``; halve it after ``failure_tol`` consecutive failures; an
improvement is a value below ``best - 1e-3 |best|``) and the module's departures (restart at
``length_init`` below ``length_min``, initial-design points and ties not counted), or, for
long random sequences, by :func:`turbo_rule`, a transcription of that rule written here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdbo_engine.trust_region import TrustRegion, perturbation_candidates

MODEL: dict = {}  # a model proposal's meta (no "init")
INIT = {"init": True}


def turbo_rule(values, inits, failure_tol, success_tol=3, length_init=0.8,
               length_min=2.0**-7, length_max=1.6, skip_ties=True):
    """``(length, successes, failures, restarts, best)`` after each value, from the rule as
    the module docstring states it."""
    length, succ, fail, restarts, best = length_init, 0, 0, 0, math.inf
    states = []
    for value, init in zip(values, inits, strict=True):
        finite = math.isfinite(value)
        better = finite and value < best - 1e-3 * abs(best)
        flat = skip_ties and value == best
        if finite and value < best:
            best = value
        if not init and not flat:
            succ, fail = (succ + 1, 0) if better else (0, fail + 1)
            if succ == success_tol:
                length, succ = min(length * 2, length_max), 0
            elif fail == failure_tol:
                length, fail = length * 0.5, 0
                if length < length_min:
                    length, restarts = length_init, restarts + 1
        states.append((length, succ, fail, restarts, best))
    return states


def observe_each(tr: TrustRegion, values, inits):
    states = []
    for value, init in zip(values, inits, strict=True):
        tr.observe(np.array([value]), [INIT if init else MODEL])
        states.append((tr.length, tr.successes, tr.failures, tr.restarts, tr.best))
    return states


def test_successes_double_and_failures_halve_the_side():
    tr = TrustRegion(2, failure_tol=2)
    tr.observe(np.array([10.0]), [{"init": True}])  # the design only moves best
    assert (tr.best, tr.successes, tr.failures) == (10.0, 0, 0)
    tr.observe(np.array([9.0, 8.0]), [MODEL] * 2)
    assert (tr.length, tr.successes, tr.failures) == (0.8, 2, 0)
    tr.observe(np.array([7.0]), [MODEL])
    assert (tr.length, tr.successes) == (1.6, 0)  # three improvements: 0.8 doubled, reset
    tr.observe(np.array([20.0]), [MODEL])
    assert (tr.length, tr.failures) == (1.6, 1)
    tr.observe(np.array([6.0]), [MODEL])  # a success resets the failure count
    assert (tr.successes, tr.failures) == (1, 0)
    tr.observe(np.array([20.0, 30.0]), [MODEL] * 2)  # ... and a failure the success count
    assert (tr.length, tr.successes, tr.failures) == (0.8, 0, 0)


def test_the_side_never_grows_past_length_max():
    tr = TrustRegion(2, failure_tol=5, length_init=0.8, length_max=1.0)
    tr.observe(np.array([10.0, 9.0, 8.0, 7.0]), [INIT, MODEL, MODEL, MODEL])
    assert tr.length == 1.0  # min(2 * 0.8, 1.0)
    tr.observe(np.array([6.0, 5.0, 4.0]), [MODEL] * 3)
    assert tr.length == 1.0


def test_improvement_needs_a_relative_margin_of_one_thousandth():
    tr = TrustRegion(2, failure_tol=10)
    tr.observe(np.array([10.0]), [INIT])
    tr.observe(np.array([9.995]), [MODEL])  # not below 10 - 0.01: a failure, best moves
    assert (tr.successes, tr.failures, tr.best) == (0, 1, 9.995)
    tr.observe(np.array([9.98]), [MODEL])  # below 9.995 - 0.009995
    assert (tr.successes, tr.failures) == (1, 0)
    neg = TrustRegion(2, failure_tol=10)
    neg.observe(np.array([-10.0, -10.005, -10.02]), [INIT, MODEL, MODEL])
    # -10.005 is not below -10 - 0.01 (the margin uses |best|); -10.02 is below -10.015
    assert (neg.successes, neg.failures, neg.best) == (1, 0, -10.02)
    zero = TrustRegion(2, failure_tol=10)
    zero.observe(np.array([0.0, -1e-12]), [INIT, MODEL])  # at best = 0 any decrease counts
    assert zero.successes == 1


def test_failed_evaluations_count_as_failures_and_never_move_best():
    tr = TrustRegion(2, failure_tol=2)
    tr.observe(np.array([np.nan]), [INIT])
    assert tr.best == math.inf and (tr.successes, tr.failures) == (0, 0)
    tr.observe(np.array([5.0]), [INIT])
    tr.observe(np.array([np.nan, -np.inf]), [MODEL, MODEL])
    assert (tr.best, tr.length, tr.failures) == (5.0, 0.4, 0)


@pytest.mark.parametrize("skip_ties", [True, False])
def test_a_value_equal_to_the_best_counts_only_when_ties_are_not_skipped(skip_ties: bool):
    tr = TrustRegion(2, failure_tol=2, skip_ties=skip_ties)
    tr.observe(np.array([5.0, 9.0]), [{"init": True}, MODEL])  # one failure
    tr.observe(np.array([5.0, 5.0]), [MODEL] * 2)  # the best's value exactly
    if skip_ties:  # a flat move says nothing about the step length
        assert (tr.length, tr.failures) == (0.8, 1)
    else:  # TuRBO: two more failures, the second halves the side
        assert (tr.length, tr.failures) == (0.4, 1)
    tr.observe(np.array([4.0]), [MODEL])  # an improvement is never a tie
    assert (tr.successes, tr.failures, tr.best) == (1, 0, 4.0)


def test_halving_restarts_only_strictly_below_length_min():
    tr = TrustRegion(2, failure_tol=1, length_init=0.5, length_min=0.125)
    tr.observe(np.array([1.0]), [INIT])
    sides = []
    for _ in range(4):
        tr.observe(np.array([2.0]), [MODEL])
        sides.append((tr.length, tr.restarts))
    # 0.5 -> 0.25 -> 0.125 (equal to the minimum: kept) -> 0.0625 < 0.125: back to 0.5
    assert sides == [(0.25, 0), (0.125, 0), (0.5, 1), (0.25, 1)]
    assert tr.best == 1.0  # a restart keeps the incumbent


def test_long_random_histories_follow_turbos_rule_step_by_step():
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = 80
        # a drifting walk with repeated values (ties) and a few failures
        values = np.round(np.cumsum(rng.normal(0.0, 1.0, n)) - 0.05 * np.arange(n), 1)
        values[rng.random(n) < 0.05] = np.nan
        inits = list(rng.random(n) < 0.15)
        kwargs = dict(failure_tol=int(rng.integers(1, 5)), success_tol=int(rng.integers(1, 4)),
                      skip_ties=bool(trial % 2))
        expected = turbo_rule(list(values), inits, **kwargs)
        got = observe_each(TrustRegion(3, **kwargs), values, inits)
        assert got == expected
        batch = TrustRegion(3, **kwargs)  # one observe call with the whole history
        batch.observe(values, [INIT if i else MODEL for i in inits])
        assert (batch.length, batch.successes, batch.failures, batch.restarts,
                batch.best) == expected[-1]


def test_bounds_are_the_box_around_the_centre_clipped_to_the_cube():
    tr = TrustRegion(3, failure_tol=2, length_init=0.4)
    lo, hi = tr.bounds(np.array([0.5, 0.1, 0.95]))
    np.testing.assert_allclose(lo, [0.3, 0.0, 0.75])
    np.testing.assert_allclose(hi, [0.7, 0.3, 1.0])
    lo, hi = tr.bounds(np.array([0.5, 0.5, 0.5]), weights=np.array([0.5, 1.0, 2.0]))
    np.testing.assert_allclose(lo, [0.4, 0.3, 0.1])
    np.testing.assert_allclose(hi, [0.6, 0.7, 0.9])


TOLS = "^failure_tol and success_tol must be >= 1$"
LENGTHS = "^expected 0 < length_min <= length_init <= length_max$"


@pytest.mark.parametrize("kwargs, match", [
    (dict(failure_tol=0), TOLS), (dict(failure_tol=1, success_tol=0), TOLS),
    (dict(failure_tol=1, length_min=0.0), LENGTHS), (dict(failure_tol=1, length_min=0.9), LENGTHS),
    (dict(failure_tol=1, length_max=0.7), LENGTHS),
])
def test_bad_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrustRegion(2, **kwargs)


def test_values_and_metas_must_pair_up():
    tr = TrustRegion(2, failure_tol=2)
    with pytest.raises(ValueError):
        tr.observe(np.array([1.0, 2.0]), [MODEL])


def test_a_value_exactly_at_the_margin_is_not_an_improvement():
    tr = TrustRegion(2, failure_tol=10)
    tr.observe(np.array([10.0]), [INIT])
    tr.observe(np.array([10.0 - 1e-3 * 10.0]), [MODEL])  # best - 1e-3 |best| exactly
    assert (tr.successes, tr.failures) == (0, 1)


def test_boundary_settings_are_accepted():
    tr = TrustRegion(2, failure_tol=1, success_tol=1, length_min=0.8, length_init=0.8,
                     length_max=0.8)
    assert (tr.length, tr.successes, tr.failures, tr.restarts) == (0.8, 0, 0, 0)
    assert tr.best == math.inf


@pytest.mark.parametrize("dim", [5, 40])
def test_perturbation_candidates_redraw_coordinates_with_probability_min_1_20_over_d(dim):
    rng = np.random.default_rng(1)
    centre = np.full(dim, 0.5)
    lower, upper = np.full(dim, 0.4), np.full(dim, 0.7)
    n = 3000
    cand = perturbation_candidates(centre, lower, upper, n, rng)
    assert cand.shape == (n, dim)
    changed = cand != centre
    assert changed.any(axis=1).all()  # at least one coordinate per candidate
    assert (cand >= lower).all() and (cand <= upper).all()
    p = min(1.0, 20.0 / dim)
    # each coordinate is redrawn with probability p, or as the forced one (1 / dim)
    expected = p + (1.0 - p) / dim
    assert changed.mean() == pytest.approx(expected, abs=0.01)
    # ... and the forced coordinate is drawn per candidate: no column changes far more often
    assert changed.mean(axis=0).max() < expected + 0.05
    moved = cand[changed]  # uniform on [0.4, 0.7]: mean 0.55, variance 0.09 / 12
    assert moved.mean() == pytest.approx(0.55, abs=0.005)
    assert moved.var() == pytest.approx(0.09 / 12, rel=0.05)


def test_perturbation_candidates_in_one_dimension_redraw_the_coordinate():
    cand = perturbation_candidates(np.array([0.5]), np.array([0.0]), np.array([1.0]), 50,
                                   np.random.default_rng(2))
    assert cand.shape == (50, 1) and len(np.unique(cand)) == 50
