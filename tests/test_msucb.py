import numpy as np
import pytest

from hdbo_engine.algorithms.baselines import GPUCB, RandomSearch
from hdbo_engine.algorithms.msucb import MSUCB, msucb_beta
from hdbo_engine.problems import make_problem


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


@pytest.mark.parametrize("N0, alpha", [(1, 0), (2, 1)])
def test_subspace_set_grows_by_n0_t_alpha_and_is_reproducible(N0, alpha):
    opt = MSUCB(12, d=4, N0=N0, alpha=alpha, seed=3)
    Z = opt.subspaces(5)
    assert Z.shape == (sum(N0 * j**alpha for j in range(1, 6)), 8)
    np.testing.assert_array_equal(MSUCB(12, d=4, N0=N0, alpha=alpha, seed=3).subspaces(5), Z)
    np.testing.assert_array_equal(opt.subspaces(3), Z[: sum(N0 * j**alpha for j in (1, 2, 3))])


def test_proposals_lie_on_subspaces_of_z_t():
    problem = make_problem("styblinski_tang", 10)
    opt = _run(MSUCB(10, d=3, seed=0, n_init=5), problem, 12)
    for x, meta in zip(opt.X[5:], opt.metas[5:], strict=True):
        Z = opt.subspaces(meta["t"])
        np.testing.assert_array_equal(x[:7], Z[meta["subspace"]])  # first D - d fixed to z
        assert np.all((x >= 0) & (x <= 1))


def test_d_zero_picks_a_point_of_z_t_and_d_equal_D_is_full_space():
    problem = make_problem("styblinski_tang", 6)
    opt = _run(MSUCB(6, d=0, seed=0, n_init=4), problem, 8)
    for x, meta in zip(opt.X[4:], opt.metas[4:], strict=True):
        np.testing.assert_array_equal(x, opt.subspaces(meta["t"])[meta["subspace"]])
    full = GPUCB(6, seed=0, n_init=4)
    assert full.d == 6 and full.fixed.size == 0
    _run(full, problem, 8)
    with pytest.raises(ValueError, match="full space"):
        GPUCB(6, d=2)


def test_rebuild_from_history_gives_the_same_next_proposal():
    problem = make_problem("levy", 8)
    kwargs = dict(d=3, seed=11, n_init=6)
    live = _run(MSUCB(8, **kwargs), problem, 14)
    live.tell(np.full(8, 0.3), float("nan"))  # a failed evaluation is part of history
    rebuilt = MSUCB.from_history(8, live.X, live.y, live.metas, **kwargs)
    np.testing.assert_array_equal(rebuilt.ask()[0].x, live.ask()[0].x)


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
    opt = _run(MSUCB(12, d=4, seed=1, n_init=8, screen_budget=1, n_optimize=2), problem, 12)
    (p,) = opt.ask()
    Z = opt.subspaces(p.meta["t"])
    np.testing.assert_array_equal(p.x[opt.fixed], Z[p.meta["subspace"]])
    assert np.all((p.x >= 0) & (p.x <= 1))


@pytest.mark.parametrize("kwargs, match", [
    ({"d": -1}, "d: expected"), ({"N0": 0}, "N0"), ({"alpha": -1}, "alpha"),
    ({"delta": 1.5}, "delta"), ({"b": 0}, "must be > 0"), ({"n_optimize": 0}, "n_optimize"),
    ({"restarts": 0}, "restarts"), ({"screen_budget": 0}, "screen_budget"),
    ({"screen_budget": 2.5}, "screen_budget"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MSUCB(10, **kwargs)
