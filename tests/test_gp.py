import numpy as np
import pytest
from scipy.optimize import approx_fprime

from hdbo_engine.acquisition import expected_improvement, log_expected_improvement, ucb
from hdbo_engine.gp import GP, HyperparameterChain


def _data(n=30, D=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] ** 2, rng


@pytest.mark.parametrize("kernel_type", ["matern52", "rbf"])
def test_neg_log_posterior_gradient_matches_finite_differences(kernel_type):
    X, y, rng = _data()
    gp = GP(4, kernel_type=kernel_type).set_data(X, y)
    theta = gp.params.to_vector() + rng.normal(0, 0.3, 6)
    numeric = approx_fprime(theta, lambda t: gp._neg_log_posterior(t)[0], 1e-6)
    np.testing.assert_allclose(gp._neg_log_posterior(theta)[1], numeric, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("kernel_type", ["matern52", "rbf"])
def test_fit_learns_relevance_and_interpolates(kernel_type):
    X, y, rng = _data(n=60)
    gp = GP(4, kernel_type=kernel_type).fit(X, y)
    ls = gp.params.lengthscales
    assert ls[0] < ls[2] and ls[1] < ls[3]  # active coordinates get shorter lengthscales
    Xt = rng.random((100, 4))
    mean, var = gp.predict(Xt)
    truth = np.sin(3 * Xt[:, 0]) + Xt[:, 1] ** 2
    assert np.sqrt(np.mean((mean - truth) ** 2)) < 0.1 * truth.std()
    assert np.all(var > 0)


@pytest.mark.parametrize("kernel_type", ["matern52", "rbf"])
def test_subspace_posterior_matches_full_prediction_and_gradients(kernel_type):
    X, y, rng = _data()
    gp = GP(4, kernel_type=kernel_type).fit(X, y)
    free = np.array([1, 3])
    post = gp.subspace(free, rng.random((3, 4)))
    Y, which = rng.random((6, 2)), np.array([0, 1, 2, 0, 1, 2])
    mean, var, dmean, dvar = post(Y, which)
    full_mean, full_var = gp.predict(post.full_points(Y, which))
    np.testing.assert_allclose(gp.y_mean + gp.y_std * mean, full_mean, atol=1e-10)
    np.testing.assert_allclose(var * gp.y_std**2, full_var, atol=1e-10)
    mean_ng, var_ng, _, _ = post(Y, which, grad=False)  # the one-solve path
    np.testing.assert_allclose(mean_ng, mean, atol=1e-12)
    np.testing.assert_allclose(var_ng, var, atol=1e-12)
    for j in range(2):
        step = np.zeros_like(Y)
        step[:, j] = 1e-6
        m2, v2, _, _ = post(Y + step, which, grad=False)
        np.testing.assert_allclose((m2 - mean) / 1e-6, dmean[:, j], atol=1e-4)
        np.testing.assert_allclose((v2 - var) / 1e-6, dvar[:, j], atol=1e-4)


def test_subspace_grid_matches_pointwise_posterior_on_every_pair():
    X, y, rng = _data()
    gp = GP(4).fit(X, y)
    post = gp.subspace(np.array([0, 2]), rng.random((5, 4)))
    Y, rows = rng.random((3, 2)), np.array([4, 1])
    mean, var = post.grid(Y, rows)
    assert mean.shape == var.shape == (2, 3)
    m_pt, v_pt, _, _ = post(np.tile(Y, (2, 1)), np.repeat(rows, 3), grad=False)
    np.testing.assert_allclose(mean.ravel(), m_pt, atol=1e-12)
    np.testing.assert_allclose(var.ravel(), v_pt, atol=1e-12)
    np.testing.assert_allclose(post.grid(Y)[0][rows], mean, atol=1e-12)  # all subspaces
    np.testing.assert_allclose(gp.K_inv @ gp.z, gp.alpha, atol=1e-8)


def test_rbf_kernel_is_the_gaussian_kernel_and_names_are_checked():
    X, y, _ = _data(n=12)
    gp = GP(4, kernel_type="rbf").fit(X, y)
    p = gp.params
    d2 = (((X[:, None] - X[None]) / p.lengthscales) ** 2).sum(-1)
    K = p.signal_var * np.exp(-0.5 * d2) + p.noise_var * np.eye(12)
    np.testing.assert_allclose(gp.L @ gp.L.T, K, atol=1e-10)
    assert GP(4).kernel_type == "matern52"
    with pytest.raises(ValueError, match="kernel_type"):
        GP(4, kernel_type="cubic")
    chain = HyperparameterChain(4, kernel_type="rbf")
    assert chain.model(X, y).kernel_type == "rbf"


def test_duplicates_and_constant_outputs_are_handled():
    X, _, rng = _data(n=5)
    Xd = np.vstack([X] * 6)
    gp = GP(4).fit(Xd, np.full(30, 3.0))
    mean, var = gp.predict(Xd[:2])
    np.testing.assert_allclose(mean, 3.0)
    assert np.all(np.isfinite(var))
    gp.fit(Xd, rng.random(30))  # noisy duplicates: must not raise
    assert np.all(np.isfinite(gp.predict(rng.random((4, 4)))[0]))


def test_acquisitions_gradients():
    mean, var = np.array([0.1, -0.3]), np.array([0.5, 0.2])
    dmean, dvar = np.array([[1.0, 0.0], [0.5, 2.0]]), np.array([[0.2, -0.1], [0.0, 0.3]])
    val, grad = ucb(mean, var, dmean, dvar, beta=4.0)
    np.testing.assert_allclose(val, mean + 2 * np.sqrt(var))
    np.testing.assert_allclose(grad, dmean + 2 * dvar / (2 * np.sqrt(var))[:, None])
    ei, dei = expected_improvement(mean, var, dmean, dvar, best=0.0)
    assert np.all(ei > 0)
    h = 1e-7
    ei2, _ = expected_improvement(mean + h * dmean[:, 0], var + h * dvar[:, 0], None, None, 0.0)
    np.testing.assert_allclose((ei2 - ei) / h, dei[:, 0], rtol=1e-4)


def test_log_ei_is_log_of_ei_and_finite_where_ei_underflows():
    mean = np.array([0.4, 0.0, -2.0, -4.5, -40.0])
    var = np.array([0.3, 0.5, 0.4, 0.04, 0.01])
    dmean = np.array([[1.0, -0.5]] * 5)
    dvar = np.array([[0.1, 0.2]] * 5)
    val, grad = log_expected_improvement(mean, var, dmean, dvar, best=0.1)
    ei = expected_improvement(mean, var, None, None, 0.1)[0]
    np.testing.assert_allclose(val[:4], np.log(ei[:4]), rtol=1e-10)
    assert ei[4] == 0.0 and np.isfinite(val[4]) and val[4] < val[3]  # EI underflows, log-EI not
    h = 1e-6
    for j in range(2):
        up = log_expected_improvement(mean + h * dmean[:, j], var + h * dvar[:, j], None, None,
                                      0.1)[0]
        down = log_expected_improvement(mean - h * dmean[:, j], var - h * dvar[:, j], None,
                                        None, 0.1)[0]
        np.testing.assert_allclose((up - down) / (2 * h), grad[:, j], rtol=1e-5)


def test_chain_replays_to_identical_hyperparameters():
    X, y, _ = _data(n=25)
    y = y.copy()
    y[4] = np.nan
    live = HyperparameterChain(4)
    for n in range(2, 26):
        live.params(X[:n], y[:n])
    rebuilt = HyperparameterChain(4).params(X, y)
    np.testing.assert_array_equal(live.gp.params.lengthscales, rebuilt.lengthscales)
    with pytest.raises(ValueError, match="refit_growth"):
        HyperparameterChain(4, refit_growth=-1)


@pytest.mark.parametrize("kernel_type", ["matern52", "rbf"])
def test_far_kernel_values_and_factor_entries_are_exact_zeros_not_subnormals(kernel_type):
    from hdbo_engine.gp import kernel_functions, robust_cholesky

    k, q = kernel_functions(kernel_type)
    r = np.array([0.0, 1.0, 10.0, 21.9, 22.1, 109.0, 111.0, 400.0])
    for fn in (k, q):
        v = fn(r, 1.0)
        assert np.all((v == 0) | (v >= np.finfo(float).tiny))  # nothing subnormal
        assert np.all(v[r >= {"matern52": 110.0, "rbf": 22.0}[kernel_type]] == 0)
        assert v[-1] == 0 and v[0] > 0
    # factor entries far below the factor's scale are flushed to exact zeros
    L = robust_cholesky(np.array([[1.0, 1e-200], [1e-200, 1.0]]))
    assert L[1, 0] == 0 and L[0, 0] == L[1, 1] == 1
