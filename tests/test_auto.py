"""Auto: the shared design once, then the four algorithms take turns on one history."""

from __future__ import annotations

import importlib.util
import zlib

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from hdbo_engine import Proposal, get_algorithm
from hdbo_engine.algorithms.auto import LARGE_D, Auto, default_members
from hdbo_engine.gp import GP

D, BUDGET = 8, 80  # 10 evaluations per dimension: the members take turns


def _rastrigin(x: np.ndarray) -> float:
    z = 4.0 * (np.asarray(x) - 0.62)
    return float(np.sum(z**2 - np.cos(2 * np.pi * z)))


def _run(opt: Auto, n: int) -> None:
    for _ in range(n):
        (p,) = opt.ask()
        opt.tell(p.x, _rastrigin(p.x))


@pytest.fixture(scope="module")
def trained() -> Auto:
    opt = Auto(D, seed=4, budget=BUDGET)
    _run(opt, 36)
    return opt


def test_registered_and_top_level() -> None:
    import hdbo_engine

    assert get_algorithm("auto") is Auto
    assert hdbo_engine.Auto is Auto


def test_each_model_proposal_names_its_algorithm(trained: Auto) -> None:
    members = set(default_members())
    design = [m for m in trained.metas if m.get("init")]
    model = [m for m in trained.metas if not m.get("init")]
    assert len(design) >= trained.n_init  # the centre, the axis pass and the line search
    assert all("algorithm" not in m for m in design)
    assert model and all(m["algorithm"] in members for m in model)
    assert len({m["algorithm"] for m in model}) >= 2  # a portfolio, not one algorithm


def test_cobbo_alone_above_large_d() -> None:
    assert list(Auto(LARGE_D + 1, seed=0).members) == ["cobbo"]
    assert set(Auto(LARGE_D, seed=0).members) == set(default_members())
    assert set(default_members()) >= {"msucb", "bkb", "cobbo"}


def test_default_members_leave_out_goucb_only_without_torch(monkeypatch) -> None:
    pytest.importorskip("torch")
    assert default_members() == ("goucb", "msucb", "bkb", "cobbo")
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else find_spec(name, *a))
    assert default_members() == ("msucb", "bkb", "cobbo")


def test_rebuild_from_history_proposes_the_same_points(trained: Auto) -> None:
    first = trained.ask(2)
    rebuilt = Auto.from_history(D, trained.X, trained.y, trained.metas, seed=4, budget=BUDGET)
    for p in first:
        rebuilt.add_pending(p.x, p.meta)
    assert np.array_equal(rebuilt.ask()[0].x, trained.ask()[0].x)
    trained.clear_pending()


def test_each_member_is_told_every_point_and_only_its_own_metas() -> None:
    opt = Auto(4, seed=2, budget=30)
    for _ in range(30):
        (p,) = opt.ask()
        opt.tell(p.x, _rastrigin(p.x), p.meta)
    assert len({m["algorithm"] for m in opt.metas if "algorithm" in m}) >= 2
    kept = [i for i, m in enumerate(opt.metas) if "replicate" not in m]
    assert len(kept) == opt.n_told - 1  # this run's design asked for a replicate
    for name in opt.members:
        member = opt.arms[name].sync(opt)
        # every point but the replicate, the others' too, in told order
        assert np.array_equal(member.X, opt.X[kept])
        for told, meta in zip(member.metas, [opt.metas[i] for i in kept], strict=True):
            if meta.get("algorithm") in (None, name):  # the design's points and its own
                assert told == meta
            elif meta["algorithm"] == "cobyla":  # COBYLA's: a start shared like the design's
                assert told == {"init": True}
            else:  # another arm's point: a meta naming that arm alone
                assert told == {"algorithm": meta["algorithm"]}
    (p,) = opt.ask()  # pending: its member keeps its meta, the others see a bare point
    for name in opt.members:
        member = opt.arms[name].sync(opt)
        assert [q.meta for q in member._pending] == [p.meta if p.meta["algorithm"] == name
                                                     else {}]


def test_a_member_searches_around_its_own_best_not_another_arms_better_point() -> None:
    """A member models every point but centres its search on the best of the design and its
    own proposals (``hdbo_engine.base``, "Points of other proposers"): after another arm's
    far, better point, MS-UCB's next proposal lies in its trust region around its own
    incumbent, outside the region it would have around that point."""
    opt = Auto(10, seed=3, budget=200, noisy=False)
    sphere = lambda x: float(np.sum((np.asarray(x) - 0.5) ** 2))  # noqa: E731
    while True:
        (p,) = opt.ask()
        opt.tell(p.x, sphere(p.x))
        if "algorithm" in p.meta:
            break
    before = opt.best
    far = np.full(10, 0.95)
    opt.tell(far, -1.0, {"algorithm": "bkb"})
    (q,) = opt.arms["msucb"].ask(opt, 1, np.random.default_rng(0), None)
    member = opt.members["msucb"]
    assert opt.best[1] == -1.0 and member.best[1] == -1.0
    assert member.incumbent[1] == before[1]
    half = 0.5 * member.trust_region.length
    assert np.all(np.abs(q.x - member.incumbent[0]) <= half + 1e-12)
    assert np.any(np.abs(q.x - far) > half)


def test_same_seed_same_run() -> None:
    a, b = Auto(D, seed=9, budget=30), Auto(D, seed=9, budget=30)
    _run(a, 30)
    _run(b, 30)
    assert np.array_equal(a.X, b.X)
    assert a.metas == b.metas


def test_a_batch_across_the_design_end_is_distinct_and_tagged() -> None:
    opt = Auto(D, seed=1, budget=BUDGET)
    _run(opt, opt.n_init - 2)
    batch = opt.ask(5)
    X = np.array([p.x for p in batch])
    assert len({row.tobytes() for row in X}) == 5
    assert not opt.seen_mask(X[:0]).any()
    assert [bool(p.meta.get("init")) for p in batch][:2] == [True, True]
    assert all("algorithm" in p.meta for p in batch if not p.meta.get("init"))


def test_records_count_improvements_per_member_in_the_window() -> None:
    opt = Auto(2, seed=0, window=3, members=("bkb", "cobbo"))
    # values in told order, with the member that proposed each model point
    history = [(5.0, {"init": True}), (4.0, {"algorithm": "bkb"}),      # bkb success
               (4.5, {"algorithm": "cobbo"}), (3.0, {"algorithm": "cobbo"}),  # fail, success
               (np.nan, {"algorithm": "bkb"}), (3.5, {"algorithm": "bkb"}),    # fail, fail
               (3.2, {"algorithm": "bkb"}),  # fail: below the value before it, not the best
               (1.0, {"algorithm": "bkb"})]  # success
    rng = np.random.default_rng(0)
    for y, meta in history:
        opt.tell(rng.random(2), y, meta)
    # bkb's last three: 3.5 (fail), 3.2 (fail), 1.0 (success); cobbo's two: fail, success
    assert opt.records() == {"bkb": (1, 2), "cobbo": (1, 1)}


def test_thompson_choice_favours_the_member_that_improves() -> None:
    opt = Auto(2, seed=0, window=10, members=("bkb", "cobbo"))
    rng = np.random.default_rng(1)
    for k in range(20):  # bkb's points always improve the best, cobbo's never do
        who = "bkb" if k % 2 == 0 else "cobbo"
        opt.tell(rng.random(2), 100.0 - k if who == "bkb" else 1e3, {"algorithm": who})
    picks = [next(iter(opt.allocate(1, np.random.default_rng(s)))) for s in range(200)]
    # Beta(11, 1) against Beta(1, 11): P(cobbo's draw wins) is about 3e-7
    assert picks.count("bkb") == 200


def _even_records(opt: Auto) -> None:
    """Told design points, then five successes and five failures for each of bkb and cobbo."""
    rng = np.random.default_rng(2)
    opt.tell(rng.random((opt.n_init, 2)), np.full(opt.n_init, 1e3), [{"init": True}] * opt.n_init)
    for k in range(20):  # bkb, cobbo, bkb, ...: the first ten improve, the next ten do not
        who = "bkb" if k % 2 == 0 else "cobbo"
        opt.tell(rng.random(2), 100.0 - k if k < 10 else 1e3, {"algorithm": who})


def test_a_batch_gives_each_point_to_the_arm_of_its_own_draw() -> None:
    strong = Auto(2, seed=0, window=10, members=("bkb", "cobbo"))
    rng = np.random.default_rng(1)
    for k in range(20):  # as above: Beta(11, 1) against Beta(1, 11)
        who = "bkb" if k % 2 == 0 else "cobbo"
        strong.tell(rng.random(2), 100.0 - k if who == "bkb" else 1e3, {"algorithm": who})
    assert strong.allocate(8, np.random.default_rng(0)) == {"bkb": 8}
    even = Auto(2, seed=0, window=10, members=("bkb", "cobbo"))
    _even_records(even)
    assert even.records() == {"bkb": (5, 5), "cobbo": (5, 5)}
    shares = even.allocate(400, np.random.default_rng(0))
    # equal records: each point is a fair coin, so bkb's count is Binomial(400, 1/2), sd 10
    assert sum(shares.values()) == 400 and 160 <= shares["bkb"] <= 240


def test_a_batch_ask_holds_points_of_several_arms_all_distinct() -> None:
    opt = Auto(2, seed=0, budget=60, window=10, members=("bkb", "cobbo"))
    _even_records(opt)
    batch = opt.ask(8)
    names = [p.meta["algorithm"] for p in batch]
    assert set(names) == {"bkb", "cobbo"}  # P(one arm draws all 8) = 2 / 2**8 per seed
    assert names == sorted(names)  # each arm's points together, in the arms' order
    assert len({p.x.tobytes() for p in batch}) == 8


def test_recommend_is_the_best_point_when_deterministic_and_the_mean_when_noisy() -> None:
    rng = np.random.default_rng(3)
    X = rng.random((60, 2))
    smooth = np.sum((X - 0.7) ** 2, axis=1)
    lucky = int(np.argmax(smooth))  # the worst point of the smooth function
    y = smooth + rng.normal(0.0, 0.02, 60)
    y[lucky] = smooth.min() - 0.5  # one draw far luckier than its neighbourhood allows
    for noisy, expected in ((False, lucky), (True, int(np.argmin(smooth)))):
        opt = Auto(2, seed=0, noisy=noisy)
        opt.tell(X, y)
        rec = opt.recommend()
        if noisy:
            # the recommended point is among the truly best few, not the lucky outlier
            assert smooth[np.flatnonzero((X == rec).all(axis=1))[0]] <= np.sort(smooth)[4]
        else:
            assert np.array_equal(rec, X[expected])


@pytest.mark.parametrize("seed", [0, 1, 2, 4, 5])
def test_noisy_recommendation_prefers_a_supported_low_mean_to_one_lucky_draw(seed: int) -> None:
    # 40 draws around 0.2 of a flat level 0 with noise 0.3, 40 around 0.8 of level 1, and one
    # isolated draw of -0.4: the isolated point has the lowest posterior mean, but one draw
    # with noise 0.3 is weak evidence, and the upper 0.9 quantile prefers the level-0 cluster
    rng = np.random.default_rng(seed)
    X = np.vstack([0.2 + 0.05 * rng.random((40, 2)), 0.75 + 0.05 * rng.random((40, 2)),
                   [[0.15, 0.9]]])
    y = np.concatenate([rng.normal(0.0, 0.3, 40), rng.normal(1.0, 0.3, 40), [-0.4]])
    mean, _ = GP(2).fit(X, y).predict(X)
    assert int(np.argmin(mean)) == 80  # the lowest-mean rule would recommend the lucky draw
    opt = Auto(2, seed=0, noisy=True)
    opt.tell(X, y)
    assert np.all(opt.recommend() <= 0.25)


def _hashed(x: np.ndarray) -> float:
    """A deterministic value no smooth model explains: a hash of the point's bytes."""
    return float(np.random.default_rng(zlib.crc32(np.asarray(x).tobytes())).random())


def _through_design(opt: Auto, objective) -> Proposal:
    """Ask and tell the design (metas as the bench gives them: none); the first model ask."""
    while True:
        (p,) = opt.ask()
        if not p.meta.get("init"):
            return p
        opt.tell(p.x, objective(p.x))


def test_a_noise_like_design_is_followed_by_a_replicate_of_its_best_point() -> None:
    opt = Auto(6, seed=0, budget=60)
    p = _through_design(opt, _hashed)
    lowest = int(np.argmin(opt.y))  # every told point is a design point here
    assert p.meta == {"algorithm": "auto", "replicate": lowest}
    assert np.array_equal(p.x, opt.X[lowest])
    assert opt.noise_observed() is None  # not told yet
    opt.tell(p.x, _hashed(p.x))  # the same value again: deterministic
    assert opt.noise_observed() is False
    # judged deterministic, the recommendation is the best told point, never a smoothed one
    for _ in range(15):
        (q,) = opt.ask()
        assert "replicate" not in q.meta
        opt.tell(q.x, _hashed(q.x))
    assert np.array_equal(opt.recommend(), opt.X[int(np.argmin(opt.y))])


def test_a_batch_across_the_design_end_holds_the_replicate_and_observes_noise() -> None:
    # batches of 4 while the design has two points left: the batch holds those two, then the
    # replicate of the lowest told design point, then one model point; telling the replicate a
    # different value than its original's judges the objective noisy
    opt = Auto(6, seed=0, budget=60)
    while opt.n_told < opt.n_init - 2:
        (p,) = opt.ask()
        opt.tell(p.x, _hashed(p.x))
    lowest = int(np.argmin(opt.y))
    batch = opt.ask(4)
    assert [bool(p.meta.get("init")) for p in batch] == [True, True, False, False]
    assert batch[2].meta == {"algorithm": "auto", "replicate": lowest}
    assert np.array_equal(batch[2].x, opt.X[lowest])
    assert batch[3].meta["algorithm"] in opt.arms
    for p in batch:
        opt.tell(p.x, _hashed(p.x) + (0.1 if "replicate" in p.meta else 0.0), p.meta)
    assert opt.noise_observed() is True
    assert not any("replicate" in p.meta for p in opt.ask(4))  # one replicate per run


def test_under_constraints_the_replicate_repeats_the_best_feasible_design_point() -> None:
    opt = Auto(6, seed=0, budget=60)
    while True:  # the design, with every value below 0.3 infeasible
        (p,) = opt.ask()
        if not p.meta.get("init"):
            break
        y = _hashed(p.x)
        opt.tell(p.x, y, constraints=[1.0 if y < 0.3 else -1.0])
    assert opt.y.min() < 0.3  # the lowest value is infeasible
    feasible = np.flatnonzero(opt.y >= 0.3)
    best_feasible = int(feasible[np.argmin(opt.y[feasible])])
    assert p.meta == {"algorithm": "auto", "replicate": best_feasible}


def test_the_replicate_only_delays_the_search_by_one_evaluation() -> None:
    # members never see the replicate and the member choice is drawn as without it, so
    # the run with a replicate proposes what a run without one (noisy=True) proposes, one
    # evaluation later
    runs = {}
    for noisy in (None, True):
        opt = Auto(6, seed=3, budget=60, noisy=noisy)
        for _ in range(45):
            (p,) = opt.ask()
            opt.tell(p.x, _hashed(p.x))
        runs[noisy] = opt
    with_replicate, without = runs[None], runs[True]
    (r,) = [i for i, m in enumerate(with_replicate.metas) if "replicate" in m]
    assert np.array_equal(with_replicate.X[:r], without.X[:r])
    assert np.array_equal(with_replicate.X[r + 1:], without.X[r:44])
    assert [m.get("algorithm") for m in with_replicate.metas[r + 1:]] == [
        m.get("algorithm") for m in without.metas[r:44]]


def test_a_replicate_that_differs_makes_the_recommendation_noise_aware() -> None:
    # the clusters of the test above, then a replicate of point 0 told with the same value
    # (judged deterministic: the lowest told value is the answer) or a different one (judged
    # noisy: the answer of an Auto told the objective is noisy, a different point here)
    rng = np.random.default_rng(0)
    X = np.vstack([0.2 + 0.05 * rng.random((40, 2)), 0.75 + 0.05 * rng.random((40, 2)),
                   [[0.15, 0.9]], [[0.0, 0.0]]])
    y = np.concatenate([rng.normal(0.0, 0.3, 40), rng.normal(1.0, 0.3, 40), [-0.4], [0.0]])
    metas = [{}] * 81 + [{"algorithm": "auto", "replicate": 0}]
    answers = {}
    for shift in (0.0, 0.3):
        X[81], y[81] = X[0], y[0] + shift
        opt = Auto(2, seed=0)
        opt.tell(X, y, metas)
        assert opt.noise_observed() is (shift != 0.0)
        answers[shift] = opt.recommend()
    assert np.array_equal(answers[0.0], X[int(np.argmin(y[:81]))])
    declared = Auto(2, seed=0, noisy=True)
    declared.tell(X, y, metas)
    assert np.array_equal(answers[0.3], declared.recommend())
    assert not np.array_equal(answers[0.3], answers[0.0])


def test_no_replicate_in_a_space_the_engine_enumerates() -> None:
    from hdbo_engine import Integer, Space

    space = Space([Integer(0, 3)] * 8)  # 4^8 = 65536 points: enumerated, never repeated
    opt = Auto(space, seed=0, budget=60)
    for _ in range(40):
        (p,) = opt.ask()
        assert "replicate" not in p.meta
        opt.tell(p.x, _hashed(p.x))
    assert len({tuple(x) for x in opt.X}) == 40


@pytest.mark.parametrize("noisy", [None, True, False])
def test_no_replicate_on_a_smooth_design_or_when_noise_is_declared(noisy: bool | None) -> None:
    def sphere(x: np.ndarray) -> float:
        return float(np.sum((x - 0.3) ** 2))

    objective = _hashed if noisy is not None else sphere
    opt = Auto(6, seed=0, budget=60, noisy=noisy)
    assert "replicate" not in _through_design(opt, objective).meta
    assert opt.noise_observed() is None


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="members: expected distinct"):
        Auto(3, members=("bkb", "bkb"))
    with pytest.raises(ValueError, match="members: expected a non-empty sequence"):
        Auto(3, members=())
    with pytest.raises(ValueError, match="algorithm: unknown name 'nope'"):
        Auto(3, members=("nope",))
    with pytest.raises(ValueError, match="window: expected an int >= 1"):
        Auto(3, window=0)
    with pytest.raises(TypeError, match="noisy: expected True, False or None"):
        Auto(3, noisy="yes")


def test_a_bad_salt_is_named_after_the_design_too(trained: Auto) -> None:
    n_pending = len(trained.pending)
    for bad in (-1, 1.5, "a"):
        with pytest.raises(ValueError, match="salt: expected a non-negative int or None"):
            trained.ask(1, salt=bad)
    assert len(trained.pending) == n_pending  # nothing was asked


# ---------------------------------------------------------------- the flat design's ES arm
def _far_bump(x: np.ndarray) -> float:
    """0 everywhere but within 0.3 of (0.9, ..., 0.9): the centre and every axis probe of a
    D = 30 design see 0, so the design ends early (its probes find nothing)."""
    return -max(0.0, 0.3 - float(np.linalg.norm(np.asarray(x) - 0.9)))


def test_es_step_follows_the_one_fifth_rule_and_restarts_from_a_uniform_point() -> None:
    opt = Auto(3, seed=0)
    rng = np.random.default_rng(0)
    opt.tell(rng.random(3), 10.0, {"init": True})
    expected = 0.2
    assert opt.arms["es"].state(opt).sigma == pytest.approx(expected)
    # success (9 < 10), another arm's improvement (5), then ES failures judged against 5
    steps = [(9.0, "es", np.exp(1 / 3)), (5.0, "cobbo", 1.0), (6.0, "es", np.exp(-1 / 12)),
             (np.nan, "es", np.exp(-1 / 12)), (4.0, "es", np.exp(1 / 3))]
    for y, arm, factor in steps:
        opt.tell(rng.random(3), y, {"algorithm": arm})
        expected *= factor
        assert opt.arms["es"].state(opt).sigma == pytest.approx(expected)
    for y in (3.0, 2.0, 1.0):  # three successes: 0.2 e^(1/3 + 2/3) ... capped at 0.5
        opt.tell(rng.random(3), y, {"algorithm": "es"})
    assert opt.arms["es"].state(opt).sigma == pytest.approx(0.5)
    # 0.5 e^(-k/12) < 0.2 / 128 first at k = 70: the arm restarts with step 0.2
    for k in range(1, 71):
        opt.tell(rng.random(3), 2.0, {"algorithm": "es"})
        state = opt.arms["es"].state(opt)
        assert state.sigma == pytest.approx(0.5 * np.exp(-k / 12) if k < 70 else 0.2)
        assert state.restarts == (k == 70) and state.parent is None
    # after the restart: a uniform start (no step change), then its own best is the parent,
    # and success means beating the restarted search's best (7), not Auto's (1)
    ((x, meta),) = opt.arms["es"].make(opt, 1, np.random.default_rng(0))
    assert meta["algorithm"] == "es" and meta["start"] is True
    opt.tell(x, 7.0, meta)
    state = opt.arms["es"].state(opt)
    assert state.sigma == pytest.approx(0.2)
    np.testing.assert_array_equal(state.parent, x)
    better = rng.random(3)
    opt.tell(better, 6.5, {"algorithm": "es"})
    state = opt.arms["es"].state(opt)
    assert state.sigma == pytest.approx(0.2 * np.exp(1 / 3))
    np.testing.assert_array_equal(state.parent, better)


def test_es_arm_plays_only_after_a_design_whose_probes_find_nothing() -> None:
    flat, smooth = Auto(30, seed=0, budget=200), Auto(30, seed=0, budget=200)
    for opt, f in ((flat, _far_bump), (smooth, lambda x: float(np.sum((x - 0.3) ** 2)))):
        for _ in range(25):  # the flat design ends at 21 points
            (p,) = opt.ask()
            opt.tell(p.x, f(p.x), p.meta)
    assert flat.arms["es"].eligible(flat) and "es" in flat.records()
    assert not smooth.arms["es"].eligible(smooth) and "es" not in smooth.records()


def test_es_proposals_move_every_coordinate_within_the_box_and_rebuild_exactly() -> None:
    opt = Auto(30, seed=2, budget=200, members=("cobbo",))
    made = []
    while len(made) < 3:
        (p,) = opt.ask()
        if p.meta.get("algorithm") == "es":
            made.append((opt.n_told, p, opt.best[0], opt.arms["es"].state(opt).sigma))
        opt.tell(p.x, _far_bump(p.x), p.meta)
    for _, p, centre, sigma in made:
        assert p.meta["sigma"] == sigma
        assert np.all((p.x >= 0.0) & (p.x <= 1.0)) and np.all(p.x != centre)
    n_told, p, _, _ = made[-1]
    rebuilt = Auto.from_history(30, opt.X[:n_told], opt.y[:n_told], opt.metas[:n_told],
                                seed=2, budget=200, members=("cobbo",))
    (again,) = rebuilt.ask()
    np.testing.assert_array_equal(again.x, p.x)


def test_es_arm_finds_a_two_coordinate_minimum_hidden_among_a_thousand() -> None:
    """Two of 1000 coordinates matter. Random search's best squared distance after 200
    draws is about 1 / (200 pi) = 1.6e-3; CobBO alone reaches 5e-4 here, and the ES arm with a
    fixed step (no 1/5 rule) 3e-4. With the rule the arm converges: below 1e-5."""
    dim = 1000
    active = np.random.default_rng(1).choice(dim, 2, replace=False)
    opt = Auto(dim, seed=0, budget=200, members=("cobbo",))
    with threadpool_limits(1):
        for _ in range(200):
            (p,) = opt.ask()
            opt.tell(p.x, float(((p.x[active] - 0.8) ** 2).sum()), p.meta)
    assert opt.arms["es"].eligible(opt)
    assert opt.best[1] < 1e-5


def _reflect(v: float) -> float:
    """Fold a coordinate back into [0, 1] at its edges, as a mirror does."""
    while not 0.0 <= v <= 1.0:
        v = -v if v < 0.0 else 2.0 - v
    return v


def test_es_step_is_the_parent_plus_a_gaussian_reflected_into_the_box() -> None:
    parent = np.array([0.9, 0.97, 0.05, 0.5, 0.02])
    opt = Auto(5, seed=0)
    opt.tell(parent, 1.0, {"init": True})
    z = np.random.default_rng(3).standard_normal(5)
    raw = parent + 0.2 * z
    assert (raw > 1.0).any() and (raw < 0.0).any()  # both edges are crossed
    ((x, meta),) = opt.arms["es"].make(opt, 1, np.random.default_rng(3))
    np.testing.assert_allclose(x, [_reflect(v) for v in raw], rtol=0, atol=1e-12)
    assert meta == {"algorithm": "es", "sigma": 0.2, "restarts": 0}


def test_es_counts_a_tie_as_a_failure_and_steps_from_the_restarted_search_best() -> None:
    opt = Auto(3, seed=0)
    rng = np.random.default_rng(0)
    opt.tell(rng.random(3), 10.0, {"init": True})
    opt.tell(rng.random(3), 10.0, {"algorithm": "es"})  # equal to the best: a failure
    assert opt.arms["es"].state(opt).sigma == pytest.approx(0.2 * np.exp(-1 / 12))
    for _ in range(100):  # failures until the step collapses and the arm restarts
        opt.tell(rng.random(3), 11.0, {"algorithm": "es"})
        if opt.arms["es"].state(opt).restarts:
            break
    ((start, meta),) = opt.arms["es"].make(opt, 1, np.random.default_rng(1))
    opt.tell(start, 12.0, meta)  # worse than Auto's best, yet the new search's parent
    opt.tell(rng.random(3), 12.0, {"algorithm": "es"})  # a tie with the new search's best
    state = opt.arms["es"].state(opt)
    np.testing.assert_array_equal(state.parent, start)
    assert state.sigma == pytest.approx(0.2 * np.exp(-1 / 12))
    z = np.random.default_rng(2).standard_normal(3)
    ((x, _),) = opt.arms["es"].make(opt, 1, np.random.default_rng(2))
    np.testing.assert_allclose(x, [_reflect(v) for v in start + state.sigma * z], atol=1e-12)


def test_es_proposals_under_constraints_pass_the_shared_proposal_step() -> None:
    opt = Auto(30, seed=1, budget=200, members=("cobbo",))
    made = []
    for _ in range(50):
        (p,) = opt.ask()
        if p.meta.get("algorithm") == "es":
            made.append(p)
        # feasible where x0 <= 0.6; coordinate 0 is not among the first ten the design probes
        opt.tell(p.x, _far_bump(p.x), p.meta, constraints=[float(p.x[0] - 0.6)])
    assert opt.arms["es"].eligible(opt)
    judged = [p for p in made if "pof" in p.meta]  # once the constraint's model exists
    assert judged
    for p in judged:  # a likely infeasible proposal was moved to a likely feasible point
        assert p.meta["pof"] >= 0.5
        assert np.all((p.x >= 0.0) & (p.x <= 1.0))


def test_a_batch_across_the_design_end_may_hold_constrained_ei_points() -> None:
    for seed in range(20):
        opt = Auto(4, seed=seed, budget=60, members=("cobbo",))
        while opt.n_told < opt.n_init - 2:
            (p,) = opt.ask()
            opt.tell(p.x, float(np.sum((p.x - 0.3) ** 2)), p.meta,
                     constraints=[float(p.x[0] - 0.6)])
        batch = opt.ask(6)
        cei = [p for p in batch if p.meta.get("algorithm") == "cei"]
        if cei:
            break
    else:
        pytest.fail("no batch across the design's end chose the constrained-EI arm")
    assert sum(bool(p.meta.get("init")) for p in batch) == 2
    for p in cei:  # the first box, and the proposal step's judgement of feasibility
        assert p.meta["radius"] == 0.1 and p.meta["pof"] >= 0.5
        assert np.all(np.abs(p.x - opt.best[0]) <= 0.1 + 1e-12)


def test_recommend_without_points_and_with_few_or_unusable_values() -> None:
    assert Auto(2, seed=0, noisy=True).recommend() is None
    rng = np.random.default_rng(0)
    X = rng.random((9, 2))  # fewer finite values than a noisy recommendation's GP needs
    y = np.sum((X - 0.5) ** 2, axis=1)
    few = Auto(2, seed=0, noisy=True)
    few.tell(X, y)
    np.testing.assert_array_equal(few.recommend(), X[np.argmin(y)])
    X = rng.random((40, 2))
    y = np.sum((X - 0.5) ** 2, axis=1) + rng.normal(0.0, 0.05, 40)
    clean, with_nan = Auto(2, seed=0, noisy=True), Auto(2, seed=0, noisy=True)
    clean.tell(X, y)
    with_nan.tell(np.vstack([X, rng.random((5, 2))]), np.concatenate([y, np.full(5, np.nan)]))
    np.testing.assert_array_equal(with_nan.recommend(), clean.recommend())  # NaN: not data


def test_noisy_recommendation_keeps_to_the_400_points_nearest_the_best() -> None:
    # 400 draws of level 0 (noise 0.3) on [0, 0.8], a lucky -2 at 0, and far from it 30 draws
    # of level -1 on [0.95, 1]: over all points the far cluster has the lowest upper
    # quantile, but it lies outside the 400 points nearest the best told point
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.uniform(0.0, 0.8, 400), [0.0], rng.uniform(0.95, 1.0, 30)])[:, None]
    y = np.concatenate([rng.normal(0.0, 0.3, 400), [-2.0], rng.normal(-1.0, 0.05, 30)])
    mean, var = GP(1).fit(X, y).predict(X)
    assert X[np.argmin(mean + 1.2816 * np.sqrt(var)), 0] >= 0.95  # all points: the cluster
    opt = Auto(1, seed=0, noisy=True)
    opt.tell(X, y)
    assert opt.recommend()[0] <= 0.8


def test_noise_is_observed_when_any_finite_replicate_differs() -> None:
    opt = Auto(2, seed=0)
    opt.tell([0.5, 0.5], 1.0, {"init": True})
    opt.tell([0.5, 0.5], np.nan, {"algorithm": "auto", "replicate": 0})
    assert opt.noise_observed() is None
    opt.tell([0.2, 0.2], np.nan, {"init": True})
    opt.tell([0.2, 0.2], 3.0, {"algorithm": "auto", "replicate": 2})
    assert opt.noise_observed() is None
    opt.tell([0.5, 0.5], 1.0 + 1e-7, {"algorithm": "auto", "replicate": 0})
    assert opt.noise_observed() is True  # relative tolerance 1e-9: 1e-7 is a difference
    opt.tell([0.5, 0.5], 1.0, {"algorithm": "auto", "replicate": 0})
    assert opt.noise_observed() is True  # one replicate that differs is enough


def test_members_start_from_cobylas_best_after_its_phase() -> None:
    """COBYLA's points are a start the members share, like the design's: the best of them is
    a member's incumbent, and they move none of its trust region's counts; another arm's
    better point moves neither."""
    opt = Auto(3, seed=0, members=("bkb", "cobbo"), noisy=False)
    rng = np.random.default_rng(0)
    told = [(9.0, {"init": True}), (8.0, {"init": True}),
            (5.0, {"algorithm": "cobyla", "x0": 1}), (4.0, {"algorithm": "cobyla", "x0": 1}),
            (6.0, {"algorithm": "cobyla", "x0": 1}),
            (4.5, {"algorithm": "bkb"}),  # bkb's own: above COBYLA's 4.0, one failure
            (1.0, {"algorithm": "cobbo"})]  # another member's: modelled, not bkb's start
    X = rng.random((len(told), 3))
    for x, (y, meta) in zip(X, told, strict=True):
        opt.tell(x, y, meta)
    bkb = opt.arms["bkb"].sync(opt)
    assert bkb.best[1] == 1.0
    assert bkb.incumbent[1] == 4.0 and np.array_equal(bkb.incumbent[0], X[3])
    region = bkb.trust_region
    assert (region.best, region.successes, region.failures) == (4.0, 0, 1)
