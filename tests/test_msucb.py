import math

import numpy as np
import pytest
from helpers import Capture, ei_by_quadrature, gp_posterior, shifted_sphere, told_history

from hdbo_cli.problems import make_problem
from hdbo_engine.acquisition import log_expected_improvement
from hdbo_engine.algorithms import msucb as msucb_module
from hdbo_engine.algorithms.baselines import GPUCB, RandomSearch
from hdbo_engine.algorithms.msucb import MSUCB, msucb_beta
from hdbo_engine.gp import GP
from hdbo_engine.streams import MSUCB_MASKS


def _run(opt, problem, budget):
    for _ in range(budget):
        (p,) = opt.ask()
        opt.tell(p.x, float(problem.evaluate_unit(p.x)[0]))
    return opt


def test_beta_matches_the_paper():
    t, d, D, a, b, delta = 7, 3, 40, 2.0, 0.5, 0.05
    expected = (2 * np.log(np.pi**2 * t**2 / delta)
                + 2 * d * np.log(2 * b * d * np.sqrt(np.log(6 * D * a / delta)) * t**2))
    assert msucb_beta(t, d, D, a, b, delta) == pytest.approx(expected)
    assert msucb_beta(t, 0, D, delta=delta) == pytest.approx(4 * np.log(np.pi**2 * t**2
                                                                        / (2 * delta)))
    opt = MSUCB(40, d=3, a=2.0, b=0.5, delta=0.05, beta_scale=0.5)
    assert opt.beta(t) == pytest.approx(0.5 * expected)
    # t = 1 (and anything below it): the logs of pi^2 / delta and 2 b d sqrt(log(6 D a / delta))
    first = 2 * np.log(np.pi**2 / 0.05) + 6 * np.log(3 * np.sqrt(np.log(6 * 40 * 2 / 0.05)))
    assert msucb_beta(1, 3, 40, 2.0, 0.5, 0.05) == pytest.approx(first)
    assert msucb_beta(0, 3, 40, 2.0, 0.5, 0.05) == pytest.approx(first)
    assert msucb_beta(1, 0, 40, delta=0.05) == pytest.approx(4 * np.log(np.pi**2 / 0.1))


@pytest.mark.parametrize("N0, alpha", [(1, 0), (2, 1)])
def test_subspace_set_grows_by_n0_t_alpha_and_is_reproducible(N0, alpha):
    opt = MSUCB(12, d=4, N0=N0, alpha=alpha, seed=3)
    Z = opt.subspaces(5)
    assert Z.shape == (sum(N0 * j**alpha for j in range(1, 6)), 8)
    np.testing.assert_array_equal(MSUCB(12, d=4, N0=N0, alpha=alpha, seed=3).subspaces(5), Z)
    np.testing.assert_array_equal(opt.subspaces(3), Z[: sum(N0 * j**alpha for j in (1, 2, 3))])


def test_proposals_lie_on_subspaces_of_z_t():
    problem = make_problem("styblinski_tang", 10)
    opt = _run(MSUCB(10, d=3, seed=0, n_init=5, trust_region=False, line_search=False),
               problem, 12)
    for x, meta in zip(opt.X[5:], opt.metas[5:], strict=True):
        Z = opt.subspaces(meta["t"])
        np.testing.assert_array_equal(x[:7], Z[meta["subspace"]])  # first D - d fixed to z
        assert np.all((x >= 0) & (x <= 1))


def test_d_zero_picks_a_point_of_z_t_and_d_equal_D_is_full_space():
    problem = make_problem("styblinski_tang", 6)
    opt = _run(MSUCB(6, d=0, seed=0, n_init=4, trust_region=False, line_search=False),
               problem, 8)
    for x, meta in zip(opt.X[4:], opt.metas[4:], strict=True):
        np.testing.assert_array_equal(x, opt.subspaces(meta["t"])[meta["subspace"]])
    full = GPUCB(6, seed=0, n_init=4)
    assert full.d == 6 and full.fixed.size == 0
    _run(full, problem, 8)
    with pytest.raises(ValueError, match="full space"):
        GPUCB(6, d=2)


@pytest.mark.parametrize("preset", ["practical", "paper"])
def test_rebuild_from_history_gives_the_same_next_proposal(preset):
    problem = make_problem("levy", 8)
    kwargs = dict(d=3, seed=11, n_init=6, preset=preset, failure_tol=2)
    live = _run(MSUCB(8, **kwargs), problem, 24)
    live.tell(np.full(8, 0.3), float("nan"))  # a failed evaluation is part of history
    rebuilt = MSUCB.from_history(8, live.X, live.y, live.metas, **kwargs)
    if preset == "practical":  # the trust region has moved and is rebuilt exactly
        assert live.trust_region.length != live.trust_region.length_init
        assert vars(rebuilt.trust_region) == vars(live.trust_region)
    else:
        assert rebuilt.trust_region is None
    np.testing.assert_array_equal(rebuilt.ask()[0].x, live.ask()[0].x)


def test_paper_preset_is_the_papers_configuration():
    opt = MSUCB(30, preset="paper")
    o = opt.options
    assert (o.N0, o.alpha, o.beta_scale, o.n_optimize, opt.d) == (1, 0.0, 1.0, None, 5)
    assert (opt.n_init, o.init_centre, opt.trust_region) == (20, False, None)
    assert o.acquisition == "ucb"  # eq. (8)
    assert opt.beta(7) == pytest.approx(msucb_beta(7, 5, 30))
    assert MSUCB(30, preset="paper", N0=4).options.N0 == 4  # an explicit value wins
    practical = MSUCB(30)
    assert practical.trust_region is not None and practical.options.init_centre
    assert practical.options.acquisition == "ucb"  # log-EI measured worse on hd
    assert o.n_perturb is None and practical.options.n_perturb == 15
    assert GPUCB(30).options.acquisition == "ucb"  # the baseline stays GP-UCB
    with pytest.raises(ValueError, match="acquisition: expected one of"):
        MSUCB(30, acquisition="ei")
    assert MSUCB(30, trust_region=False).trust_region is None


def _told_design(opt: MSUCB, problem, n: int, seed: int) -> np.ndarray:
    """Tell ``n`` uniform initial-design points; return the incumbent."""
    X = np.random.default_rng(seed).random((n, opt.dim))
    opt.tell(X, [float(problem.evaluate_unit(x)[0]) for x in X], [{"init": True}] * n)
    return X[int(np.argmin(opt.y))]


def test_trust_region_confines_proposals_around_the_incumbent():
    """failure_tol = 3 and six model points worse than the design: TuRBO halves the side
    twice, 0.8 -> 0.4 -> 0.2, so the region is the incumbent +- 0.1, clipped to the cube."""
    problem = make_problem("ackley", 20)
    opt = MSUCB(20, d=4, seed=5, n_init=6, failure_tol=3, n_perturb=None,
                init_design="uniform", line_search=False)
    incumbent = _told_design(opt, problem, 6, seed=5)
    worse = np.random.default_rng(6).random((6, 20))
    opt.tell(worse, opt.y.max() + 1.0 + np.arange(6))  # six failures
    lo, hi = np.clip(incumbent - 0.1, 0.0, 1.0), np.clip(incumbent + 0.1, 0.0, 1.0)
    (p,) = opt.ask()
    assert p.meta["t"] == 7  # six model points so far, plus one
    assert np.all(p.x >= lo - 1e-12) and np.all(p.x <= hi + 1e-12)
    Z = opt.subspaces(7)[p.meta["subspace"]]  # the stored draw, mapped into the region
    np.testing.assert_allclose(p.x[opt.fixed], lo[opt.fixed] + Z * (hi - lo)[opt.fixed])


def test_n_perturb_keeps_the_incumbents_values_outside_the_mask():
    problem = make_problem("ackley", 40)
    opt = MSUCB(40, d=4, seed=2, n_init=8, n_perturb=6, init_design="uniform",
                line_search=False)
    incumbent = _told_design(opt, problem, 8, seed=2)
    masks = opt.masks(12)
    assert masks.shape == opt.subspaces(12).shape == (120, 36)
    assert 0.12 < masks.mean() < 0.21  # each of the 36 fixed coordinates with p = 6 / 36
    np.testing.assert_array_equal(MSUCB(40, d=4, seed=2, n_perturb=6).masks(12), masks)
    (p,) = opt.ask()  # no model point yet: t = 1 and the side is still 0.8
    assert p.meta["t"] == 1
    lo, hi = np.clip(incumbent - 0.4, 0.0, 1.0), np.clip(incumbent + 0.4, 0.0, 1.0)
    mask = opt.masks(1)[p.meta["subspace"]]
    Z = opt.subspaces(1)[p.meta["subspace"]]
    fixed = p.x[opt.fixed]
    np.testing.assert_array_equal(fixed[~mask], incumbent[opt.fixed][~mask])
    np.testing.assert_allclose(fixed[mask], (lo[opt.fixed] + Z * (hi - lo)[opt.fixed])[mask])
    assert np.all(MSUCB(40, d=4, n_perturb=100).masks(3))  # more than D - d: every coordinate
    assert np.all(MSUCB(40, d=4, n_perturb=None).masks(3))  # None: every coordinate
    assert MSUCB(4, d=4, n_perturb=6).masks(2).shape == (20, 0)  # no fixed coordinate
    one = MSUCB(5, d=4, n_perturb=0.5, seed=1).masks(100)  # one fixed coordinate, p = 0.5
    assert one.shape == (1000, 1) and one.mean() == pytest.approx(0.5, abs=0.05)


def test_subspace_draws_are_independent_across_iterations_and_streams():
    opt = MSUCB(12, d=4, N0=3, seed=3, n_perturb=4)
    Z, masks = opt.subspaces(4), opt._draws(opt._mask_blocks, MSUCB_MASKS, 4)
    assert len({tuple(z) for z in Z}) == 12  # no block repeats another
    assert not np.array_equal(Z, masks)  # the masks have their own stream


def test_log_ei_proposal_beats_the_incumbents_free_coordinates_in_its_subspace():
    problem = make_problem("levy", 6)
    opt = _run(MSUCB(6, d=2, seed=3, n_init=6, N0=3, acquisition="logei"), problem, 14)
    (p,) = opt.ask()
    gp = opt.chain.model(opt.X, opt.y)
    incumbent = gp.X[int(np.argmax(gp.z))]
    at_incumbent = p.x.copy()  # the proposal's subspace, free coordinates at the incumbent's
    at_incumbent[opt.free] = incumbent[opt.free]

    def log_ei(x):
        mean, var = gp.predict(x[None])  # of -y, on the original scale
        z_mean, z_var = (mean - gp.y_mean) / gp.y_std, var / gp.y_std**2
        return log_expected_improvement(z_mean, z_var, None, None, float(gp.z.max()))[0][0]

    assert log_ei(p.x) >= log_ei(at_incumbent) - 1e-9
    assert np.isfinite(log_ei(p.x))


def test_batch_ask_gives_distinct_points_spread_by_kriging_believer():
    problem = make_problem("levy", 8)
    opt = _run(MSUCB(8, d=3, seed=2, n_init=6), problem, 8)
    X = np.array([p.x for p in opt.ask(4)])
    dists = np.linalg.norm(X[:, None] - X[None], axis=-1)[np.triu_indices(4, 1)]
    assert dists.min() > 1e-3


@pytest.mark.parametrize("name", ["hartmann6", "ackley"])
def test_msucb_beats_random_search(name):
    # Hartmann6 embedded in 10-D is the paper's low-effective-dimension setting.
    problem = make_problem(name, 10)
    ms = [_run(MSUCB(10, d=5, seed=s, n_init=10), problem, 45).best[1] for s in range(5)]
    rs = [_run(RandomSearch(10, seed=s), problem, 45).best[1] for s in range(5)]
    assert np.median(ms) < np.median(rs)


def test_screen_with_one_point_per_subspace_still_proposes_on_a_subspace_of_z_t():
    problem = make_problem("levy", 12)
    opt = _run(MSUCB(12, d=4, seed=1, n_init=8, screen_budget=1, n_optimize=2,
                     trust_region=False, line_search=False), problem, 12)
    (p,) = opt.ask()
    Z = opt.subspaces(p.meta["t"])
    np.testing.assert_array_equal(p.x[opt.fixed], Z[p.meta["subspace"]])
    assert np.all((p.x >= 0) & (p.x <= 1))


@pytest.mark.parametrize("kwargs, match", [
    ({"d": -1}, "d: expected"), ({"N0": 0}, "N0"), ({"alpha": -1}, "alpha"),
    ({"delta": 1.5}, "delta"), ({"b": 0}, "must be > 0"), ({"n_optimize": 0}, "n_optimize"),
    ({"restarts": 0}, "restarts"), ({"screen_budget": 0}, "screen_budget"),
    ({"screen_budget": 2.5}, "screen_budget"), ({"failure_tol": 0}, "failure_tol"),
    ({"preset": "fast"}, "preset"), ({"n_perturb": 0}, "n_perturb"),
    ({"n_perturb": "5"}, "n_perturb"), ({"n_perturb": True}, "n_perturb"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MSUCB(10, **kwargs)


def test_trust_region_must_be_a_bool():
    with pytest.raises(TypeError, match="trust_region"):
        MSUCB(10, trust_region="yes")


def test_rebuild_starts_the_hyperparameter_chain_at_the_recorded_checkpoint(monkeypatch):
    """Each checkpoint is recorded once in a meta; a rebuild refits only after the latest one
    and proposes what the uninterrupted optimizer does, with or without the records."""
    problem = make_problem("levy", 8)
    kwargs = dict(d=3, seed=11, n_init=6, failure_tol=2)
    live = _run(MSUCB(8, **kwargs), problem, 24)
    recorded = [m["gp_chain"]["n"] for m in live.metas if "gp_chain" in m]
    assert recorded == sorted(set(recorded)) and recorded[-1] >= 20
    expected = live.ask()[0].x
    fits: list[int] = []
    real_fit = GP.fit
    monkeypatch.setattr(GP, "fit", lambda self, X, *a, **k: fits.append(len(X))
                        or real_fit(self, X, *a, **k))
    rebuilt = MSUCB.from_history(8, live.X, live.y, live.metas, **kwargs)
    np.testing.assert_array_equal(rebuilt.ask()[0].x, expected)
    assert all(n > recorded[-1] for n in fits) and len(fits) <= 1
    bare = [{k: v for k, v in m.items() if k != "gp_chain"} for m in live.metas]
    forged = [dict(m) for m in live.metas]
    last = max(i for i, m in enumerate(forged) if "gp_chain" in m)
    forged[last]["gp_chain"] = {**forged[last]["gp_chain"], "fp": "0" * 20}  # another history
    for metas in (bare, forged):
        fits.clear()
        rebuilt = MSUCB.from_history(8, live.X, live.y, metas, **kwargs)
        np.testing.assert_array_equal(rebuilt.ask()[0].x, expected)
        assert len(fits) > 1  # replayed from scratch or from an earlier checkpoint


def test_a_warm_start_without_metas_costs_one_hyperparameter_fit(monkeypatch):
    """Twelve points told without a meta are one run: the chain's checkpoints inside it move
    to its end, so the first ask fits once, on all twelve."""
    X = np.random.default_rng(0).random((12, 3))
    opt = MSUCB(3, seed=0, n_init=4, init_design="uniform", line_search=False)
    opt.tell(X, (X**2).sum(1))
    fits: list[int] = []
    real_fit = GP.fit
    monkeypatch.setattr(GP, "fit", lambda self, Xf, *a, **k: fits.append(len(Xf))
                        or real_fit(self, Xf, *a, **k))
    opt.ask()
    assert fits == [12]

# ------------------------------------------- the proposal step, recomputed from the paper
# Each test gets past the initial design by telling a history first (``n_init`` small,
# ``init_design="uniform"``, no line search), so what is checked is what the model step does.
# Hyperparameters are read from the model objects; every posterior, acquisition value, beta
# and selection is recomputed here with numpy from the paper's formulas.


def paper_msucb_beta(t: int, d: int, D: int, a: float = 1.0, b: float = 1.0,
                     delta: float = 0.1) -> float:
    """beta_t of MS-UCB, supplement Theorem 3 (d = D: GP-UCB's continuous-domain rate)."""
    return (2 * math.log(math.pi**2 * t**2 / delta)
            + 2 * d * math.log(2 * b * d * math.sqrt(math.log(6 * D * a / delta)) * t**2))


def _acquisition_call(monkeypatch, opt):
    """Ask once, capturing the acquisition handed to L-BFGS-B and its starting points."""
    capture = Capture(msucb_module.lbfgsb_batch)
    monkeypatch.setattr(msucb_module, "lbfgsb_batch", capture)
    (proposal,) = opt.ask()
    ((acq, Y0),) = [call[:2] for call in capture.calls]
    return proposal, acq, Y0


@pytest.mark.parametrize("algorithm", ["msucb", "gpucb"])
def test_msucb_acquisition_is_ucb_with_the_papers_beta(monkeypatch, algorithm):
    D, d, n_init, n = 4, 2, 3, 9
    if algorithm == "msucb":
        opt = MSUCB(D, d=d, N0=2, seed=4, n_init=n_init, init_design="uniform",
                    line_search=False, trust_region=False, n_perturb=None, n_optimize=None)
    else:
        d = D
        opt = GPUCB(D, seed=4, n_init=n_init)
    told_history(opt, shifted_sphere, n_init, seed=0)
    rng = np.random.default_rng(5)
    X_model = rng.random((n - n_init, D))
    opt.tell(X_model, [shifted_sphere(x) for x in X_model])
    proposal, acq, Y0 = _acquisition_call(monkeypatch, opt)

    t = n - n_init + 1  # model-based proposals so far, plus one
    beta = 0.1 * paper_msucb_beta(t, d, D)  # the practical preset's beta_scale = 0.1
    if d == D:
        full = Y0
    else:  # N0 = 2 subspaces per iteration, the same number of starts in each
        Z = opt.subspaces(t)
        assert Z.shape == (2 * t, D - d)
        which = np.repeat(np.arange(2 * t), len(Y0) // (2 * t))
        full = np.hstack([Z[which], Y0])
    values, _ = acq(Y0)
    mean, var = gp_posterior(opt.X, -opt.y, opt.chain.gp.params, full)
    sd = np.sqrt(var)
    implied_beta = np.median(((values - mean) / sd) ** 2)
    assert implied_beta == pytest.approx(beta, rel=1e-6)
    np.testing.assert_allclose(values, mean + math.sqrt(beta) * sd, rtol=1e-6, atol=1e-9)
    # the proposal is at least as good as every start under the recomputed acquisition
    p_mean, p_var = gp_posterior(opt.X, -opt.y, opt.chain.gp.params, proposal.x[None])
    assert p_mean[0] + math.sqrt(beta * p_var[0]) >= values.max() - 1e-6


def test_msucb_trust_region_restarts_after_collapsing():
    """failure_tol=1: six failures leave a side of 0.8 / 2^6 = 0.0125, the seventh falls below
    2^-7 and the region restarts at 0.8 around the same incumbent."""
    D = 4
    opt = MSUCB(D, d=2, seed=1, n_init=3, init_design="uniform", line_search=False,
                failure_tol=1, n_perturb=None)
    told_history(opt, shifted_sphere, 3, seed=1)
    incumbent = opt.X[int(np.argmin(opt.y))]
    far = np.where(incumbent > 0.5, 0.0, 1.0)  # worse than every told point
    for k in range(7):
        x = np.clip(far + 0.01 * k, 0.0, 1.0)
        opt.tell(x, shifted_sphere(x) + 1.0)
        if k == 5:
            (p,) = opt.ask()
            assert np.abs(p.x - incumbent).max() <= 0.0125 / 2 + 1e-12
            opt.clear_pending()
    (p,) = opt.ask()
    step = np.abs(p.x - incumbent)
    assert step.max() <= 0.4 + 1e-12
    assert step.max() > 0.0125  # the side is back at 0.8, not stuck at its minimum


def _msucb_told(D=5, d=2, n_model=4, **kwargs) -> MSUCB:
    """MS-UCB after 4 uniform design points and ``n_model`` model points of the sphere."""
    opt = MSUCB(D, d=d, seed=7, n_init=4, init_design="uniform", line_search=False, **kwargs)
    told_history(opt, shifted_sphere, 4, seed=7)
    X = np.random.default_rng(8).random((n_model, D))
    opt.tell(X, [shifted_sphere(x) for x in X])
    return opt


def _hand_ucb(opt: MSUCB, X: np.ndarray, t: int) -> np.ndarray:
    """mu + sqrt(0.1 beta_t) sigma of the standardised GP of -y (module docstring)."""
    mean, var = gp_posterior(opt.X, -opt.y, opt.chain.gp.params, X)
    return mean + math.sqrt(0.1 * paper_msucb_beta(t, opt.d, opt.dim)) * np.sqrt(var)


def test_msucb_starts_lbfgsb_from_each_subspaces_best_candidates(monkeypatch):
    """No screening (n_optimize=None): every subspace of Z_t gets ``restarts`` starts, its
    candidates with the highest UCB; the proposal is the best L-BFGS-B result."""
    opt = _msucb_told(N0=3, restarts=2, trust_region=False, n_perturb=None, n_optimize=None)
    cand = Capture(MSUCB._candidates)
    monkeypatch.setattr(MSUCB, "_candidates", lambda self, *a: cand(self, *a))
    runs = Capture(msucb_module.lbfgsb_batch)
    monkeypatch.setattr(msucb_module, "lbfgsb_batch", runs)
    (p,) = opt.ask()
    t = 5  # four model points so far, plus one
    Z = opt.subspaces(t)
    assert Z.shape == (15, 3)
    C = cand.returned
    assert C.shape == (32, 2)
    ((_, Y0, lo, hi),) = [call[:4] for call in runs.calls]
    np.testing.assert_array_equal(lo, 0.0)
    np.testing.assert_array_equal(hi, 1.0)
    incumbent = opt.X[int(np.argmin(opt.y))]
    np.testing.assert_array_equal(C[0], incumbent[3:])  # the incumbent's free coordinates
    expected = []
    for i in range(15):
        full = np.hstack([np.repeat(Z[i][None], 32, 0), C])
        order = np.argsort(-_hand_ucb(opt, full, t))
        expected.extend(C[order[:2]])
    np.testing.assert_allclose(Y0, np.array(expected), rtol=0, atol=0)
    Y, vals = runs.returned
    k = int(np.argmax(vals))
    np.testing.assert_array_equal(p.x, np.hstack([Z[k // 2], Y[k]]))
    assert (p.meta["t"], p.meta["subspace"]) == (t, k // 2)


@pytest.mark.parametrize("screen_budget, c_screen", [(30, 5), (5, 1)])
def test_msucb_screens_subspaces_on_their_best_candidate(monkeypatch, screen_budget, c_screen):
    """n_optimize=2 of 6 subspaces: each subspace is scored on the first
    max(1, screen_budget // 6) candidates and the two with the highest maximum are refined."""
    opt = _msucb_told(N0=6, restarts=1, trust_region=False, n_perturb=None, n_optimize=2,
                      screen_budget=screen_budget, n_model=0)
    cand = Capture(MSUCB._candidates)
    monkeypatch.setattr(MSUCB, "_candidates", lambda self, *a: cand(self, *a))
    runs = Capture(msucb_module.lbfgsb_batch)
    monkeypatch.setattr(msucb_module, "lbfgsb_batch", runs)
    ranked = Capture(msucb_module.top_k)
    monkeypatch.setattr(msucb_module, "top_k", ranked)
    (p,) = opt.ask()
    Z, C = opt.subspaces(1), cand.returned
    best = [_hand_ucb(opt, np.hstack([np.repeat(z[None], c_screen, 0), C[:c_screen]]), 1).max()
            for z in Z]
    ((screened, n_refined),) = ranked.calls
    np.testing.assert_allclose(screened, best, rtol=1e-7)
    assert n_refined == 2
    chosen = list(np.argsort(best)[::-1][:2])
    ((_, Y0),) = [call[:2] for call in runs.calls]
    Y, vals = runs.returned
    k = int(np.argmax(vals))
    assert p.meta["subspace"] == chosen[k]
    for j, i in enumerate(chosen):  # one start each: its best candidate over all 32
        scores = _hand_ucb(opt, np.hstack([np.repeat(Z[i][None], 32, 0), C]), 1)
        np.testing.assert_array_equal(Y0[j], C[int(np.argmax(scores))])


def test_msucb_never_proposes_a_told_point_when_another_result_is_unseen(monkeypatch):
    """The best L-BFGS-B result is a told point (subspace 4, start 12 of 18): the proposal
    is the best of the others."""
    opt = _msucb_told(N0=1, restarts=3, trust_region=False, n_perturb=None)
    told = np.hstack([opt.subspaces(5)[4], [0.3, 0.4]])
    opt.tell(told, shifted_sphere(told))  # a fifth model point: t = 6, six subspaces

    def fake(acq, Y0, lo, hi):
        Y, vals = Y0.copy(), np.arange(18.0)
        Y[12], vals[12] = told[3:], 100.0
        return Y, vals

    runs = Capture(fake)
    monkeypatch.setattr(msucb_module, "lbfgsb_batch", runs)
    (p,) = opt.ask()
    Y0 = runs.calls[0][1]
    np.testing.assert_array_equal(p.x, np.hstack([opt.subspaces(6)[5], Y0[17]]))
    assert (p.meta["t"], p.meta["subspace"]) == (6, 5)


def test_msucb_batch_counts_each_fantasy_in_t_and_records_the_chain_once():
    opt = _msucb_told(N0=2, n_model=3)
    batch = opt.ask(3)
    assert [p.meta["t"] for p in batch] == [4, 5, 6]
    assert "gp_chain" in batch[0].meta and all("gp_chain" not in p.meta for p in batch[1:])
    X = np.array([p.x for p in batch])
    assert len({tuple(x) for x in X}) == 3
    (after,) = opt.ask()  # the three pending points count as well
    assert after.meta["t"] == 7 and "gp_chain" not in after.meta


def test_msucb_with_fewer_than_two_finite_values_draws_uniformly():
    opt = MSUCB(3, seed=0, n_init=1, init_design="uniform", line_search=False,
                init_centre=False)
    opt.tell(np.full(3, 0.5), 1.0, {"init": True})
    opt.tell(np.full(3, 0.2), float("nan"))
    ((x, meta),) = opt._propose(1, np.random.default_rng(0))
    assert meta == {"random": True} and x.shape == (3,) and len(set(x)) == 3
    opt.tell(np.full(3, 0.7), 2.0)  # two finite values: the GP proposes
    (p,) = opt.ask()
    assert "random" not in p.meta and p.meta["t"] == 3


def test_msucb_batch_conditions_on_the_told_values_and_believed_pending_means(monkeypatch):
    opt = _msucb_told(N0=2, n_model=3)
    models = []
    real = MSUCB._maximize
    monkeypatch.setattr(MSUCB, "_maximize", lambda self, gp, *a: models.append(gp)
                        or real(self, gp, *a))
    first, second = opt.ask(2)
    base, believer = models
    np.testing.assert_array_equal(believer.X, np.vstack([opt.X, first.x]))
    target = -opt.y  # the model of -y, then the first point at its predicted mean
    expected = np.append(target, base.predict(first.x[None])[0])
    np.testing.assert_allclose(believer.y_mean + believer.y_std * believer.z, expected,
                               rtol=1e-10)
    np.testing.assert_array_equal(believer.params.lengthscales, base.params.lengthscales)


def test_msucb_d_zero_proposes_the_unseen_point_of_z_t_with_the_highest_ucb():
    opt = _msucb_told(d=0, N0=4, trust_region=False, n_perturb=None, n_model=2)
    (p,) = opt.ask()
    t = 3
    Z = opt.subspaces(t)
    mean, var = gp_posterior(opt.X, -opt.y, opt.chain.gp.params, Z)
    beta = 0.1 * 4 * math.log(math.pi**2 * t**2 / 0.2)  # d = 0: 4 log(pi^2 t^2 / (2 delta))
    scores = mean + math.sqrt(beta) * np.sqrt(var)
    k = int(np.argmax(scores))
    np.testing.assert_array_equal(p.x, Z[k])
    assert (p.meta["t"], p.meta["subspace"]) == (t, k)


def test_msucb_candidates_are_the_incumbent_local_draws_and_uniform_draws():
    opt = MSUCB(6, d=3, seed=0)
    lo, hi = np.array([0.2, 0.0, 0.5]), np.array([0.6, 1.0, 0.9])
    y_inc = np.array([0.6, 0.5, 0.5])  # on the box's upper face in coordinate 0
    C = opt._candidates(y_inc, lo, hi, 400, np.random.default_rng(0))
    assert C.shape == (400, 3)
    np.testing.assert_array_equal(C[0], y_inc)
    assert (C >= lo).all() and (C <= hi).all()
    width = hi - lo
    local, uniform = (C[1:101] - y_inc) / width, (C[101:] - lo) / width
    # 100 = 400 // 4 local draws, N(0, 0.1) of the side, clipped into the box
    assert np.abs(local).max() < 0.45
    assert (C[1:101, 0] == hi[0]).mean() > 0.3  # about half the draws clipped to the face
    assert np.std(local[:, 1]) == pytest.approx(0.1, rel=0.2)
    assert uniform.mean() == pytest.approx(0.5, abs=0.03)
    assert np.std(uniform) == pytest.approx(math.sqrt(1 / 12), rel=0.1)


def test_msucb_log_ei_acquisition_is_log_of_the_expected_improvement(monkeypatch):
    opt = _msucb_told(N0=2, trust_region=False, n_perturb=None, acquisition="logei")
    capture = Capture(msucb_module.lbfgsb_batch)
    monkeypatch.setattr(msucb_module, "lbfgsb_batch", capture)
    opt.ask()
    ((acq, Y0),) = [call[:2] for call in capture.calls]
    Z = opt.subspaces(5)
    which = np.repeat(np.arange(len(Z)), len(Y0) // len(Z))
    full = np.hstack([Z[which], Y0])
    mean, var = gp_posterior(opt.X, -opt.y, opt.chain.gp.params, full)
    z = -(opt.y - opt.y.mean()) / opt.y.std()  # the best standardised target
    expected = [math.log(ei_by_quadrature(m, math.sqrt(v), z.max()))
                for m, v in zip(mean, var, strict=True)]
    np.testing.assert_allclose(acq(Y0)[0], expected, rtol=1e-5)
