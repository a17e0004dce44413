"""The acquisition functions (``hdbo_engine.acquisition``) against closed forms.

Expected values come from the formulas written out here (GP-UCB, Srinivas et al. 2010;
EI, Jones et al. 1998; log-EI, Ament et al. 2023), from numerical integration, from
``mpmath`` at 50 digits, and from central differences of the values, never from the code
under test. A tiny two-point GP, whose posterior is written out by hand, checks that each
acquisition's argmax is the point with the higher upper bound or improvement.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from helpers import ei_by_quadrature

from hdbo_engine.acquisition import expected_improvement, log_expected_improvement, ucb

mpmath.mp.dps = 50


def mp_log_h(z: float) -> float:
    """``log(phi(z) + z Phi(z))`` at 50 digits."""
    zm = mpmath.mpf(z)
    phi = mpmath.exp(-zm**2 / 2) / mpmath.sqrt(2 * mpmath.pi)
    cdf = mpmath.ncdf(zm)
    return float(mpmath.log(phi + zm * cdf))


def central_differences(fn, mean, var, dmean, dvar, h=1e-6):
    """Derivative of ``fn(mean, var)`` along each input direction j, where the inputs move
    as ``mean + s dmean[:, j]``, ``var + s dvar[:, j]`` (the chain rule the gradients use)."""
    cols = []
    for j in range(dmean.shape[1]):
        up = fn(mean + h * dmean[:, j], var + h * dvar[:, j])
        down = fn(mean - h * dmean[:, j], var - h * dvar[:, j])
        cols.append((up - down) / (2 * h))
    return np.stack(cols, axis=1)


MEAN = np.array([0.3, -0.2, 1.5, -1.0])
VAR = np.array([0.04, 1.0, 0.25, 0.09])
DMEAN = np.array([[1.0, -0.5], [0.3, 2.0], [-1.5, 0.2], [0.7, 0.7]])
DVAR = np.array([[0.2, -0.1], [0.05, 0.3], [-0.4, 0.1], [0.02, -0.03]])


def test_ucb_value_and_gradient_are_mu_plus_root_beta_sigma_and_its_derivative():
    beta = 2.25  # sqrt(beta) = 1.5
    value, grad = ucb(MEAN, VAR, DMEAN, DVAR, beta)
    np.testing.assert_allclose(value, MEAN + 1.5 * np.sqrt(VAR), rtol=1e-14)
    expected = central_differences(lambda m, v: m + 1.5 * np.sqrt(v), MEAN, VAR, DMEAN, DVAR)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)
    assert ucb(MEAN, VAR, None, None, beta)[1] is None


def test_expected_improvement_value_matches_quadrature_and_its_closed_form_at_u_zero():
    best = 0.5
    value, _ = expected_improvement(MEAN, VAR, None, None, best)
    expected = [ei_by_quadrature(m, math.sqrt(v), best) for m, v in zip(MEAN, VAR, strict=True)]
    np.testing.assert_allclose(value, expected, rtol=1e-8)
    # at mean == best, EI = sigma phi(0) = sigma / sqrt(2 pi)
    at_best, _ = expected_improvement(np.array([best]), np.array([0.36]), None, None, best)
    assert at_best[0] == pytest.approx(0.6 / math.sqrt(2 * math.pi), rel=1e-14)


@pytest.mark.parametrize("z", [2.0, 0.0, -1.0, -4.9, -5.0, -5.1, -6.0, -10.0, -30.0, -200.0])
def test_log_ei_is_log_h_of_u_plus_log_sigma_at_fifty_digits(z):
    """``u = (mu - best) / sigma``; both branches of ``log h`` (``u`` above and at or below
    -5) against mpmath."""
    sd, best = 0.7, 0.25
    mean = best + z * sd
    value, _ = log_expected_improvement(np.array([mean]), np.array([sd**2]), None, None, best)
    assert value[0] == pytest.approx(math.log(sd) + mp_log_h(z), rel=1e-9, abs=1e-11)


@pytest.mark.parametrize("acquisition, shift", [
    (expected_improvement, 0.0), (log_expected_improvement, 0.0),
    (log_expected_improvement, -3.0), (log_expected_improvement, -8.0)])
def test_ei_and_log_ei_gradients_match_central_differences(acquisition, shift):
    """The shift -8 puts every ``u`` of log-EI below -5 (its asymptotic branch)."""
    best, mean = 0.1, MEAN + shift

    def value_of(m, v):
        return acquisition(m, v, None, None, best)[0]

    value, grad = acquisition(mean, VAR, DMEAN, DVAR, best)
    np.testing.assert_allclose(value, value_of(mean, VAR), rtol=1e-14)
    np.testing.assert_allclose(grad, central_differences(value_of, mean, VAR, DMEAN, DVAR),
                               rtol=1e-5, atol=1e-8)
    assert acquisition(mean, VAR, None, None, best)[1] is None


def _two_point_posterior(xq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior of a noise-free GP with k(x, x') = exp(-(x - x')^2 / 2) observed at
    x = 0 (f = 1) and x = 1 (f = 0), written out with the 2x2 inverse."""
    k11, k12 = 1.0, math.exp(-0.5)
    det = k11 * k11 - k12 * k12
    inv = np.array([[k11, -k12], [-k12, k11]]) / det
    kq = np.exp(-0.5 * (xq[:, None] - np.array([0.0, 1.0])[None, :]) ** 2)
    mean = kq @ inv @ np.array([1.0, 0.0])
    var = 1.0 - np.einsum("ij,jk,ik->i", kq, inv, kq)
    return mean, var


def test_on_a_two_point_gp_ucb_and_ei_choose_by_upper_bound_and_improvement():
    """Candidates: near the good observation (high mean, low sigma) and far beyond the bad
    one (low mean, high sigma). A small beta picks the former, a large beta the latter;
    EI over best = 1 prefers the far point, whose improvement comes from its spread."""
    xq = np.array([0.05, 3.0])
    mean, var = _two_point_posterior(xq)
    assert mean[0] > mean[1] and var[0] < var[1]
    for beta in (0.01, 25.0):
        bound = mean + math.sqrt(beta) * np.sqrt(var)
        value, _ = ucb(mean, var, None, None, beta)
        np.testing.assert_allclose(value, bound, rtol=1e-14)
        assert int(np.argmax(value)) == int(np.argmax(bound))
    assert int(np.argmax(ucb(mean, var, None, None, 0.01)[0])) == 0
    assert int(np.argmax(ucb(mean, var, None, None, 25.0)[0])) == 1
    improvement = [ei_by_quadrature(m, math.sqrt(v), 1.0) for m, v in zip(mean, var, strict=True)]
    ei, _ = expected_improvement(mean, var, None, None, 1.0)
    np.testing.assert_allclose(ei, improvement, rtol=1e-8)
    assert int(np.argmax(ei)) == int(np.argmax(improvement))
    log_ei, _ = log_expected_improvement(mean, var, None, None, 1.0)
    assert int(np.argmax(log_ei)) == int(np.argmax(improvement))
