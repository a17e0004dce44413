"""Acquisition maximisation (``hdbo_engine.maximize``): batched L-BFGS-B and top candidates.

Each expected point or index is worked out by hand from an acquisition whose maximiser in
the box is known: a negative squared distance to a centre peaks at the centre clipped to the
box.
"""

from __future__ import annotations

import numpy as np
import pytest

from hdbo_engine.maximize import lbfgsb_batch, top_k


def test_lbfgsb_batch_finds_each_start_local_max_in_box():
    centers = np.array([[0.2, 0.8], [0.9, 0.1]])

    def acq(Y):
        diff = Y - centers
        return -(diff**2).sum(1), -2 * diff

    Y, vals = lbfgsb_batch(acq, np.full((2, 2), 0.5))
    np.testing.assert_allclose(Y, centers, atol=1e-5)
    Yb, _ = lbfgsb_batch(acq, np.full((2, 2), 0.5), lower=0.0, upper=0.6)
    np.testing.assert_allclose(Yb, [[0.2, 0.6], [0.6, 0.1]], atol=1e-5)
    assert list(top_k(np.array([0.1, 3.0, 2.0]), 2)) == [1, 2]


def test_lbfgsb_batch_takes_a_bound_per_coordinate():
    """-(||y - (0.6, 0.2)||^2) over [0, 0.3] x [0.5, 1] peaks at the corner (0.3, 0.5), where
    its value is -((0.3 - 0.6)^2 + (0.5 - 0.2)^2) = -0.18; one start is already there."""
    centre = np.array([0.6, 0.2])

    def acq(Y):
        diff = Y - centre
        return -(diff**2).sum(1), -2 * diff

    starts = np.array([[0.1, 0.9], [0.25, 0.6], [0.3, 0.5]])
    Y, vals = lbfgsb_batch(acq, starts, lower=np.array([0.0, 0.5]), upper=np.array([0.3, 1.0]))
    np.testing.assert_allclose(Y, [[0.3, 0.5]] * 3, atol=1e-6)
    np.testing.assert_allclose(vals, [-0.18] * 3, atol=1e-6)


def test_lbfgsb_batch_keeps_a_start_whose_value_is_not_finite():
    """-(y - 0.8)^2 on [0, 1], not a number below 0.05: the start at 0.3 climbs to 0.8
    (value 0), the one at 0.02 stays where it is with its value."""

    def acq(Y):
        y = Y[:, 0]
        value = np.where(y < 0.05, np.nan, -((y - 0.8) ** 2))
        return value, (-2 * (y - 0.8))[:, None]

    Y, vals = lbfgsb_batch(acq, np.array([[0.3], [0.02]]))
    assert Y[0, 0] == pytest.approx(0.8, abs=1e-5) and vals[0] == pytest.approx(0.0, abs=1e-9)
    assert Y[1, 0] == 0.02 and np.isnan(vals[1])


def test_top_k_is_the_indices_of_the_k_largest_best_first():
    values = np.array([0.5, -1.0, 3.0, 2.0, 3.5])
    np.testing.assert_array_equal(top_k(values, 3), [4, 2, 3])
    np.testing.assert_array_equal(top_k(values, 1), [4])
    # k beyond the number of values: every index, best first
    np.testing.assert_array_equal(top_k(values, 9), [4, 2, 3, 0, 1])


# ------------------------------------------- the candidate recipe, the search box, the maximiser
def test_incumbent_candidates_are_the_incumbent_perturbations_then_uniform_draws():
    """n = 10 in D = 2: the incumbent, 10 // 4 = 2 perturbations, 10 - 1 - 2 = 7 uniform
    draws, drawn from the generator in that order (normal (2, 2), then uniform (7, 2))."""
    from hdbo_engine.maximize import incumbent_candidates

    inc = np.array([0.5, 0.25])
    lo, hi = np.array([0.4, 0.0]), np.array([0.8, 0.5])
    C = incumbent_candidates(inc, lo, hi, 10, np.random.default_rng(7))
    assert C.shape == (10, 2)
    np.testing.assert_array_equal(C[0], inc)
    twin = np.random.default_rng(7)
    steps = twin.normal(0.0, 0.1, (2, 2)) * np.array([0.4, 0.5])  # sd 0.1 of each side
    np.testing.assert_array_equal(C[1:3], np.clip(inc + steps, lo, hi))
    np.testing.assert_array_equal(C[3:], lo + twin.random((7, 2)) * np.array([0.4, 0.5]))
    assert np.all(C >= lo) and np.all(C <= hi)


def test_incumbent_candidates_absolute_steps_and_a_lone_incumbent():
    """relative=False: steps of sd 0.1 of the cube, whatever the box's side; n = 1 is the
    incumbent alone and leaves the generator untouched."""
    from hdbo_engine.maximize import incumbent_candidates

    inc = np.array([0.5, 0.5, 0.5])
    lo, hi = np.full(3, 0.3), np.full(3, 0.7)
    C = incumbent_candidates(inc, lo, hi, 8, np.random.default_rng(3), relative=False)
    twin = np.random.default_rng(3)
    np.testing.assert_array_equal(C[1:3], np.clip(inc + twin.normal(0.0, 0.1, (2, 3)), lo, hi))
    np.testing.assert_array_equal(C[3:], lo + twin.random((5, 3)) * (hi - lo))
    rng = np.random.default_rng(11)
    np.testing.assert_array_equal(incumbent_candidates(inc, lo, hi, 1, rng), inc[None])
    assert rng.random() == np.random.default_rng(11).random()


def test_gaussian_perturbations_stay_in_the_box_and_fix_a_closed_side():
    """A side of width 0 (lower = upper = 0.2) pins its coordinate; a centre on the upper
    face never leaves the box."""
    from hdbo_engine.maximize import gaussian_perturbations

    lo, hi = np.array([0.2, 0.0]), np.array([0.2, 1.0])
    P = gaussian_perturbations(np.array([0.2, 1.0]), lo, hi, 200, np.random.default_rng(0))
    assert P.shape == (200, 2)
    assert np.all(P[:, 0] == 0.2)
    assert np.all((P[:, 1] >= 0.0) & (P[:, 1] <= 1.0)) and np.any(P[:, 1] == 1.0)
    assert np.any(P[:, 1] < 1.0)


def test_maximize_candidates_refines_the_best_scored_starts_best_first():
    """Score -(x - 0.3)^2 on [0.9, 0.35, 0.1, 0.3]: the two best are 0.3 then 0.35."""
    from hdbo_engine.maximize import maximize_candidates

    cand = np.array([[0.9], [0.35], [0.1], [0.3]])
    seen = []

    def refine(starts):
        seen.append(starts.copy())
        return starts + 1.0, np.array([5.0, 6.0])

    def score(C):
        return -((C[:, 0] - 0.3) ** 2)

    X, vals = maximize_candidates(cand, score, 2, refine)
    np.testing.assert_array_equal(seen[0], [[0.3], [0.35]])
    np.testing.assert_array_equal(X, [[1.3], [1.35]])
    np.testing.assert_array_equal(vals, [5.0, 6.0])
    # no starts: the candidates and their scores, nothing refined
    X0, v0 = maximize_candidates(cand, score, 0, refine)
    assert len(seen) == 1 and X0 is cand
    np.testing.assert_allclose(v0, [-0.36, -0.0025, -0.04, 0.0], atol=1e-15)


def test_search_box_is_the_trust_region_else_the_radius_else_the_cube():
    """Centre (0.5, 0.1, 0.95): a trust region of side 0.4 gives half-side 0.2, a radius 0.1
    its own; both clipped to [0, 1]."""
    from hdbo_engine.trust_region import TrustRegion, search_box

    centre = np.array([0.5, 0.1, 0.95])
    tr = TrustRegion(dim=3, failure_tol=4, length_init=0.4)
    lo, hi = search_box(3, centre, tr)
    np.testing.assert_allclose(lo, [0.3, 0.0, 0.75])
    np.testing.assert_allclose(hi, [0.7, 0.3, 1.0])
    lo_b, hi_b = tr.bounds(centre)
    np.testing.assert_array_equal(lo, lo_b)
    np.testing.assert_array_equal(hi, hi_b)
    np.testing.assert_array_equal(search_box(3, centre, tr, radius=0.1)[0], lo)  # region wins
    lo, hi = search_box(3, centre, radius=0.1)
    np.testing.assert_allclose(lo, [0.4, 0.0, 0.85])
    np.testing.assert_allclose(hi, [0.6, 0.2, 1.0])
    for box in (search_box(3), search_box(3, None, tr, 0.1), search_box(3, centre)):
        np.testing.assert_array_equal(box[0], np.zeros(3))
        np.testing.assert_array_equal(box[1], np.ones(3))
    # a block of 2 coordinates inside a 10-dimensional trust region
    lo, hi = search_box(2, np.array([0.5, 0.5]), TrustRegion(dim=10, failure_tol=4))
    np.testing.assert_allclose(lo, [0.1, 0.1])
    np.testing.assert_allclose(hi, [0.9, 0.9])
