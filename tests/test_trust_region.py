"""The trust region's rule (``hdbo_engine.trust_region``): TuRBO's counts, ties skipped."""

from __future__ import annotations

import numpy as np
import pytest

from hdbo_engine.trust_region import TrustRegion

MODEL: dict = {}  # a model proposal's meta (no "init")


def test_successes_double_and_failures_halve_the_side():
    tr = TrustRegion(2, failure_tol=2)
    tr.observe(np.array([10.0]), [{"init": True}])  # the design only moves best
    assert (tr.best, tr.successes, tr.failures) == (10.0, 0, 0)
    tr.observe(np.array([9.0, 8.0, 7.0]), [MODEL] * 3)
    assert tr.length == 1.6  # three improvements: 0.8 doubled
    tr.observe(np.array([20.0, 30.0]), [MODEL] * 2)
    assert tr.length == 0.8


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
