import numpy as np
import pytest

from hdbo_cli.problems import make_problem
from hdbo_engine.acquisition import log_expected_improvement
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
