"""Tests of BKB (hdbo_engine.algorithms.bkb)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import Capture, matern52, shifted_sphere, told_history

from hdbo_engine import get_algorithm
from hdbo_engine.algorithms import bkb as bkb_module
from hdbo_engine.algorithms.bkb import (
    BKB,
    _kernel_matrix,
    _mean_var_grad,
    bkb_beta,
    theoretical_q_bar,
)
from hdbo_engine.gp import GP, GPParams

FIXED = GPParams(np.full(3, 0.4), 1.0, 1e-2)


def _rbf(A: np.ndarray, B: np.ndarray, ls: np.ndarray, s2: float) -> np.ndarray:
    """Gaussian kernel written out independently of the engine."""
    d2 = (((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1)
    return s2 * np.exp(-0.5 * d2)


def _exact_posterior(opt: BKB, Xq: np.ndarray, kernel=None) -> tuple[np.ndarray, np.ndarray]:
    """Exact GP posterior (eqs. (1)-(2)) on every told row, duplicates kept as rows."""
    sk = opt._sketch()
    k, lam = sk.kernel, sk.lam
    kernel = kernel or (lambda A, B: _kernel_matrix(k, A, B))
    target = -(opt.y - k.y_mean) / k.y_std
    K = kernel(opt.X, opt.X) + lam * np.eye(opt.n_told)
    Kq = kernel(Xq, opt.X)
    mean = Kq @ np.linalg.solve(K, target)
    var = k.signal_var - np.einsum("ij,ji->i", Kq, np.linalg.solve(K, Kq.T))
    return k.y_mean - k.y_std * mean, var * k.y_std**2


def _quadratic(X: np.ndarray) -> np.ndarray:
    return ((np.atleast_2d(X) - 0.3) ** 2).sum(1)


def test_registry_maps_bkb():
    assert get_algorithm("bkb") is BKB


def test_dtc_equals_exact_gp_when_dictionary_holds_all_points():
    rng = np.random.default_rng(0)
    opt = BKB(3, seed=1, kernel=FIXED, lam=1e-2, q_bar=1e12)
    X = rng.random((25, 3))
    opt.tell(X, _quadratic(X))
    assert opt.dictionary_size == 25
    Xq = rng.random((40, 3))
    mean, var = opt.predict(Xq)
    mean_ex, var_ex = _exact_posterior(opt, Xq)
    np.testing.assert_allclose(mean, mean_ex, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(var, var_ex, rtol=1e-5, atol=1e-10)


def test_small_dictionary_keeps_variance_from_starving():
    """DTC uses k(x, x): far from the data the variance stays at the prior's."""
    rng = np.random.default_rng(1)
    opt = BKB(3, seed=2, kernel=GPParams(np.full(3, 0.1), 1.0, 1e-2), lam=1e-2, q_bar=1e-3)
    X = rng.random((30, 3)) * 0.3
    opt.tell(X, _quadratic(X))
    assert opt.dictionary_size < 30
    _, var = opt.predict(np.full((1, 3), 0.95))
    assert var[0] == pytest.approx(1.0 * opt._sketch().kernel.y_std**2, rel=1e-3)


def test_variance_close_to_exact_with_default_q_bar():
    rng = np.random.default_rng(3)
    opt = BKB(3, seed=4, kernel=GPParams(np.full(3, 1.0), 1.0, 1e-2), lam=0.1)
    X = rng.random((150, 3))
    opt.tell(X, _quadratic(X))
    assert 0 < opt.dictionary_size < 150
    Xq = rng.random((200, 3))
    _, var = opt.predict(Xq)
    _, var_ex = _exact_posterior(opt, Xq)
    ratio = var / var_ex
    assert ratio.min() > 1 / 3 and ratio.max() < 3  # the theorem's alpha = 3 (eps = 1/2)


def test_repeated_evaluations_are_counted_not_duplicated():
    rng = np.random.default_rng(5)
    arms = rng.random((6, 3))
    opt = BKB(3, seed=0, arms=arms, kernel=FIXED, lam=1e-2, q_bar=1e12)
    pulls = np.array([0, 1, 1, 2, 1, 0, 3, 1, 1, 5])
    y = _quadratic(arms[pulls]) + rng.normal(0, 0.05, len(pulls))
    opt.tell(arms[pulls], y)
    assert len(opt._locs) == 5  # distinct locations
    assert opt._counts.tolist() == [2, 5, 1, 1, 1]
    assert opt.dictionary_size <= 5
    mean, var = opt.predict(arms)
    mean_ex, var_ex = _exact_posterior(opt, arms)  # duplicates as rows
    np.testing.assert_allclose(mean, mean_ex, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(var, var_ex, rtol=1e-5, atol=1e-10)
    # the arm pulled 5 times is the best known one
    assert var[1] < var[0] < var[4]


@pytest.mark.parametrize("resample", ["location", "pull"])
def test_heavily_pulled_arm_stays_in_the_dictionary(resample):
    """One draw per location with the copies' total leverage keeps an arm pulled c times
    (c sigma~^2 ~ 1); Fig. 1's draw per pull drops it with probability ~exp(-q_bar) per step,
    and that step's beta~ jumps (module docstring, "Dictionary resampling")."""
    arms = np.array([[0.2, 0.2], [0.8, 0.8], [0.2, 0.8]])
    opt = BKB(2, seed=0, arms=arms, kernel=GPParams(np.full(2, 0.2), 1.0, 1e-2), lam=1e-2,
              resample=resample, n_init=1)
    noise = np.random.default_rng(1)
    opt.tell(arms[1:], [1.0, 1.0])
    left, betas = 0, []
    for _ in range(300):
        opt.tell(arms[0], noise.normal(0.0, 0.1))
        left += not (opt.dictionary == arms[0]).all(axis=1).any()
        betas.append(opt.ask()[0].meta["beta"])
        opt._pending.clear()
    if resample == "location":
        assert left == 0
        assert max(betas) < 1.5 * min(betas[100:])
    else:
        assert left > 0  # 8 times here (300 exp(-4) ~ 5.5 expected), beta~ up to 90x
        assert max(betas) > 2 * min(betas[100:])


def test_rbf_kernel_dtc_equals_exact_gaussian_process():
    rng = np.random.default_rng(13)
    opt = BKB(3, seed=1, kernel=FIXED, kernel_type="rbf", lam=1e-2, q_bar=1e12)
    X = rng.random((25, 3))
    opt.tell(X, _quadratic(X))
    assert opt.dictionary_size == 25
    Xq = rng.random((40, 3))
    mean, var = opt.predict(Xq)
    mean_ex, var_ex = _exact_posterior(opt, Xq, lambda A, B: _rbf(A, B, FIXED.lengthscales, 1.0))
    np.testing.assert_allclose(mean, mean_ex, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(var, var_ex, rtol=1e-5, atol=1e-10)


def test_fixed_kernel_output_scale_is_frozen_and_equivariant():
    """A fixed kernel means a fixed prior on f: the output scale must not follow the history."""
    rng = np.random.default_rng(14)
    arms = rng.random((200, 3))
    y = 50.0 + 10.0 * _quadratic(arms)
    scaled = BKB(3, seed=2, arms=arms, kernel=FIXED, n_init=3, output_scale=(50.0, 10.0))
    unit = BKB(3, seed=2, arms=arms, kernel=FIXED, n_init=3)  # raw values, scale (0, 1)
    for _ in range(25):
        (p,) = scaled.ask()
        (q,) = unit.ask()
        same = [{k: v for k, v in m.items() if k != "bkb_state"} for m in (p.meta, q.meta)]
        assert same[0] == same[1]  # same arm, same beta~ and m_t (the recorded states differ)
        i = p.meta["arm"]
        scaled.tell(p.x, y[i])
        unit.tell(q.x, (y[i] - 50.0) / 10.0)
        k = scaled._sketch().kernel
        assert (k.y_mean, k.y_std, k.signal_var) == (50.0, 10.0, 1.0)
    mean_s, var_s = scaled.predict(arms[:5])
    mean_u, var_u = unit.predict(arms[:5])
    np.testing.assert_allclose(mean_s, 50.0 + 10.0 * mean_u, rtol=1e-9)
    np.testing.assert_allclose(var_s, 100.0 * var_u, rtol=1e-9)


def test_fitted_kernel_with_output_scale_converts_the_fit_to_that_scale():
    rng = np.random.default_rng(15)
    X = rng.random((30, 3))
    y = 5.0 + 3.0 * _quadratic(X)
    opt = BKB(3, seed=0, output_scale=(5.0, 3.0), kernel_type="rbf")
    opt.tell(X, y)
    k = opt._sketch().kernel
    assert (k.y_mean, k.y_std, k.kernel_type) == (5.0, 3.0, "rbf")
    gp = opt._gp  # fitted on its own standardisation; BKB's kernel is that fit, rescaled
    assert k.signal_var == pytest.approx(gp.params.signal_var * (gp.y_std / 3.0) ** 2)
    mean, _ = opt.predict(X)
    assert np.corrcoef(mean, y)[0, 1] > 0.95


def _bowl(arms: np.ndarray) -> np.ndarray:
    return ((arms - 0.3) ** 2).sum(1) + 0.1 * np.sin(5 * arms[:, 0])


@pytest.mark.parametrize("kernel_type", ["matern52", "rbf"])
@pytest.mark.parametrize("fixed", [False, True])
def test_finite_arms_reach_a_near_optimal_arm(kernel_type, fixed):
    """1000 arms in 5-D, noisy smooth objective, 100 pulls: a top-10 arm is found and
    the last 20 pulls have a small fraction of a random arm's regret (seeds 0-5: at most 0.3)."""
    rng = np.random.default_rng(0)
    arms = rng.random((1000, 5))
    f = _bowl(arms)
    gap = f - f.min()
    noise_sd = 0.05 * f.std()
    kwargs: dict = {}
    if fixed:  # the paper's setting: a kernel fitted once beforehand, its scale frozen
        idx = rng.choice(1000, 100, replace=False)
        gp = GP(5, kernel_type=kernel_type).fit(arms[idx], f[idx] + rng.normal(0, noise_sd, 100))
        kwargs = dict(kernel=gp.params, output_scale=(gp.y_mean, gp.y_std), beta_scale=0.1,
                      lam=max(gp.params.noise_var, 1e-2))
    opt = BKB(5, seed=0, arms=arms, kernel_type=kernel_type, n_init=5, **kwargs)
    noise = np.random.default_rng(7)
    pulls = []
    for _ in range(100):
        (p,) = opt.ask()
        pulls.append(p.meta["arm"])
        opt.tell(p.x, f[pulls[-1]] + noise.normal(0.0, noise_sd))
    assert gap[pulls].min() <= np.sort(gap)[9]
    assert gap[pulls[-20:]].mean() < 0.4 * gap.mean()  # a random arm: 1.0
    assert len(set(pulls)) < 100  # good arms are pulled again under noise
    assert opt.dictionary_size <= len(set(pulls))
    if not fixed:
        assert opt._gp.kernel_type == kernel_type and opt._gp.fitted


def test_finite_arms_noisy_objective_finds_good_arm():
    rng = np.random.default_rng(6)
    arms = rng.random((300, 3))
    f = _quadratic(arms)
    noise = np.random.default_rng(7)
    opt = BKB(3, seed=8, arms=arms, n_init=5)
    pulled = []
    for _ in range(120):
        (p,) = opt.ask()
        i = p.meta["arm"]
        assert np.array_equal(p.x, arms[i])
        pulled.append(i)
        opt.tell(p.x, f[i] + noise.normal(0.0, 0.05))
    late = np.array(pulled[-30:])
    gap = f[late] - f.min()
    random_gap = np.mean(f - f.min())
    assert np.mean(gap) < 0.2 * random_gap
    assert len(set(pulled)) < len(pulled)  # arms are pulled again under noise
    assert len(opt._locs) == len(set(pulled))
    assert opt.dictionary_size <= len(opt._locs)


def test_finite_arm_batch_is_distinct_and_pending_respected():
    rng = np.random.default_rng(9)
    arms = rng.random((20, 2))
    opt = BKB(2, seed=1, arms=arms, n_init=3)
    first = opt.ask(3)
    assert len({p.meta["arm"] for p in first}) == 3
    assert all(p.meta.get("init") for p in first)
    for p in first:
        opt.tell(p.x, float(_quadratic(p.x)[0]))
    batch = opt.ask(4)
    idx = [p.meta["arm"] for p in batch]
    assert len(set(idx)) == 4
    more = opt.ask(2)
    assert not set(idx) & {p.meta["arm"] for p in more}
    assert all(p.meta["dictionary_size"] >= 1 for p in batch)


def test_every_arm_pending_allows_repeats():
    arms = np.array([[0.1, 0.1], [0.9, 0.9]])
    opt = BKB(2, seed=0, arms=arms, n_init=1)
    (p,) = opt.ask()
    opt.tell(p.x, 1.0)
    batch = opt.ask(3)
    assert all(any(np.array_equal(q.x, a) for a in arms) for q in batch)


def test_told_points_outside_arm_set_are_used_but_not_proposed():
    rng = np.random.default_rng(10)
    arms = rng.random((15, 2))
    opt = BKB(2, seed=0, arms=arms, n_init=1)
    X = rng.random((5, 2))
    opt.tell(X, _quadratic(X))
    assert opt.dictionary_size >= 1
    for p in opt.ask(3):
        assert any(np.array_equal(p.x, a) for a in arms)


def test_continuous_mode_beats_random_search():
    D = 5
    bkb = BKB(D, seed=0, n_init=8)
    for _ in range(40):
        (p,) = bkb.ask()
        assert p.x.shape == (D,) and (p.x >= 0).all() and (p.x <= 1).all()
        bkb.tell(p.x, float(_quadratic(p.x)[0]))
    random = np.random.default_rng(0).random((40, D))
    assert bkb.best[1] < _quadratic(random).min()
    assert bkb.dictionary_size >= 1
    batch = bkb.ask(4)
    X = np.array([p.x for p in batch])
    assert len(np.unique(X, axis=0)) == 4
    assert all("dictionary_size" in p.meta and "beta" in p.meta for p in batch)


def test_failed_evaluations_are_imputed():
    opt = BKB(3, seed=0, n_init=3, n_candidates=64)
    for k in range(10):
        (p,) = opt.ask()
        opt.tell(p.x, float("nan") if k % 3 == 1 else float(_quadratic(p.x)[0]))
    assert np.isnan(opt.y).sum() == 3
    assert np.isfinite(opt.best[1])
    (p,) = opt.ask()
    assert np.isfinite(p.x).all()
    mean, var = opt.predict(opt.X)
    assert np.isfinite(mean).all() and np.isfinite(var).all()


def test_all_failed_gives_random_proposals():
    arms = np.random.default_rng(0).random((10, 2))
    opt = BKB(2, seed=0, arms=arms, n_init=1)
    opt.tell(arms[:2], [np.nan, np.inf])
    assert opt.dictionary_size >= 1  # the chain runs on the locations alone
    batch = opt.ask(2)
    assert all(p.meta.get("init") or p.meta.get("random") for p in batch)
    assert all(any(np.array_equal(p.x, a) for a in arms) for p in batch)


@pytest.mark.parametrize("arms", [False, True])
def test_rebuild_from_history_gives_same_next_proposal(arms):
    rng = np.random.default_rng(11)
    kwargs = dict(seed=3, n_init=4, n_candidates=128, failure_tol=2)
    if arms:  # fixed kernel here; the fitted chain is checked by the box case
        kwargs.update(arms=rng.random((50, 3)), kernel=FIXED)
    opt = BKB(3, **kwargs)
    for k in range(18):
        (p,) = opt.ask()
        value = float(_quadratic(p.x)[0] + 0.01 * np.sin(7 * k))
        opt.tell(p.x, float("nan") if k == 6 else value)
    nxt = opt.ask(2)
    rebuilt = BKB.from_history(3, opt.X, opt.y, opt.metas, **kwargs)
    assert np.array_equal(rebuilt._dict_idx, opt._dict_idx)
    if arms:  # no trust region with arms
        assert opt.trust_region is None and rebuilt.trust_region is None
    else:  # the region has moved and is rebuilt exactly
        assert opt.trust_region.length != opt.trust_region.length_init
        assert vars(rebuilt.trust_region) == vars(opt.trust_region)
    again = rebuilt.ask(2)
    for a, b in zip(nxt, again, strict=True):
        assert np.array_equal(a.x, b.x)
        assert a.meta == b.meta
    # telling the history in chunks gives the same state
    chunked = BKB(3, **kwargs)
    chunked.tell(opt.X[:7], opt.y[:7], opt.metas[:7])  # metas mark the initial design
    chunked.tell(opt.X[7:], opt.y[7:], opt.metas[7:])
    assert np.array_equal(chunked._dict_idx, opt._dict_idx)
    assert np.array_equal(chunked.ask(2)[0].x, nxt[0].x)


def test_rebuild_jumps_to_the_recorded_chain_state(monkeypatch):
    """Model proposals record the tell chain's state; a rebuild continues from the latest
    one of its own history (no per-point replay) and proposes what a full replay does."""
    # no line search, so that every ask after the 4-point design is a model ask
    kwargs = dict(seed=3, n_init=4, n_candidates=128, failure_tol=2, line_search=False)
    opt = BKB(3, **kwargs)
    for k in range(14):
        (p,) = opt.ask()
        opt.tell(p.x, float(_quadratic(p.x)[0] + 0.01 * np.sin(7 * k)))
    recorded = [m["bkb_state"]["n"] for m in opt.metas if "bkb_state" in m]
    assert recorded == list(range(4, 14))  # every model ask, each at its own history
    nxt = opt.ask()[0].x
    steps: list[int] = []
    real = BKB._sketch_at
    monkeypatch.setattr(BKB, "_sketch_at", lambda self, n: steps.append(n) or real(self, n))
    rebuilt = BKB.from_history(3, opt.X, opt.y, opt.metas, **kwargs)
    assert steps == [13]  # jumped to n = 13, advanced the chain by the last point only
    assert np.array_equal(rebuilt._dict_idx, opt._dict_idx)
    assert np.array_equal(rebuilt.ask()[0].x, nxt)
    bare = [{k: v for k, v in m.items() if k != "bkb_state"} for m in opt.metas]
    forged = [dict(m) for m in opt.metas]
    forged[-1]["bkb_state"] = {**forged[-1]["bkb_state"], "dictionary": [99]}  # malformed
    for metas, n_steps in ((bare, 14), (forged, 2)):
        steps.clear()
        replayed = BKB.from_history(3, opt.X, opt.y, metas, **kwargs)
        assert len(steps) == n_steps
        assert np.array_equal(replayed.ask()[0].x, nxt)


@pytest.mark.parametrize("kernel_type", ["matern52", "rbf"])
def test_gradients_match_finite_differences(kernel_type):
    rng = np.random.default_rng(12)
    opt = BKB(3, seed=0, kernel=FIXED, lam=1e-2, q_bar=2.0, kernel_type=kernel_type)
    X = rng.random((30, 3))
    opt.tell(X, _quadratic(X))
    sk = opt._sketch()
    P, Q = opt._coefficients(sk, opt._targets(sk), [])
    Y = rng.random((5, 3))
    mu, var, dmu, dvar = _mean_var_grad(sk, P, Q, Y)
    h = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        mp, vp, _, _ = _mean_var_grad(sk, P, Q, Y + e)
        mm, vm, _, _ = _mean_var_grad(sk, P, Q, Y - e)
        np.testing.assert_allclose(dmu[:, j], (mp - mm) / (2 * h), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(dvar[:, j], (vp - vm) / (2 * h), rtol=1e-4, atol=1e-4)


def test_beta_formula_and_theoretical_q_bar():
    alpha = 3.0
    expected = 2 * 0.1 * math.sqrt(alpha * math.log(2.0 * 50) * 12.0 + math.log(10.0)) \
        + (1 + 1 / math.sqrt(0.5)) * math.sqrt(0.01) * 2.0
    got = bkb_beta(50, 12.0, xi=0.1, lam=0.01, kappa2=2.0, delta=0.1, F=2.0, eps=0.5)
    assert got == pytest.approx(expected)
    assert theoretical_q_bar(1000, 0.1, 0.5) == pytest.approx(72 * math.log(40000))
    assert BKB(2, q_bar="theory", budget=1000).q_bar == pytest.approx(72 * math.log(40000))


def test_refit_keeps_the_previous_hyperparameters_when_they_fit_better():
    """A refit starts from the prior mode and from the previous fit; the higher posterior wins.
    Here the prior-mode start alone ends 15 nats worse (the jump that set off exploration)."""
    rng = np.random.default_rng(4)
    X = rng.random((40, 6))
    y = np.exp(-((X[:, :2] - 0.5) ** 2).sum(1) / 0.01)
    nlp = lambda g: g._neg_log_posterior(g.params.to_vector())[0]  # noqa: E731
    cold, previous = GP(6).fit(X, y), GP(6).fit(X, y, restarts=8)
    assert nlp(previous) < nlp(cold) - 10
    opt = BKB(6, seed=0)
    opt._gp = previous
    assert nlp(opt._fit_gp(X, y)) <= nlp(previous) + 1e-6


@pytest.mark.parametrize("sum_cap", [None, math.inf])
def test_box_caps_the_sum_in_beta_and_inf_gives_the_paper(sum_cap):
    """Box default: beta~_t sees min(sum_s sigma~_t^2(x_s), 50), so the multiplier cannot feed
    on its own exploration; ``sum_cap=math.inf`` with ``beta_scale=1`` is the theorem's beta~_t.
    Short fixed lengthscales make every evaluation isolated, so the sum passes 50 quickly."""
    D, lam = 4, 1e-2
    opt = BKB(D, seed=0, n_init=5, kernel=GPParams(np.full(D, 0.05), 1.0, lam), lam=lam,
              beta_scale=1.0, sum_cap=sum_cap, n_candidates=64, n_refine=1)
    checked = 0
    for _ in range(90):
        (p,) = opt.ask()
        if "beta" in p.meta:
            sk = opt._sketch()
            total = float(opt._counts @ sk.sigma2_u)
            used = total if sum_cap == math.inf else min(total, 50.0)
            assert p.meta["beta"] == pytest.approx(bkb_beta(p.meta["t"], used, math.sqrt(lam),
                                                            lam, 1.0), rel=1e-12)
            checked += 1
        opt.tell(p.x, float(_quadratic(p.x)[0]))
    assert checked >= 80 and total > 70  # the cap was active over the last steps
    assert opt.sum_cap == (50.0 if sum_cap is None else math.inf)
    assert BKB(D, arms=np.random.default_rng(0).random((20, D))).sum_cap == math.inf


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"q_bar": -1.0}, ValueError, "q_bar"),
        ({"q_bar": "lots"}, ValueError, "q_bar"),
        ({"lam": 0.0}, ValueError, "lam"),
        ({"xi": -2.0}, ValueError, "xi"),
        ({"delta": 1.5}, ValueError, "delta"),
        ({"eps": 1.0}, ValueError, "eps"),
        ({"F": 0}, ValueError, "F"),
        ({"beta_scale": -1}, ValueError, "beta_scale"),
        ({"sum_cap": 0.0}, ValueError, "sum_cap"),
        ({"kernel": {"lengthscales": 1.0}}, TypeError, "kernel"),
        ({"kernel": GPParams(np.ones(3), -1.0, 1e-3)}, ValueError, "kernel"),
        ({"n_candidates": 1}, ValueError, "n_candidates"),
        ({"n_refine": -1}, ValueError, "n_refine"),
        ({"candidates": "grid"}, ValueError, "candidates"),
        ({"fit_max_points": 1.5}, ValueError, "fit_max_points"),
        ({"refit_growth": -0.1}, ValueError, "refit_growth"),
        ({"kernel_type": "cubic"}, ValueError, "kernel_type"),
        ({"resample": "arm"}, ValueError, "resample"),
        ({"output_scale": (0.0, 0.0)}, ValueError, "output_scale"),
        ({"output_scale": (0.0, float("nan"))}, ValueError, "output_scale"),
        ({"output_scale": "wide"}, TypeError, "output_scale"),
        ({"arms": np.ones((4, 2))}, ValueError, "arms"),
        ({"arms": np.full((4, 3), 1.5)}, ValueError, "arms"),
        ({"arms": np.empty((0, 3))}, ValueError, "arms"),
        ({"arms": object()}, TypeError, "arms"),
        ({"failure_tol": 0}, ValueError, "failure_tol"),
        ({"trust_region": "yes"}, TypeError, "trust_region"),
        ({"preset": "fast"}, ValueError, "preset"),
    ],
)
def test_bad_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        BKB(3, **kwargs)


def test_bad_calls_do_not_corrupt_state():
    opt = BKB(3, seed=0, arms=np.random.default_rng(0).random((5, 3)))
    with pytest.raises(ValueError, match="n"):
        opt.ask(0)
    with pytest.raises(ValueError, match="x"):
        opt.tell(np.ones(2), 1.0)
    with pytest.raises(ValueError, match="X"):
        opt.predict(np.full((1, 3), 2.0))
    assert opt.n_told == 0 and opt.dictionary_size == 0


def test_paper_preset_is_the_papers_configuration():
    opt = BKB(3, preset="paper", budget=200)
    assert opt.q_bar == pytest.approx(theoretical_q_bar(200, 0.1, 0.5))
    o = opt.options
    assert (o.resample, o.beta_scale, opt.sum_cap) == ("pull", 1.0, math.inf)
    assert (opt.n_init, o.init_centre, opt.trust_region) == (1, False, None)
    given = BKB(3, preset="paper", beta_scale=0.5)
    assert given.options.beta_scale == 0.5  # an explicit value wins
    practical = BKB(3)
    assert practical.trust_region is not None and practical.trust_region.failure_tol == 10
    assert (practical.q_bar, practical.options.resample, practical.sum_cap) == (
        4.0, "location", 50.0)
    assert BKB(3, arms=np.random.default_rng(0).random((20, 3))).trust_region is None


def test_trust_region_confines_box_proposals_around_the_incumbent():
    D = 6
    opt = BKB(D, seed=4, n_init=4, n_candidates=128, failure_tol=2)
    for k in range(12):
        (p,) = opt.ask()
        assert not p.meta.get("duplicate_replaced")
        opt.tell(p.x, float(_quadratic(p.x)[0] + np.sin(9 * k)))  # rugged: the region shrinks
    assert opt.trust_region.length < opt.trust_region.length_init
    lo, hi = opt.trust_region.bounds(opt.best[0])
    batch = opt.ask(3)
    assert not batch[0].meta.get("duplicate_replaced")
    for p in batch:
        if not p.meta.get("duplicate_replaced"):  # base._accept may step off a duplicate
            assert np.all(p.x >= lo - 1e-12) and np.all(p.x <= hi + 1e-12)


def test_presets_set_the_candidate_rule_the_docstring_names():
    paper, practical = BKB(3, preset="paper"), BKB(3)
    assert (paper.options.candidates, paper.options.n_refine, paper.trust_region) == (
        "sobol", 5, None)
    assert (practical.options.candidates, practical.options.n_refine) == ("perturb", 0)
    assert practical.trust_region is not None


def test_perturb_candidates_keep_most_coordinates_of_the_incumbent():
    opt = BKB(100, seed=0, n_candidates=200)
    X = np.random.default_rng(0).random((5, 100))
    y = np.arange(5.0)
    cand = opt._candidates(X, y, np.zeros(100), np.ones(100), np.random.default_rng(1))
    changed = (cand != X[0]).sum(1)
    assert cand.shape == (200, 100) and changed.min() >= 1
    assert 10 <= changed.mean() <= 30  # about 20 of 100 coordinates redrawn


def test_beta_floors_its_log_and_sum_at_zero():
    """log(kappa^2 t) < 0 and a sum below 1 enter as they are (floored at 0, not 1)."""
    alpha = 3.0
    # kappa^2 t = 0.5: the log term is floored at 0, the radius is log(1 / delta) alone
    assert bkb_beta(1, 0.3, xi=0.5, lam=0.04, kappa2=0.5) == pytest.approx(
        2 * 0.5 * math.sqrt(math.log(10.0)) + (1 + 1 / math.sqrt(0.5)) * 0.2)
    assert bkb_beta(4, 0.3, xi=0.5, lam=0.04) == pytest.approx(
        2 * 0.5 * math.sqrt(alpha * math.log(4) * 0.3 + math.log(10.0))
        + (1 + 1 / math.sqrt(0.5)) * 0.2)


def test_free_arms_are_those_neither_pending_nor_chosen():
    arms = np.array([[0.1, 0.1], [0.5, 0.5], [0.9, 0.9], [0.3, 0.7]])
    opt = BKB(2, seed=0, arms=arms, n_init=1)
    opt.tell(arms[3], 1.0)
    np.testing.assert_array_equal(opt._free_arms([]), [0, 1, 2, 3])
    (p,) = opt.ask()
    taken = p.meta["arm"]
    np.testing.assert_array_equal(opt._free_arms([]), np.setdiff1d(np.arange(4), [taken]))
    others = [i for i in range(4) if i != taken]
    np.testing.assert_array_equal(opt._free_arms(others[:2]), others[2:])
    opt.ask(3)  # every arm pending: all of them are free again
    np.testing.assert_array_equal(opt._free_arms([]), np.arange(4))


def test_random_arm_picks_repeat_only_when_fewer_arms_than_points():
    arms = np.array([[0.2, 0.2], [0.8, 0.8]])
    opt = BKB(2, seed=0, arms=arms, n_init=1)
    opt.tell(arms[0], float("nan"), {"init": True})
    picks = [meta["arm"] for _, meta in opt._propose(3, np.random.default_rng(0))]
    assert len(picks) == 3 and set(picks) <= {0, 1}


def test_floored_variance_has_zero_gradient_and_scales_with_the_signal_variance():
    from hdbo_engine.algorithms.bkb import _Kernel

    kernel = _Kernel(np.full(2, 0.5), 2.5, 1e-2)
    S = np.array([[0.2, 0.3], [0.7, 0.6]])
    sk = SimpleNamespace(kernel=kernel, S=S, lam=0.04)
    Q = 10.0 * np.eye(2)  # k^T Q k > s2 near the dictionary: the variance is floored
    X = np.array([[0.2, 0.3], [0.21, 0.3]])
    _, var, _, dvar = _mean_var_grad(sk, np.zeros(2), Q, X)
    np.testing.assert_allclose(var, 1e-12 * 2.5 / 0.04)
    np.testing.assert_array_equal(dvar, 0.0)


@pytest.mark.parametrize("n_candidates, n_sobol", [(3, 1), (4, 2), (7, 2), (40, 16), (64, 32)])
def test_sobol_candidates_are_the_largest_power_of_two_up_to_half(
        monkeypatch: pytest.MonkeyPatch, n_candidates: int, n_sobol: int) -> None:
    """Appendix A's candidate set: 2^floor(log2(c / 2)) Sobol points (1 below c = 4), the
    rest perturbations of the best points."""
    from hdbo_engine.algorithms import bkb as bkb_module

    drawn = []
    real = bkb_module.qmc.Sobol

    class Spy(real):
        def random(self, n=1, **kwargs):
            drawn.append(n)
            return super().random(n, **kwargs)

    monkeypatch.setattr(bkb_module.qmc, "Sobol", Spy)
    opt = BKB(3, seed=0, n_candidates=n_candidates, candidates="sobol")
    rng = np.random.default_rng(1)
    C = opt._candidates(rng.random((6, 3)), rng.random(6), np.zeros(3), np.ones(3),
                        np.random.default_rng(2))
    assert drawn == [n_sobol] and C.shape == (n_candidates, 3)

# ----------------------------------- the proposal, arms and batch, recomputed from the paper
# Each test gets past the initial design by telling a history first (``n_init`` small,
# ``init_design="uniform"``, no line search), so what is checked is what the model step does.
# With a fixed kernel and every told point in the dictionary, u~_t, sigma~_t and beta~_t are
# recomputed here with numpy from the paper's formulas.


def _bkb_fixed(**kwargs) -> tuple[BKB, GPParams]:
    """BKB with a known kernel and output scale; every evaluated point stays in S_t."""
    params = GPParams(np.full(3, 0.35), 1.0, 1e-2)
    opt = BKB(3, seed=2, kernel=params, lam=1e-2, output_scale=(1.0, 2.0), q_bar=1e3,
              n_init=4, init_design="uniform", line_search=False, trust_region=False,
              **kwargs)
    told_history(opt, shifted_sphere, 4, seed=2)
    X = np.random.default_rng(3).random((5, 3))
    opt.tell(X, [shifted_sphere(x) for x in X])
    assert opt.dictionary_size == opt.n_told  # the sketch is exact: DTC = GP with noise lam
    return opt, params


def _bkb_hand(opt: BKB, params: GPParams, Xq: np.ndarray, t: int | None = None,
              extra_sum: float = 0.0) -> tuple[np.ndarray, float]:
    """u~_t at Xq (eq. 4) and beta~_t (Sec. 4 theorem) times the practical beta_scale 0.05;
    ``t`` [n_told] and ``extra_sum`` (variances of batch points added to the sum)."""
    lam, X = 1e-2, opt.X
    target = -(opt.y - 1.0) / 2.0  # the reward, on the frozen output scale (1, 2)
    K = matern52(X, X, params.lengthscales, params.signal_var) + lam * np.eye(len(X))

    def mean_sigma2(Q):
        kq = matern52(Q, X, params.lengthscales, params.signal_var)
        quad = np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))
        return kq @ np.linalg.solve(K, target), (params.signal_var - quad) / lam

    t = opt.n_told if t is None else t
    sigma2_sum = mean_sigma2(X)[1].sum() + extra_sum
    eps, delta, F, xi = 0.5, 0.1, 1.0, math.sqrt(lam)
    alpha = (1 + eps) / (1 - eps)
    beta = 2 * xi * math.sqrt(alpha * math.log(params.signal_var * t) * min(sigma2_sum, 50.0)
                              + math.log(1 / delta)) + (1 + 1 / math.sqrt(1 - eps)) \
        * math.sqrt(lam) * F
    beta *= 0.05
    mu, sigma2 = mean_sigma2(Xq)
    return mu + beta * np.sqrt(sigma2), beta


def _bkb_sigma2(opt: BKB, params: GPParams, Xq: np.ndarray) -> np.ndarray:
    """sigma~_t^2 at Xq with the exact dictionary: (k(x, x) - k^T (K + lam I)^-1 k) / lam."""
    lam, X = 1e-2, opt.X
    K = matern52(X, X, params.lengthscales, params.signal_var) + lam * np.eye(len(X))
    kq = matern52(Xq, X, params.lengthscales, params.signal_var)
    return (params.signal_var - np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))) / lam


def test_bkb_picks_the_candidate_with_the_highest_upper_bound(monkeypatch):
    opt, params = _bkb_fixed(candidates="perturb", n_refine=0)
    capture = Capture(bkb_module.perturbation_candidates)
    monkeypatch.setattr(bkb_module, "perturbation_candidates", capture)
    (p,) = opt.ask()
    ((_, lo, hi, _, _),) = capture.calls
    np.testing.assert_array_equal(lo, 0.0)
    np.testing.assert_array_equal(hi, 1.0)
    scores, beta = _bkb_hand(opt, params, capture.returned)
    assert p.meta["beta"] == pytest.approx(beta, rel=1e-9)
    np.testing.assert_array_equal(p.x, capture.returned[int(np.argmax(scores))])


def test_bkb_refined_acquisition_is_the_upper_bound_with_the_theorems_beta(monkeypatch):
    opt, params = _bkb_fixed(candidates="sobol", n_refine=3)
    capture = Capture(bkb_module.lbfgsb_batch)
    monkeypatch.setattr(bkb_module, "lbfgsb_batch", capture)
    (p,) = opt.ask()
    ((acq, starts),) = [call[:2] for call in capture.calls]
    Y = np.vstack([starts, np.random.default_rng(4).random((5, 3))])
    scores, _ = _bkb_hand(opt, params, Y)
    np.testing.assert_allclose(acq(Y)[0], scores, rtol=1e-7, atol=1e-9)
    assert _bkb_hand(opt, params, p.x[None])[0][0] >= scores[: len(starts)].max() - 1e-9
    h = 1e-6  # the gradient handed to L-BFGS-B is the derivative of the hand-written bound
    for j in range(3):
        step = np.zeros(3)
        step[j] = h
        numeric = (_bkb_hand(opt, params, Y + step)[0] - _bkb_hand(opt, params, Y - step)[0])
        np.testing.assert_allclose(acq(Y)[1][:, j], numeric / (2 * h), rtol=1e-5, atol=1e-6)


def test_bkb_refines_inside_the_trust_region(monkeypatch):
    params = GPParams(np.full(3, 0.35), 1.0, 1e-2)
    opt = BKB(3, seed=2, kernel=params, lam=1e-2, n_init=4, init_design="uniform",
              line_search=False, n_refine=2, candidates="sobol")
    told_history(opt, shifted_sphere, 4, seed=2)
    incumbent = opt.X[int(np.argmin(opt.y))]
    capture = Capture(bkb_module.lbfgsb_batch)
    monkeypatch.setattr(bkb_module, "lbfgsb_batch", capture)
    (p,) = opt.ask()
    ((_, starts, lo, hi),) = [call[:4] for call in capture.calls]
    np.testing.assert_allclose(lo, np.clip(incumbent - 0.4, 0, 1))  # side 0.8
    np.testing.assert_allclose(hi, np.clip(incumbent + 0.4, 0, 1))
    assert len(starts) == 2 and np.all((p.x >= lo) & (p.x <= hi))


def test_bkb_batch_counts_fantasies_in_t_and_their_variance_in_beta():
    opt, params = _bkb_fixed(candidates="perturb", n_refine=0)
    first, second = opt.ask(2)
    t = opt.n_told
    assert (first.meta["t"], second.meta["t"]) == (t, t + 1)
    _, beta1 = _bkb_hand(opt, params, first.x[None])
    assert first.meta["beta"] == pytest.approx(beta1, rel=1e-9)
    extra = float(_bkb_sigma2(opt, params, first.x[None])[0])
    _, beta2 = _bkb_hand(opt, params, first.x[None], t=t + 1, extra_sum=extra)
    assert second.meta["beta"] == pytest.approx(beta2, rel=1e-9)
    assert first.meta["dictionary_size"] == opt.n_told
    assert "bkb_state" in first.meta and "bkb_state" not in second.meta


def test_bkb_arm_is_the_free_arm_with_the_highest_upper_bound():
    params = GPParams(np.full(3, 0.35), 1.0, 1e-2)
    arms = np.random.default_rng(12).random((25, 3))
    opt = BKB(3, seed=2, kernel=params, lam=1e-2, output_scale=(1.0, 2.0), q_bar=1e3,
              n_init=4, init_design="uniform", line_search=False, trust_region=False,
              arms=arms)
    told_history(opt, shifted_sphere, 4, seed=2)
    X = np.random.default_rng(3).random((5, 3))
    opt.tell(X, [shifted_sphere(x) for x in X])
    scores, beta = _bkb_hand(opt, params, arms)
    (p,) = opt.ask()
    k = int(np.argmax(scores))
    assert p.meta["arm"] == k and p.meta["beta"] == pytest.approx(beta, rel=1e-9)
    np.testing.assert_array_equal(p.x, arms[k])
    (q,) = opt.ask()  # the first arm is pending: never proposed again
    assert q.meta["arm"] != k and q.meta["t"] == p.meta["t"] + 1


def test_bkb_without_finite_values_draws_uniformly_or_free_arms():
    opt = BKB(3, seed=0, n_init=1)
    opt.tell(np.full(3, 0.5), float("nan"), {"init": True})
    ((x, meta),) = opt._propose(1, np.random.default_rng(0))
    assert meta == {"random": True} and x.shape == (3,)
    arms = np.random.default_rng(0).random((4, 3))
    armed = BKB(3, seed=0, n_init=1, arms=arms)
    armed.tell(arms[0], float("nan"), {"init": True})
    batch = armed._propose(3, np.random.default_rng(0))
    assert all(meta["random"] for _, meta in batch)
    assert len({meta["arm"] for _, meta in batch}) == 3  # distinct while enough are free
    for x, meta in batch:
        np.testing.assert_array_equal(x, arms[meta["arm"]])


def test_bkb_sobol_candidates_fill_the_box_and_perturb_the_best_points():
    opt = BKB(4, seed=0, n_candidates=40, candidates="sobol")
    rng = np.random.default_rng(1)
    X, y = rng.random((12, 4)), rng.random(12)
    lo, hi = np.array([0.1, 0.2, 0.0, 0.5]), np.array([0.6, 0.9, 1.0, 0.7])
    C = opt._candidates(X, y, lo, hi, np.random.default_rng(2))
    assert C.shape == (40, 4)
    assert (C >= lo).all() and (C <= hi).all()
    sobol, local = C[:16], C[16:]  # 2^floor(log2(40 / 2)) = 16 Sobol points, 24 local
    # a scrambled Sobol set of 16 points: one point in each sixteenth of every coordinate
    for j in range(4):
        cells = np.floor((sobol[:, j] - lo[j]) / (hi[j] - lo[j]) * 16)
        assert sorted(cells) == list(range(16))
    best = np.clip(X[np.argsort(y)[:5]], lo, hi)
    # each local point is one of the five best moved by N(0, 0.1 of the side), clipped
    nearest = np.abs((local[:, None, :] - best[None]) / (hi - lo)).max(-1).min(1)
    assert nearest.max() < 0.5
    assert np.all([(np.abs(c - best) > 1e-12).any(axis=1).all() for c in local])
    np.testing.assert_array_equal(opt._candidates(X, y, lo, hi, np.random.default_rng(2)), C)


def test_bkb_local_candidates_redraw_about_twenty_coordinates_each():
    D = 40
    opt = BKB(D, seed=0, n_candidates=600, candidates="sobol")
    rng = np.random.default_rng(3)
    X, y = rng.random((5, D)), np.arange(5.0)
    C = opt._candidates(X, y, np.zeros(D), np.ones(D), np.random.default_rng(4))
    local = C[256:]  # 2^floor(log2(300)) = 256 Sobol points first
    moved = np.array([min((np.abs(c - X) > 0).sum(1)) for c in local])  # from its centre
    assert moved.mean() == pytest.approx(20 + 0.5, abs=1.5)  # p = 20 / D, plus one forced
    per_column = np.mean([(np.abs(c - X) > 0)[np.argmin((np.abs(c - X) > 0).sum(1))]
                          for c in local], axis=0)
    assert per_column.max() < 0.5 + 0.15  # the forced coordinate is drawn per candidate


def test_bkb_fantasy_keeps_the_mean_and_shrinks_the_variance():
    """Kriging believer in the sketch's feature space: an observation equal to the predicted
    mean leaves the mean unchanged everywhere and lowers the variance, at the point too."""
    opt, params = _bkb_fixed(candidates="perturb", n_refine=0)
    sk = opt._sketch()
    sums = opt._targets(sk)
    x1 = np.array([0.3, 0.6, 0.2])
    P0, Q0 = opt._coefficients(sk, sums, [])
    fantasy = opt._fantasy(sk, sums, [], x1)
    P1, Q1 = opt._coefficients(sk, sums, [fantasy])
    Xq = np.vstack([x1, np.random.default_rng(5).random((20, 3))])
    mean0, var0 = bkb_module._mean_var(sk, P0, Q0, Xq)
    mean1, var1 = bkb_module._mean_var(sk, P1, Q1, Xq)
    assert fantasy[1] == pytest.approx(mean0[0])
    np.testing.assert_allclose(mean1, mean0, rtol=1e-8, atol=1e-10)
    assert np.all(var1 <= var0 + 1e-12) and var1[0] < var0[0]
