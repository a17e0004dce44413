"""The exact GP (``hdbo_engine.gp``) against formulas written out here.

Kernel values from Rasmussen & Williams eqs. (4.9) and (4.17), the posterior from eqs.
(2.25)-(2.26), the log marginal likelihood from eq. (2.30) plus the log-normal priors of the
module docstring, the refit schedule ``n + max(1, floor(g n))`` counted by hand. Nothing is
read back from the code under test to build an expected value.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from hdbo_engine import gp as gp_module
from hdbo_engine.gp import (
    GP,
    GPParams,
    HyperparameterChain,
    kernel_functions,
    matern52,
    next_refit,
    rbf,
    robust_cholesky,
    run_end,
    scaled_sqdist,
    told_without_meta,
)

SQRT5 = math.sqrt(5.0)


def matern(r: float, s2: float = 1.0) -> float:
    return s2 * (1 + SQRT5 * r + 5 / 3 * r * r) * math.exp(-SQRT5 * r)


def kernel_matrix(A, B, ls, s2, kind="matern52"):
    r = np.sqrt((((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1))
    if kind == "rbf":
        return s2 * np.exp(-0.5 * r**2)
    return s2 * (1 + SQRT5 * r + 5 / 3 * r**2) * np.exp(-SQRT5 * r)


def hand_posterior(X, y, params, Xq, kind="matern52", extra=None):
    """Posterior mean and variance on the original scale, outputs standardised first."""
    mean_y, std_y = y.mean(), y.std()
    z = (y - mean_y) / std_y
    noise = params.noise_var + (0.0 if extra is None else extra)
    K = kernel_matrix(X, X, params.lengthscales, params.signal_var, kind) + np.diag(
        np.broadcast_to(noise, len(X)))
    kq = kernel_matrix(Xq, X, params.lengthscales, params.signal_var, kind)
    mean = kq @ np.linalg.solve(K, z)
    var = params.signal_var - np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))
    return mean_y + std_y * mean, var * std_y**2


def hand_neg_log_posterior(X, z, theta, D, extra=None):
    """R&W eq. (2.30) negated, minus the log priors (up to their constants)."""
    ls, s2, noise = np.exp(theta[:-2]), math.exp(theta[-2]), math.exp(theta[-1])
    K = kernel_matrix(X, X, ls, s2) + np.diag(noise + (0.0 if extra is None else extra)
                                              * np.ones(len(X)))
    _, logdet = np.linalg.slogdet(K)
    n = len(z)
    nll = 0.5 * z @ np.linalg.solve(K, z) + 0.5 * logdet + 0.5 * n * math.log(2 * math.pi)
    mu, sigma = math.sqrt(2) + 0.5 * math.log(D), math.sqrt(3)
    return nll + 0.5 * np.sum(((theta[:-2] - mu) / sigma) ** 2) + 0.5 * (theta[-1] + 4) ** 2


def _data(n=12, D=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    return X, np.sin(4 * X[:, 0]) + 2 * X[:, 1] ** 2 - X[:, 2]


# ------------------------------------------------------------------------- kernels


def test_kernel_values_are_the_matern_and_gaussian_formulas():
    r = np.array([0.0, 0.3, 1.0, 2.5, 10.0])
    np.testing.assert_allclose(matern52(r, 2.0), [matern(v, 2.0) for v in r], rtol=1e-14)
    np.testing.assert_allclose(rbf(r, 2.0), 2.0 * np.exp(-0.5 * r**2), rtol=1e-14)
    assert matern52(np.array([0.0]), 1.7)[0] == 1.7 and rbf(np.array([0.0]), 1.7)[0] == 1.7


@pytest.mark.parametrize("kind", ["matern52", "rbf"])
def test_q_is_minus_dk_dr_over_r(kind):
    k, q = kernel_functions(kind)
    r, h = np.array([0.2, 0.7, 1.5, 3.0, 5.0]), 1e-6
    dk = (k(r + h, 1.3) - k(r - h, 1.3)) / (2 * h)
    np.testing.assert_allclose(q(r, 1.3), -dk / r, rtol=1e-6)
    if kind == "matern52":  # closed form: s2 (5/3) (1 + sqrt5 r) exp(-sqrt5 r)
        np.testing.assert_allclose(q(r, 1.3), 1.3 * 5 / 3 * (1 + SQRT5 * r) * np.exp(-SQRT5 * r))


@pytest.mark.parametrize("kind, cutoff", [("matern52", 66.0), ("rbf", 16.7)])
def test_kernels_are_exact_zeros_from_their_cutoff_on(kind, cutoff):
    k, q = kernel_functions(kind)
    below = np.array([cutoff * (1 - 1e-9)])
    at_and_beyond = np.array([cutoff, cutoff * 1.5, 1e6])
    for fn in (k, q):
        assert fn(below, 1.0)[0] > 0
        np.testing.assert_array_equal(fn(at_and_beyond, 1.0), 0.0)
    if kind == "matern52":
        assert k(below, 1.0)[0] == pytest.approx(matern(cutoff), rel=1e-6)


def test_kernel_names_are_checked():
    with pytest.raises(ValueError, match=r"kernel_type: expected one of \['matern52', 'rbf'\]"):
        kernel_functions("cubic")
    with pytest.raises(ValueError, match="kernel_type"):
        kernel_functions(["rbf"])  # unhashable


def test_scaled_sqdist_is_the_squared_euclidean_distance_and_never_negative():
    rng = np.random.default_rng(1)
    A, B = rng.random((4, 3)), rng.random((5, 3))
    expected = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(scaled_sqdist(A, B), expected, atol=1e-14)
    same = np.full((2, 3), 1e8 / 3)  # rounding makes |a|^2 + |b|^2 - 2ab negative
    assert (scaled_sqdist(same, same) == 0.0).all()


def test_robust_cholesky_adds_jitter_only_when_needed_and_clips_as_a_last_resort():
    K = np.array([[4.0, 2.0], [2.0, 3.0]])
    L = robust_cholesky(K)
    np.testing.assert_allclose(L, np.linalg.cholesky(K), rtol=1e-15)  # no jitter
    # eigenvalues 2 + 1e-9 and -1e-9: the first jitter that works is 1e-8 of the scale (1)
    near = np.array([[1.0, 1.0 + 1e-9], [1.0 + 1e-9, 1.0]])
    L = robust_cholesky(near)
    np.testing.assert_allclose(L @ L.T, near + 1e-8 * np.eye(2), rtol=0, atol=1e-15)
    # eigenvalues 3 and -1: no jitter up to 1e-2 helps; -1 is clipped to 1e-2 of the scale
    # the jitter is relative to the mean diagonal: 1e-8 of 0.01
    L = robust_cholesky(0.01 * near)
    np.testing.assert_allclose(L @ L.T, 0.01 * near + 1e-10 * np.eye(2), rtol=0, atol=1e-17)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    L = robust_cholesky(bad)
    expected = np.array([[1.505, 1.495], [1.495, 1.505]])  # V diag(3, 0.01) V^T
    np.testing.assert_allclose(L @ L.T, expected, atol=1e-12)
    assert L[0, 1] == 0.0  # lower triangular


# -------------------------------------------------------------- model and posterior


def test_new_gp_holds_the_prior_mode_and_the_bounds_of_the_docstring():
    gp = GP(4)
    mu = math.sqrt(2) + 0.5 * math.log(4)
    assert gp.prior_mu == pytest.approx(mu) and gp.prior_sigma == pytest.approx(math.sqrt(3))
    np.testing.assert_allclose(gp.params.lengthscales, math.exp(mu))
    assert (gp.params.signal_var, gp.params.noise_var) == (1.0, pytest.approx(math.exp(-4)))
    assert (gp.noise_bounds, gp.fit_maxiter, gp.kernel_type) == ((1e-6, 0.5), 60, "matern52")
    assert gp.X.shape == (0, 4) and not gp.fitted and (gp.y_mean, gp.y_std) == (0.0, 1.0)
    bounds = gp._bounds()
    assert len(bounds) == 6
    assert bounds[0] == pytest.approx((math.log(1e-3), math.log(2e3)))  # 1e3 sqrt(4)
    assert bounds[4] == (0.0, 0.0)  # s2 fixed at 1
    assert bounds[5] == pytest.approx((math.log(1e-6), math.log(0.5)))


def test_params_vector_is_the_logs_in_order():
    p = GPParams(np.array([0.5, 2.0]), 1.5, 1e-3)
    theta = p.to_vector()
    np.testing.assert_allclose(theta, np.log([0.5, 2.0, 1.5, 1e-3]))
    back = GPParams.from_vector(theta)
    np.testing.assert_allclose(back.lengthscales, [0.5, 2.0])
    assert (back.signal_var, back.noise_var) == (pytest.approx(1.5), pytest.approx(1e-3))


def test_set_data_standardises_and_the_posterior_is_the_textbook_one():
    X, y = _data()
    gp = GP(3)
    gp.params = GPParams(np.array([0.4, 0.7, 1.1]), 1.0, 1e-3)
    gp.set_data(X, y)
    assert gp.y_mean == pytest.approx(y.mean()) and gp.y_std == pytest.approx(y.std())
    np.testing.assert_allclose(gp.z, (y - y.mean()) / y.std())
    K = kernel_matrix(X, X, gp.params.lengthscales, 1.0) + 1e-3 * np.eye(len(X))
    np.testing.assert_allclose(gp.L @ gp.L.T, K, atol=1e-12)
    np.testing.assert_allclose(gp.alpha, np.linalg.solve(K, gp.z), rtol=1e-8)
    np.testing.assert_allclose(gp.K_inv, np.linalg.inv(K), rtol=1e-7, atol=1e-8)
    Xq = np.random.default_rng(2).random((5, 3))
    mean, var = gp.predict(Xq)
    e_mean, e_var = hand_posterior(X, y, gp.params, Xq)
    np.testing.assert_allclose(mean, e_mean, rtol=1e-9)
    np.testing.assert_allclose(var, e_var, rtol=1e-7)
    mean1, var1 = gp.predict(Xq[0])  # one point, 1-D
    assert mean1.shape == var1.shape == (1,) and mean1[0] == pytest.approx(e_mean[0])


def test_per_point_noise_enters_the_diagonal_and_is_validated():
    X, y = _data(n=6)
    extra = np.array([0.0, 0.5, 0.0, 2.0, 0.1, 0.0])
    gp = GP(3)
    gp.set_data(X, y, noise=extra)
    p = gp.params
    K = kernel_matrix(X, X, p.lengthscales, 1.0) + np.diag(p.noise_var + extra)
    np.testing.assert_allclose(gp.L @ gp.L.T, K, atol=1e-12)
    Xq = np.random.default_rng(3).random((3, 3))
    e_mean, e_var = hand_posterior(X, y, p, Xq, extra=extra)
    np.testing.assert_allclose(gp.predict(Xq)[0], e_mean, rtol=1e-9)
    np.testing.assert_allclose(gp.predict(Xq)[1], e_var, rtol=1e-7)
    for bad in (extra[:3], -extra - 1e-3, np.where(extra > 1, np.inf, extra)):
        with pytest.raises(ValueError, match="noise: expected 6 finite values >= 0"):
            gp.set_data(X, y, noise=bad)
    gp.set_data(X, y, noise=np.zeros(6))  # zeros are allowed
    gp.set_data(X, y)
    np.testing.assert_array_equal(gp.extra_noise, np.zeros(6))


def test_constant_and_single_outputs_keep_unit_scale():
    X, _ = _data(n=4)
    gp = GP(3).set_data(X, np.full(4, 5.0))
    assert (gp.y_mean, gp.y_std) == (5.0, 1.0)
    np.testing.assert_array_equal(gp.z, 0.0)
    one = GP(3).set_data(X[:1], np.array([2.0]))
    assert (one.y_mean, one.y_std) == (2.0, 1.0)
    # a spread below 1e-12 of the mean's size counts as constant; just above it does not
    tiny = GP(3).set_data(X[:2], np.array([1e6, 1e6 + 1e-7]))
    assert tiny.y_std == 1.0
    small = GP(3).set_data(X[:2], np.array([1.0, 1.0 + 1e-6]))
    assert small.y_std == pytest.approx(5e-7)
    near_zero = GP(3).set_data(X[:2], np.array([0.0, 3e-12]))  # 1.5e-12 > 1e-12 * max(1, .)
    assert near_zero.y_std == pytest.approx(1.5e-12)


def test_without_data_the_posterior_is_the_prior():
    gp = GP(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty diagonal
        gp.set_data(np.empty((0, 2)), np.empty(0))
    mean, var = gp.predict(np.array([[0.3, 0.6]]))
    assert (gp.y_mean, gp.y_std) == (0.0, 1.0)
    assert mean[0] == 0.0 and var[0] == pytest.approx(1.0)


def test_posterior_variance_is_floored_at_1e_12():
    X = np.array([[0.5, 0.5, 0.5]])
    gp = GP(3)
    gp.params = GPParams(np.ones(3), 1.0, 1e-6)
    gp.set_data(np.vstack([X] * 3), np.array([1.0, 2.0, 3.0]))
    # kernel rows of 2s: k^T K^-1 k is about 4 > s2 = 1, so the variance is the floor
    _, var = gp._mean_var(np.full((1, 3), 2.0))
    assert var[0] == 1e-12


@pytest.mark.parametrize("with_noise", [False, True])
def test_neg_log_posterior_value_is_eq_2_30_plus_the_priors(with_noise):
    X, y = _data()
    extra = np.linspace(0.0, 0.3, len(y)) if with_noise else None
    gp = GP(3).set_data(X, y, noise=extra)
    rng = np.random.default_rng(4)
    for _ in range(3):
        theta = gp.params.to_vector() + rng.normal(0, 0.4, 5)
        theta[-2] = rng.normal(0, 0.2)  # a signal variance other than 1
        value, _ = gp._neg_log_posterior(theta)
        assert value == pytest.approx(hand_neg_log_posterior(X, gp.z, theta, 3, extra),
                                      rel=1e-9)


def test_neg_log_posterior_gradient_in_the_signal_variance_and_with_extra_noise():
    X, y = _data()
    gp = GP(3).set_data(X, y, noise=np.linspace(0.0, 0.3, len(y)))
    theta = gp.params.to_vector() + 0.2
    _, grad = gp._neg_log_posterior(theta)
    for j in range(5):
        step = np.zeros(5)
        step[j] = 1e-6
        numeric = (gp._neg_log_posterior(theta + step)[0]
                   - gp._neg_log_posterior(theta - step)[0]) / 2e-6
        assert grad[j] == pytest.approx(numeric, rel=1e-5, abs=1e-6)


def test_fit_reaches_a_map_no_worse_than_its_starts_and_conditions_on_it():
    X, y = _data(n=20)
    gp = GP(3)
    prior_mode = gp.params.to_vector()
    gp.fit(X, y)
    assert gp.fitted
    z = (y - y.mean()) / y.std()
    found = hand_neg_log_posterior(X, z, gp.params.to_vector(), 3)
    assert found < hand_neg_log_posterior(X, z, prior_mode, 3) - 1.0
    lo, hi = np.array(gp._bounds()).T
    theta = gp.params.to_vector()
    assert np.all(theta >= lo - 1e-12) and np.all(theta <= hi + 1e-12)
    assert gp.params.signal_var == 1.0
    # conditioned on the fitted hyperparameters, not the prior's
    Xq = np.random.default_rng(5).random((4, 3))
    np.testing.assert_allclose(gp.predict(Xq)[0], hand_posterior(X, y, gp.params, Xq)[0],
                               rtol=1e-8)
    more = GP(3).fit(X, y, restarts=4)  # more starts: the best of them, never worse
    assert hand_neg_log_posterior(X, z, more.params.to_vector(), 3) <= found + 1e-6


def test_fit_warm_starts_from_the_previous_optimum_and_prior_start_adds_the_mode(monkeypatch):
    X, y = _data(n=15)
    gp = GP(3).fit(X[:10], y[:10])
    previous = gp.params.to_vector()
    starts = []
    real = gp_module.minimize
    monkeypatch.setattr(gp_module, "minimize",
                        lambda fun, x0, **kw: starts.append(np.array(x0)) or real(fun, x0, **kw))
    gp.fit(X, y)
    assert len(starts) == 1
    np.testing.assert_allclose(starts[0], previous)
    starts.clear()
    gp.fit(X, y, prior_start=True)
    mode = np.concatenate([np.full(3, math.sqrt(2) + 0.5 * math.log(3)), [0.0, -4.0]])
    assert len(starts) == 2
    np.testing.assert_allclose(starts[0], mode)
    starts.clear()
    GP(3).fit(X, y, restarts=3)  # a fresh GP: the mode, then two jittered modes
    assert len(starts) == 3
    np.testing.assert_allclose(starts[0], mode)
    assert all(np.abs(s - mode)[:3].max() > 0 for s in starts[1:])
    assert all(s[3] == 0.0 for s in starts)  # s2 stays at its bound (0, 0)
    starts.clear()
    GP(3).fit(X[:1], y[:1])  # fewer than two points: nothing to fit
    assert starts == []


def test_next_refit_is_n_plus_max_1_floor_g_n():
    assert [next_refit(n, 0.1) for n in (0, 1, 9, 10, 19, 20, 35)] == [1, 2, 10, 11, 20, 22, 38]
    assert next_refit(7, 0.5) == 10 and next_refit(7, 0.0) == 8


def test_chain_refits_at_its_checkpoints_on_imputed_prefixes(monkeypatch):
    X, y = _data(n=14)
    y = y.copy()
    y[5] = np.nan
    fits = []
    real = GP.fit
    monkeypatch.setattr(GP, "fit", lambda self, Xf, yf, *a, **k: fits.append(
        (len(Xf), np.array(yf))) or real(self, Xf, yf, *a, **k))
    chain = HyperparameterChain(3, refit_growth=0.25)
    chain.params(X, y)
    # checkpoints n + max(1, floor(n / 4)) from 0: 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15; a fit
    # needs two finite values, so the fit at 1 is skipped
    assert [n for n, _ in fits] == [2, 3, 4, 5, 6, 7, 8, 10, 12]
    assert chain.n_fitted == 12
    _, y_at_6 = fits[4]
    assert y_at_6[5] == max(y[:5])  # the failure imputed by the worst value before it
    state = chain.state(X, y)
    assert state["n"] == 12 and state["fitted"] is True
    np.testing.assert_allclose(state["lengthscales"], chain.gp.params.lengthscales)
    assert state["fp"] == chain.fingerprint(X[:12], y[:12])
    assert HyperparameterChain(3).state(X, y) is None


def test_chain_restores_only_its_own_checkpoints(monkeypatch):
    X, y = _data(n=14)
    live = HyperparameterChain(3)
    live.params(X, y)
    state = live.state(X, y)
    fresh = HyperparameterChain(3)
    fresh.restore([state], X, y)
    assert fresh.n_fitted == state["n"] and fresh.gp.fitted
    np.testing.assert_array_equal(fresh.gp.params.lengthscales, live.gp.params.lengthscales)
    foreign = [{**state, "fp": "0" * 20}, {**state, "lengthscales": [1.0, 2.0]},
               {**state, "lengthscales": [1.0, -1.0, 1.0]}, {**state, "n": 99},
               {**state, "n": "5"}, {k: v for k, v in state.items() if k != "signal_var"},
               "not a dict"]
    for bad in foreign:
        other = HyperparameterChain(3)
        other.restore([bad], X, y)
        assert other.n_fitted == 0 and not other.gp.fitted
    for settings in (dict(refit_growth=0.2), dict(fit_maxiter=30), dict(kernel_type="rbf"),
                     dict(noise_bounds=(1e-5, 0.5))):  # other settings: another fingerprint
        other = HyperparameterChain(3, **settings)
        other.restore([state], X, y)
        assert other.n_fitted == 0, settings
    other = HyperparameterChain(3)  # the same points with other values: another history
    other.restore([state], X, y + 1.0)
    assert other.n_fitted == 0
    garbled = HyperparameterChain(3)
    garbled.restore([{**state, "lengthscales": ["a", "b", "c"]}], X, y)
    assert garbled.n_fitted == 0
    # the latest usable checkpoint wins
    early = HyperparameterChain(3)
    early.params(X[:6], y[:6])
    both = HyperparameterChain(3)
    both.restore([early.state(X, y), state], X, y)
    assert both.n_fitted == state["n"]
    both.restore([early.state(X, y)], X, y)  # never back to an earlier checkpoint
    assert both.n_fitted == state["n"]


def test_chain_state_follows_the_latest_checkpoint():
    X, y = _data(n=14)
    chain = HyperparameterChain(3)
    chain.params(X[:6], y[:6])
    first = chain.state(X, y)
    chain.params(X, y)
    later = chain.state(X, y)
    assert later["n"] > first["n"]
    assert later["fp"] == chain.fingerprint(X[:later["n"]], y[:later["n"]]) != first["fp"]


def test_fit_is_a_function_of_the_data_and_jitters_restarts_by_half_a_unit():
    X, y = _data(n=15)
    a, b = GP(3).fit(X, y, restarts=3), GP(3).fit(X, y, restarts=3)
    np.testing.assert_array_equal(a.params.lengthscales, b.params.lengthscales)
    starts = []
    real = gp_module.minimize
    mode = np.full(3, math.sqrt(2) + 0.5 * math.log(3))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gp_module, "minimize", lambda fun, x0, **kw: starts.append(np.array(x0))
                   or real(fun, x0, **{**kw, "options": {"maxiter": 1}}))
        GP(3).fit(X, y, restarts=41)
    jitter = np.array([s[:3] - mode for s in starts[1:]]).ravel()  # 120 N(0, 0.5) draws
    assert abs(jitter.mean()) < 0.15 and jitter.std() == pytest.approx(0.5, rel=0.2)


def test_chain_model_conditions_on_the_negated_imputed_values():
    X, y = _data(n=10)
    y = y.copy()
    y[3] = np.inf
    chain = HyperparameterChain(3)
    gp = chain.model(X, y)
    target = -np.where(np.isfinite(y), y, max(y[:3]))
    np.testing.assert_allclose(gp.y_mean, target.mean())
    Xq = np.random.default_rng(6).random((3, 3))
    np.testing.assert_allclose(gp.predict(Xq)[0],
                               hand_posterior(X, target, chain.gp.params, Xq)[0], rtol=1e-8)
    plus = chain.model(X, y, sign=1.0)
    np.testing.assert_allclose(plus.y_mean, -target.mean())
    assert gp is not chain.gp and gp.kernel_type == "matern52"


def test_subspace_grid_in_blocks_of_one_subspace_matches_the_textbook_posterior():
    """9000 shared points x 30 told points exceed a block of 2^18 kernel values, so each
    subspace is its own block; every block is computed."""
    X, y = _data(n=30)
    gp = GP(3)
    gp.params = GPParams(np.array([0.4, 0.7, 1.1]), 1.0, 1e-3)
    gp.set_data(X, y)
    rng = np.random.default_rng(9)
    bases, Y = rng.random((3, 3)), rng.random((9000, 1))
    post = gp.subspace(np.array([1]), bases)
    mean, var = post.grid(Y)
    for i in range(3):
        full = np.repeat(bases[i][None], 9000, 0)
        full[:, 1] = Y[:, 0]
        e_mean, e_var = hand_posterior(X, y, gp.params, full[::300])
        np.testing.assert_allclose(gp.y_mean + gp.y_std * mean[i, ::300], e_mean, rtol=1e-9)
        np.testing.assert_allclose(var[i, ::300] * gp.y_std**2, e_var, rtol=1e-7, atol=1e-12)


def test_points_told_without_a_meta_and_the_end_of_their_run():
    bare = told_without_meta([{}, {"t": 1}, {}, {}, {"init": True}, {}, {}])
    np.testing.assert_array_equal(bare, [True, False, True, True, False, True, True])
    assert run_end(3, bare) == 4  # the 3rd point opens a run of two: fit after the 4th
    assert run_end(4, bare) == 4
    assert run_end(2, bare) == 2 and run_end(5, bare) == 5  # told with a meta: unchanged
    assert run_end(6, bare) == 7  # a run up to the end of the history
    assert run_end(1, bare) == 1  # a run of one
    assert run_end(1, np.array([True, True, False])) == 2  # the first point opens a run
    assert run_end(0, bare) == 0 and run_end(8, bare) == 8 and run_end(3, None) == 3


def test_chain_fits_once_at_the_end_of_a_run_of_points_told_without_a_meta(monkeypatch):
    X, y = _data(n=14)
    fits = []
    real = GP.fit
    monkeypatch.setattr(GP, "fit", lambda self, Xf, *a, **k: fits.append(len(Xf))
                        or real(self, Xf, *a, **k))
    bare = np.array([True] * 10 + [False] * 4)  # a warm start of ten, then proposals
    chain = HyperparameterChain(3, refit_growth=0.25)
    chain.params(X, y, bare=bare)
    # checkpoints 1, 2, ... fall inside the run: one fit at 10, then 10 + 2 = 12; 15 > 14
    assert fits == [10, 12] and chain.n_fitted == 12
    fits.clear()
    model = HyperparameterChain(3, refit_growth=0.25).model(X, y, bare=bare)
    assert fits == [10, 12] and model.X.shape == (14, 3)


def test_two_points_are_fitted_and_fit_maxiter_caps_the_iterations():
    X, y = _data(n=12)
    two = GP(3).fit(X[:2], y[:2])
    assert two.fitted and not np.allclose(two.params.to_vector(), GP(3).params.to_vector())
    z = (y - y.mean()) / y.std()
    capped = GP(3, fit_maxiter=1).fit(X, y)
    full = GP(3, fit_maxiter=60).fit(X, y)
    assert hand_neg_log_posterior(X, z, capped.params.to_vector(), 3) > \
        hand_neg_log_posterior(X, z, full.params.to_vector(), 3) + 1e-3
