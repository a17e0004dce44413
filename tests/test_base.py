import numpy as np
import pytest

from hdbo_engine import Categorical, Integer, Real, Space, available, get_algorithm
from hdbo_engine.algorithms.baselines import RandomSearch


def test_ask_returns_distinct_pending_points_and_tell_clears_them():
    opt = RandomSearch(4, seed=1)
    props = opt.ask(5)
    X = np.array([p.x for p in props])
    assert X.shape == (5, 4) and len({tuple(r) for r in X}) == 5
    assert opt.pending.shape == (5, 4)
    opt.tell(X[:2], [1.0, 2.0])
    assert opt.pending.shape == (3, 4) and opt.n_told == 2
    opt.tell(X[2], 0.5)
    assert opt.best[1] == 0.5
    np.testing.assert_array_equal(opt.best[0], X[2])


def test_tell_inherits_meta_of_pending_and_accepts_unasked_points():
    opt = get_algorithm("msucb")(3, seed=0, n_init=2)
    (p,) = opt.ask()
    assert p.meta == {"init": True, "centre": True}
    opt.tell(p.x, 1.0)
    opt.tell(np.full(3, 0.25), 2.0, meta={"source": "user"})
    assert opt.metas == [{"init": True, "centre": True}, {"source": "user"}]


@pytest.mark.parametrize("name", [n for n in available() if n != "random"])
def test_initial_design_starts_at_the_centre_then_draws_uniformly(name):
    kwargs = {"arms": np.random.default_rng(0).random((30, 4))} if name == "bkb" else {}
    if name == "bkb":  # with finite arms the design draws arms, as the paper does
        first = get_algorithm(name)(4, seed=0, **kwargs).ask()[0]
        assert "centre" not in first.meta
    batch = get_algorithm(name)(4, seed=0, n_init=3, init_design="uniform").ask(3)
    assert batch[0].meta == {"init": True, "centre": True}
    np.testing.assert_array_equal(batch[0].x, np.full(4, 0.5))
    assert all(p.meta == {"init": True} for p in batch[1:])
    assert all(np.abs(p.x - 0.5).max() > 1e-3 for p in batch[1:])


OURS = ["msucb", "cobbo", "goucb", "bkb"]


@pytest.mark.parametrize("name", OURS)
def test_axis_design_is_one_greedy_pass_over_the_coordinates(name):
    # base docstring, "Initial design": +step, then -step unless +step improved, from the
    # best told point, each coordinate once; a coordinate's step is 1/6 times a factor in
    # [0.75, 1.25], the same for both signs
    target = np.array([0.75, 0.25, 0.5, 0.75, 0.2])
    opt = get_algorithm(name)(5, seed=3, budget=100)
    assert opt.options.init_design == "axis" and opt.n_init >= 11  # the uniform size when larger
    pivot, f_pivot, probed, steps = np.full(5, 0.5), None, [], {}
    for _ in range(opt.n_init):
        (p,) = opt.ask()
        y = float(((p.x - target) ** 2).sum())
        if f_pivot is None:
            assert p.meta == {"init": True, "centre": True}
        elif "axis" not in p.meta:  # every coordinate probed: uniform draws
            assert len(probed) == 5 and p.meta == {"init": True}
        else:
            (j,) = np.flatnonzero(p.x != pivot)
            k, sign = p.meta["axis"]
            step = sign * (p.x[j] - pivot[j])
            assert p.meta["init"] and 0.75 / 6 <= step <= 1.25 / 6
            if sign == 1:
                assert j not in probed
                probed.append(j)
                steps[j] = step
            else:
                assert probed[-1] == j and k == len(probed) - 1
                assert step == pytest.approx(steps[j])
        opt.tell(p.x, y)
        if f_pivot is None or y < f_pivot:
            pivot, f_pivot = p.x.copy(), y
    assert sorted(probed) == list(range(5))
    moved = np.sign(np.round(pivot - 0.5, 12))
    np.testing.assert_array_equal(moved, [1, -1, 0, 1, -1])  # each step toward the target
    assert len({round(v, 12) for v in steps.values()}) == 5  # jittered per coordinate
    assert "line" in opt.ask()[0].meta  # the line search follows (next test)


@pytest.mark.parametrize("name", ["msucb", "cobbo", "goucb", "bkb"])
def test_line_search_steps_along_the_design_slopes_then_hands_over(name):
    # base docstring, "Line search after the design": on a linear function the design's
    # finite differences are its gradient c, so the steps go along -c / max|c|
    c = np.array([3.0, -1.0, 0.5, -2.0, 1.5, 0.0])
    opt = get_algorithm(name)(6, seed=5, budget=100)
    assert opt.line_search
    for _ in range(opt.n_init):
        (p,) = opt.ask()
        assert "line" not in p.meta
        opt.tell(p.x, float(c @ p.x))
    direction = -c / 3.0
    x0 = opt.best[0]
    (p,) = opt.ask()
    assert p.meta == {"init": True, "line": 1 / 6}
    np.testing.assert_allclose(p.x, np.clip(x0 + direction / 6, 0, 1), atol=1e-12)
    opt.tell(p.x, opt.best[1] + 1.0)  # no improvement: the next long step, same base
    (p,) = opt.ask()
    assert p.meta["line"] == 1 / 3
    np.testing.assert_allclose(p.x, np.clip(x0 + direction / 3, 0, 1), atol=1e-12)
    opt.tell(p.x, opt.best[1] - 1.0)  # improved: the next step starts here
    x1 = p.x
    rebuilt = type(opt).from_history(6, opt.X, opt.y, opt.metas, seed=5, budget=100)
    (p,) = opt.ask()
    assert p.meta["line"] == 2 / 3
    np.testing.assert_allclose(p.x, np.clip(x1 + 2 * direction / 3, 0, 1), atol=1e-12)
    np.testing.assert_array_equal(rebuilt.ask()[0].x, p.x)  # a function of the history
    opt.tell(p.x, opt.best[1] + 1.0)  # a long step failed after one improved: over
    assert "line" not in opt.ask()[0].meta


def test_line_search_is_skipped_when_it_cannot_apply():
    msucb = get_algorithm("msucb")
    f = np.array([1.0, -2.0, 0.5, 1.0])

    def design(**kwargs: object) -> object:
        opt = msucb(4, seed=0, budget=60, **kwargs)
        for _ in range(opt.n_init):
            (p,) = opt.ask()
            opt.tell(p.x, float(f @ p.x))
        return opt

    assert "line" in design().ask()[0].meta
    assert not msucb(4, line_search=False).line_search
    assert "line" not in design(line_search=False).ask()[0].meta
    assert "line" not in design().ask(salt=1)[0].meta  # concurrent workers: the model
    batch = design().ask(3)  # one line point, then the model points of the batch
    assert ["line" in p.meta for p in batch] == [True, False, False]
    assert not msucb(4, preset="paper").line_search  # uniform design: no slopes
    assert "line" not in design(init_design="uniform").ask()[0].meta
    warm = msucb(4, seed=0, budget=60)  # a warm start without axis metas: no slopes
    X = np.random.default_rng(0).random((25, 4))
    warm.tell(X, X @ f)
    assert "line" not in warm.ask()[0].meta
    forged = msucb(4, seed=0, budget=60)  # axis metas that name no coordinate of this space
    forged.tell(X[:20], X[:20] @ f, [{"axis": [99, 1]}] * 20)
    assert "line" not in forged.ask()[0].meta
    with pytest.raises(TypeError, match="line_search: expected a bool"):
        msucb(4, line_search="yes")


def test_axis_design_batches_rebuilds_sizes_and_validation():
    msucb = get_algorithm("msucb")
    batch = msucb(6, seed=0).ask(3)  # an untold probe counts as no improvement
    assert [p.meta.get("axis") for p in batch] == [None, [0, 1], [0, -1]]
    np.testing.assert_allclose(batch[1].x + batch[2].x, 2 * batch[0].x)
    salted = msucb(6, seed=0)  # concurrent workers (a salt): the same design, the next probe
    salted.tell(np.full(6, 0.5), 1.0)
    plain = msucb(6, seed=0)
    plain.tell(np.full(6, 0.5), 1.0)
    (first,) = salted.ask(salt=3)
    assert first.meta["axis"] == [0, 1]
    np.testing.assert_array_equal(first.x, plain.ask()[0].x)
    (second,) = salted.ask(salt=4)  # the first probe is pending: its minus step
    assert second.meta["axis"] == [0, -1]
    np.testing.assert_allclose(first.x + second.x, np.ones(6))
    opt = msucb(10, seed=1, budget=200)
    for _ in range(9):
        (p,) = opt.ask()
        opt.tell(p.x, float(np.sin(7 * p.x).sum()))
    rebuilt = msucb.from_history(10, opt.X, opt.y, opt.metas, seed=1, budget=200)
    np.testing.assert_array_equal(rebuilt.ask()[0].x, opt.ask()[0].x)
    assert msucb(100, budget=500).n_init == 125  # min(2 D + 1, max(20, budget // 4))
    assert msucb(12, budget=500).n_init == 25 and msucb(100).n_init == 25
    assert msucb(4, budget=500).n_init == 20  # 9 axis points, then uniform draws
    assert msucb(100, budget=2000).n_init == 201
    paper = msucb(100, budget=500, preset="paper")
    assert (paper.options.init_design, paper.n_init) == ("uniform", 20)
    goucb = get_algorithm("goucb")
    assert goucb(100, budget=500, preset="paper").n_init == 23  # ceil(sqrt(T))
    assert goucb(100, budget=500).n_init == 125 and goucb(3, budget=400).n_init == 20
    assert get_algorithm("gpucb")(100, budget=500).options.init_design == "uniform"
    assert msucb(100, budget=500, init_design="uniform").n_init == 20
    with pytest.raises(ValueError, match="init_design: expected one of"):
        msucb(3, init_design="grid")


def test_centre_is_snapped_skipped_after_a_warm_start_and_off_for_random_search():
    space = Space([Real(1e-3, 1e3, log=True), Integer(0, 10), Categorical(["a", "b", "c"])])
    (p,) = get_algorithm("cobbo")(space, seed=0).ask()
    assert p.meta["centre"] and space.decode(p.x)[0] == pytest.approx([1.0, 5, "a"])
    warm = get_algorithm("msucb")(3, seed=0)
    warm.tell(np.full(3, 0.1), 1.0)
    assert "centre" not in warm.ask()[0].meta
    assert "centre" not in RandomSearch(3, seed=0).ask()[0].meta
    assert RandomSearch(3, seed=0, init_centre=True).ask()[0].meta["centre"]
    with pytest.raises(TypeError, match="init_centre: expected a bool"):
        get_algorithm("msucb")(3, init_centre="yes")


@pytest.mark.parametrize("x, y, meta, err, match", [
    (np.zeros(5), 1.0, None, ValueError, "shape"),
    (np.zeros((2, 4)), [1.0], None, ValueError, "expected 2 value"),
    (np.full(4, 1.5), 1.0, None, ValueError, "unit cube"),
    (np.full(4, np.nan), 1.0, None, ValueError, "finite"),
    ("abc", 1.0, None, TypeError, "array"),
    (np.zeros(4), "bad", None, TypeError, "number"),
    (np.zeros(4), "1.5", None, TypeError, "y: expected a number"),
    (np.zeros((2, 4)), [1.0, -np.inf], None, ValueError, "y: -inf"),
    (np.zeros((2, 4)), [1.0, 2.0], [{}], ValueError, "2 dicts"),
    (np.zeros(4), 1.0, [3], TypeError, "dict"),
])
def test_bad_tell_raises_and_keeps_history(x, y, meta, err, match):
    opt = RandomSearch(4, seed=0)
    opt.tell(np.full(4, 0.25), 3.0)
    with pytest.raises(err, match=match):
        opt.tell(x, y, meta)
    assert opt.n_told == 1 and opt.X.shape == (1, 4) and len(opt.metas) == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"), ({"budget": 0}, "budget"),
    ({"n_init": 0}, "n_init"),
])
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RandomSearch(3, **kwargs)
    with pytest.raises(TypeError, match="space"):
        RandomSearch("3")


def test_bad_ask_and_unknown_algorithm():
    with pytest.raises(ValueError, match="n: expected"):
        RandomSearch(2, seed=0).ask(0)
    with pytest.raises(ValueError, match="unknown name 'nope'"):
        get_algorithm("nope")
    assert {"msucb", "gpucb", "random"} <= set(available())


def test_failures_are_recorded_imputed_and_never_best():
    opt = RandomSearch(2, seed=0)
    opt.tell(np.array([[0.1, 0.1], [0.2, 0.2]]), [np.nan, np.inf])
    assert opt.best is None and opt.n_told == 2
    assert opt.model_data()[0].shape == (0, 2)
    opt.tell(np.array([0.3, 0.3]), 4.0)
    assert opt.best[1] == 4.0
    np.testing.assert_array_equal(opt.model_data()[1], [4.0, 4.0, 4.0])


def test_same_seed_same_history_same_proposals():
    a, b = RandomSearch(3, seed=7), RandomSearch(3, seed=7)
    np.testing.assert_array_equal(a.ask()[0].x, b.ask()[0].x)
    assert not np.array_equal(a.ask()[0].x, RandomSearch(3, seed=8).ask()[0].x)


def test_discrete_space_proposals_are_snapped_and_distinct():
    space = Space([Integer(0, 3), Categorical(["a", "b"])])
    opt = RandomSearch(space, seed=0)
    X = np.array([p.x for p in opt.ask(8)])
    np.testing.assert_array_equal(space.snap(X), X)
    assert len({tuple(r) for r in X}) == 8  # all 4 x 2 combinations


@pytest.mark.parametrize("name", ["msucb", "cobbo", "goucb", "bkb", "gpucb", "random"])
def test_finite_space_is_enumerated_without_repeats(name):
    """12 combinations, 12 asks: every combination once, for every algorithm."""
    if name == "goucb":
        pytest.importorskip("torch")
    space = Space([Categorical(["a", "b", "c"]), Categorical([0, 1, 2, 3])])
    assert space.n_points == 12 and len({r.tobytes() for r in space.grid()}) == 12
    opt = get_algorithm(name)(space, seed=0, n_init=3)
    seen = []
    for _ in range(12):
        (p,) = opt.ask()
        seen.append(tuple(space.decode(p.x)[0]))
        opt.tell(p.x, float(len(seen) % 5))
    assert len(set(seen)) == 12


@pytest.mark.parametrize("algo", ["random", "auto"])
def test_recommend_warns_when_no_told_value_is_finite(algo):
    opt = get_algorithm(algo)(3, seed=0)
    assert opt.recommend() is None  # nothing told: nothing to say
    for _ in range(2):
        (p,) = opt.ask()
        opt.tell(p.x, float("nan"), p.meta)
    with pytest.warns(RuntimeWarning, match="none of the 2 told values is finite"):
        assert opt.recommend() is None


def test_points_of_another_algorithm_move_neither_the_incumbent_nor_the_trust_region() -> None:
    """Module docstring, "Points of other proposers": another algorithm's point (its meta
    names it) is told and modelled, but the incumbent is the best of the algorithm's own
    points and its trust region counts only them (TuRBO's rule, worked by hand)."""
    opt = get_algorithm("msucb")(3, seed=0)
    own = [np.full(3, v) for v in (0.1, 0.2, 0.3, 0.4)]
    foreign = np.full(3, 0.9)
    # the first value improves on nothing (a failure), 4.0 and 3.0 are two successes
    opt.tell(np.array(own[:3]), [5.0, 4.0, 3.0])
    opt.tell(foreign, 1.0, {"algorithm": "bkb"})
    opt.tell(own[3], 2.5)  # the third success on its own best 3.0: the side doubles
    assert opt.n_told == 5 and opt.best[1] == 1.0
    assert np.array_equal(opt.incumbent[0], own[3]) and opt.incumbent[1] == 2.5
    tr = opt.trust_region
    # counting the foreign 1.0 would give the doubling there and a failure at 2.5
    assert (tr.length, tr.successes, tr.failures, tr.best) == (1.6, 0, 0, 2.5)
    assert opt.own_rows().tolist() == [True, True, True, False, True]


def test_alone_every_point_is_own_and_the_incumbent_is_the_best() -> None:
    opt = get_algorithm("bkb")(2, seed=0)
    opt.tell(np.array([[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]]), [3.0, 1.0, 2.0],
             [{"init": True}, {}, {"algorithm": "bkb"}])
    assert np.array_equal(opt.incumbent[0], opt.best[0]) and opt.incumbent[1] == 1.0
    only_foreign = get_algorithm("bkb")(2, seed=0)
    only_foreign.tell(np.array([[0.4, 0.4]]), [7.0], {"algorithm": "cobbo"})
    assert only_foreign.incumbent[1] == 7.0  # none of its own: the best of all


def test_under_constraints_every_point_is_own_and_the_incumbent_is_the_best_feasible() -> None:
    """Module docstring, "Points of other proposers": once constraints are in use, another
    algorithm's feasible point is the incumbent too (SCBO's rule: search around the best
    feasible point anyone found)."""
    opt = get_algorithm("msucb")(2, seed=0)
    X = np.array([[0.1, 0.1], [0.5, 0.5], [0.9, 0.9]])
    opt.tell(X, [1.0, 0.5, 2.0], [{}, {"algorithm": "bkb"}, {}],
             constraints=[[-1.0], [-1.0], [1.0]])
    assert opt.own_rows().tolist() == [True, True, True]
    assert np.array_equal(opt.incumbent[0], X[1]) and opt.incumbent[1] == 0.5
