"""The initial design's arithmetic (``hdbo_engine.design``) on histories written by hand.

The slopes are finite differences worked out here from each probe and the point it stepped
from (Hooke and Jeeves' exploratory move, then central differences where both probes of a
coordinate exist); the design size is ``max(uniform, min(2 D + 1, budget // 4))``.
"""

from __future__ import annotations

import numpy as np
import pytest

from hdbo_engine.algorithms.msucb import MSUCB
from hdbo_engine.design import DEFAULT_HORIZON, design_size


def test_design_size_is_the_axis_pass_within_a_quarter_of_the_budget():
    assert design_size("uniform", 20, 100, 500) == 20
    assert design_size("axis", 20, 100, 500) == 125  # min(201, 125)
    assert design_size("axis", 20, 100, 2000) == 201  # min(201, 500)
    assert design_size("axis", 20, 4, 500) == 20  # 9 < 20
    assert design_size("axis", 5, 30, None) == DEFAULT_HORIZON // 4 == 25
    assert design_size("axis", 5, 2, 40) == 5  # min(5, 10) = 5


def _history() -> tuple[MSUCB, np.ndarray]:
    """A hand-written axis design in D = 3 whose probe k moves coordinate ORDER[k]."""
    opt = MSUCB(3, seed=0, n_init=12, budget=100)
    opt._axis = (np.array([2, 0, 1]), np.ones(3))  # the probe order (an input here)
    c = np.full(3, 0.5)
    p1 = c + [0.0, 0.0, 0.2]
    p3 = p1 - [0.1, 0.0, 0.0]
    rows = [
        (c, 1.0, {"init": True, "centre": True}),
        (p1, 0.6, {"init": True, "axis": [0, 1]}),  # coordinate 2 from c: (0.6 - 1) / 0.2
        (p1 + [0.1, 0.0, 0.0], 0.9, {"init": True, "axis": [1, 1]}),  # coordinate 0, plus
        (p3, 0.5, {"init": True, "axis": [1, -1]}),  # minus: central (0.9 - 0.5) / 0.2
        (p3 + [0.0, 0.15, 0.0], np.nan, {"init": True, "axis": [2, 1]}),  # failed: skipped
        (np.array([0.1, 0.2, 0.3]), 5.0, {"init": True, "axis": [3, 1]}),  # no coordinate 3
        (np.array([0.2, 0.3, 0.1]), 4.0, {"init": True, "axis": [0.5, 1]}),  # not an index
        (np.array([0.9, 0.9, 0.9]), 3.0, {"init": True, "axis": [2, 1]}),  # no point to step
        (np.array([0.3, 0.1, 0.2]), 6.0, {"init": True, "axis": "x"}),  # from: skipped
        (p3 - [0.0, 0.15, 0.0], 0.8, {"init": True, "axis": [2, -1]}),  # (0.8 - 0.5) / -0.15
    ]
    X = np.array([r[0] for r in rows])
    opt.tell(X, [r[1] for r in rows], [r[2] for r in rows])
    return opt, X


def test_design_slopes_are_forward_or_central_differences_of_usable_probes():
    opt, _ = _history()
    slopes = opt._design_slopes(opt.n_told)
    np.testing.assert_allclose(slopes, [2.0, -2.0, -2.0], rtol=1e-12)
    # over the first four points only coordinate 2 and 0 have probes; 0's is central
    np.testing.assert_allclose(opt._design_slopes(4), [2.0, 0.0, -2.0], rtol=1e-12)
    # with only the plus probe of coordinate 0 told, its forward difference (0.9 - 0.6) / 0.1
    np.testing.assert_allclose(opt._design_slopes(3), [3.0, 0.0, -2.0], rtol=1e-12)


def test_design_effects_mark_probed_coordinates_and_those_a_probe_changed():
    opt, X = _history()
    _, probed, changed = opt._design_effects(opt.n_told)
    assert probed.tolist() == [True, True, True] and changed.tolist() == [True, True, True]
    _, probed, changed = opt._design_effects(4)
    assert probed.tolist() == [True, False, True] and changed.tolist() == [True, False, True]
    # a probe that returns its base point's value is probed but changed nothing; a second
    # probe of the same coordinate that changes the value marks it changed
    same = MSUCB(2, seed=0, n_init=5, budget=100)
    same._axis = (np.array([0, 1]), np.ones(2))
    c = np.full(2, 0.5)
    same.tell(np.array([c, c + [0.2, 0.0], c - [0.2, 0.0], c + [0.0, 0.2], c - [0.0, 0.2]]),
              [1.0, 1.0, 1.0, 1.0, 0.7],
              [{"init": True, "centre": True}, {"init": True, "axis": [0, 1]},
               {"init": True, "axis": [0, -1]}, {"init": True, "axis": [1, 1]},
               {"init": True, "axis": [1, -1]}])
    _, probed, changed = same._design_effects(5)
    assert probed.tolist() == [True, True] and changed.tolist() == [False, True]


def test_design_end_counts_finite_values_up_to_n_init():
    opt, _ = _history()
    opt.n_init = 4
    assert opt._design_end() == 4  # the fourth finite value is the fourth told point
    opt.n_init = 5
    assert opt._design_end() == 6  # the fifth told point failed
    opt.n_init = 11
    assert opt._design_end() is None


def test_line_point_steps_from_the_best_design_point_along_minus_the_slopes():
    opt, X = _history()
    opt.n_init = 9  # the nine finite values: every told point is the design
    direction = -np.array([2.0, -2.0, -2.0]) / 2.0
    x, meta = opt._line_point()
    assert meta == {"init": True, "line": 1 / 6}
    np.testing.assert_allclose(x, np.clip(X[3] + direction / 6, 0.0, 1.0), rtol=1e-12)
    opt.tell(x, 0.1, meta)  # improved: the next step starts from it
    x2, meta2 = opt._line_point()
    assert meta2["line"] == 1 / 3
    np.testing.assert_allclose(x2, np.clip(x + direction / 3, 0.0, 1.0), rtol=1e-12)
    opt.tell(x2, 0.2, meta2)  # a long step failed after one improved: over
    assert opt._line_point() is None
    again, _ = _history()
    again.n_init = 9
    again.tell(np.full(3, 0.4), 0.3)  # a model point: the line search is over
    assert again._line_point() is None


@pytest.mark.parametrize("flat", [True, False])
def test_line_point_is_none_without_slopes_or_with_pending_points(flat):
    opt = MSUCB(2, seed=0, n_init=3, budget=100)
    X = np.array([[0.5, 0.5], [0.7, 0.5], [0.3, 0.5]])
    y = [1.0, 1.0, 1.0] if flat else [1.0, 2.0, 0.0]
    metas = [{"init": True, "centre": True}, {"init": True, "axis": [0, 1]},
             {"init": True, "axis": [0, -1]}]
    opt._axis = (np.array([0, 1]), np.ones(2))
    opt.tell(X, y, metas)
    if flat:
        assert opt._line_point() is None  # every slope is 0: no direction
    else:
        x, meta = opt._line_point()  # central slope (2 - 0) / 0.4 = 5: along -x_0
        np.testing.assert_allclose(x, [0.3 - 1 / 6, 0.5], rtol=1e-12)
        opt.ask()
        assert opt._line_point() is None  # a pending point: the line search waits


def test_a_probe_pair_around_a_re_evaluated_base_gives_the_central_difference():
    """The minus probe steps from the base told again after the plus probe: its forward
    difference would use the base, the pair of probes gives (y+ - y-) / (x+ - x-)."""
    opt = MSUCB(2, seed=0, n_init=4, budget=100)
    opt._axis = (np.array([1, 0]), np.ones(2))
    c = np.array([0.5, 0.5])
    X = np.array([c, c + [0.0, 0.2], c, c - [0.0, 0.1]])
    y = [1.0, 1.6, 1.1, 0.7]
    metas = [{"init": True, "centre": True}, {"init": True, "axis": [0, 1]}, {"init": True},
             {"init": True, "axis": [0, -1]}]
    opt.tell(X, y, metas)
    np.testing.assert_allclose(opt._design_slopes(4), [0.0, (1.6 - 0.7) / 0.3], rtol=1e-12)
    # the minus probe steps from another base (coordinate 0 moved): the probes are not a
    # pair, the forward difference from that base stands
    X2 = np.array([c, c + [0.0, 0.2], [0.6, 0.5], [0.6, 0.4]])
    other = MSUCB(2, seed=0, n_init=4, budget=100)
    other._axis = (np.array([1, 0]), np.ones(2))
    other.tell(X2, y, metas)
    np.testing.assert_allclose(other._design_slopes(4), [0.0, (0.7 - 1.1) / -0.1], rtol=1e-12)


def test_probes_on_one_side_of_their_base_are_not_a_central_pair():
    """At the cube's face both probes step inwards to the same point, and a re-evaluation
    of the plus probe's point is a base level with it: neither is a central pair."""
    opt = MSUCB(2, seed=0, n_init=3, budget=100)
    opt._axis = (np.array([1, 0]), np.ones(2))
    X = np.array([[0.5, 0.95], [0.5, 0.78], [0.5, 0.78]])  # base, plus and minus inwards
    opt.tell(X, [1.0, 0.5, 0.6], [{"init": True}, {"init": True, "axis": [0, 1]},
                                  {"init": True, "axis": [0, -1]}])
    # a point at the probe's own coordinate is no base: the minus probe steps from 0.95
    np.testing.assert_allclose(opt._design_slopes(3), [0.0, (0.6 - 1.0) / (0.78 - 0.95)])
    level = MSUCB(2, seed=0, n_init=4, budget=100)
    level._axis = (np.array([1, 0]), np.ones(2))
    X = np.array([[0.5, 0.5], [0.5, 0.7], [0.5, 0.7], [0.5, 0.3]])
    level.tell(X, [1.0, 2.0, 2.5, 0.4], [{"init": True}, {"init": True, "axis": [0, 1]},
                                         {"init": True}, {"init": True, "axis": [0, -1]}])
    np.testing.assert_allclose(level._design_slopes(4), [0.0, (0.4 - 2.5) / (0.3 - 0.7)])


def test_a_probe_past_the_cube_face_steps_inwards():
    opt = MSUCB(2, seed=0, n_init=5, budget=100)
    opt._axis = (np.array([0, 1]), np.ones(2))
    opt.tell(np.array([[0.5, 0.5], [0.95, 0.5]]), [1.0, 0.5],
             [{"init": True, "centre": True}, {"init": True}])
    (p,) = opt.ask()  # coordinate 0 from the best point, 0.95: +1/6 leaves the cube
    assert p.meta["axis"] == [0, 1]
    np.testing.assert_allclose(p.x, [0.95 - 1 / 6, 0.5], rtol=1e-12)


def test_steps_the_space_snaps_back_move_on_to_the_next_coordinate():
    from hdbo_engine.space import Integer, Real, Space

    space = Space([Integer(0, 1), Real(0.0, 1.0)])
    opt = MSUCB(space, seed=0, n_init=5, budget=100)
    opt._axis = (np.array([0, 1]), np.ones(2))
    (c,) = opt.ask()
    opt.tell(c.x, 1.0)
    (p,) = opt.ask()
    for step in (1 / 6, -1 / 6):  # both steps of the integer decode to the centre's value
        assert space.decode(c.x + [step, 0.0])[0][0] == space.decode(c.x)[0][0]
    assert p.meta["axis"] == [1, 1]
    np.testing.assert_allclose(p.x, c.x + [0.0, 1 / 6], rtol=1e-12)


def _run_design(opt, f, asks: int, constraints=None) -> list[dict]:
    """Ask and tell ``asks`` single points of ``f`` (with ``constraints(x)`` when given)."""
    metas = []
    for _ in range(asks):
        (p,) = opt.ask()
        c = None if constraints is None else [constraints(p.x)]
        opt.tell(p.x, f(p.x), p.meta, constraints=c)
        metas.append(p.meta)
    return metas


def test_an_axis_pass_that_finds_no_effect_in_ten_coordinates_ends_the_design():
    """D = 200, budget 500: the rule's design is 125 points. An objective of the last
    coordinate alone, which the first ten probed coordinates do not include, returns the
    centre's value at all 20 probes: the design is the centre and those 20 probes, and the
    22nd ask is the model's."""
    dim = 200
    opt = MSUCB(dim, seed=3, budget=500)
    assert opt.n_init == 125
    order = opt._axis_plan()[0]
    last = int(order[-1])  # probed last of all: never among the first ten

    def f(x: np.ndarray) -> float:
        return float((x[last] - 0.9) ** 2)

    metas = _run_design(opt, f, 22)
    assert all(m.get("init") for m in metas[:21])
    assert [m["axis"] for m in metas[1:21]] == [[k, s] for k in range(10) for s in (1, -1)]
    assert not metas[21].get("init")  # a model proposal
    assert opt._design_length() == 21 and opt._design_end() == 21


def test_an_effect_among_the_first_ten_coordinates_keeps_the_whole_design():
    dim = 200
    opt = MSUCB(dim, seed=3, budget=500)
    ninth = int(opt._axis_plan()[0][9])  # the tenth coordinate probed

    def f(x: np.ndarray) -> float:
        return float((x[ninth] - 0.9) ** 2)

    metas = _run_design(opt, f, 30)
    assert all(m.get("init") for m in metas)  # still in the 125-point design
    assert opt._design_length() == 125


def test_constraints_that_vary_keep_the_design_going_on_a_flat_objective():
    """The objective ignores the probed coordinates, but a constraint depends on the first
    one probed: the probes found an effect, so the design is not cut short."""
    dim = 200
    opt = MSUCB(dim, seed=3, budget=500)
    order = opt._axis_plan()[0]
    first, last = int(order[0]), int(order[-1])

    metas = _run_design(opt, lambda x: float(x[last]), 25,
                        constraints=lambda x: x[first] - 2.0)  # always feasible, varies
    assert all(m.get("init") for m in metas)
    assert opt._design_length() == 125
    same = MSUCB(dim, seed=3, budget=500)
    _run_design(same, lambda x: float(x[last]), 21, constraints=lambda x: -1.0)
    assert same._design_length() == 21  # constant constraints: flat, the design ends


def test_a_uniform_design_or_a_short_one_is_not_cut():
    """The early end applies to the axis design only, and only where it is longer than
    the centre and ten coordinates' probes."""
    flat = lambda x: 1.0  # noqa: E731
    uniform = MSUCB(200, seed=0, budget=500, init_design="uniform", n_init=40)
    _run_design(uniform, flat, 25)
    assert uniform._design_length() == 40
    short = MSUCB(200, seed=0, budget=500, n_init=21)
    _run_design(short, flat, 21)
    assert short._design_length() == 21 and short._design_end() == 21


def _separable(target: list[float]):
    def f(x: np.ndarray) -> float:
        return float(np.sum((x - np.asarray(target)) ** 2))
    return f


def test_a_batch_whose_probes_improve_two_coordinates_asks_their_combined_move_next():
    """D = 4, unit steps of 1/6, coordinates in order. From the centre a batch of four probes
    coordinates 0 and 1 on both sides; with the optimum at (0.8, 0.25, 0.5, 0.5) the plus
    probe of coordinate 0 (value 0.0178 + 0.0625) and the minus probe of coordinate 1
    (0.09 + 0.0069) improve on the centre (0.1525). The next ask's first point makes both
    moves, (2/3, 1/3, 1/2, 1/2), and the probe after it steps from that point."""
    opt = MSUCB(4, seed=0, n_init=12, budget=100)
    opt._axis = (np.arange(4), np.ones(4))
    f = _separable([0.8, 0.25, 0.5, 0.5])
    (c,) = opt.ask()
    opt.tell(c.x, f(c.x), c.meta)
    batch = opt.ask(4)
    assert [p.meta["axis"] for p in batch] == [[0, 1], [0, -1], [1, 1], [1, -1]]
    for p in batch:
        opt.tell(p.x, f(p.x), p.meta)
    rebuilt = MSUCB.from_history(4, opt.X, opt.y, opt.metas, seed=0, n_init=12, budget=100)
    rebuilt._axis = opt._axis
    combined, probe = opt.ask(2)
    assert [p.meta for p in rebuilt.ask(2)] == [combined.meta, probe.meta]  # from the history
    np.testing.assert_allclose(combined.x, [2 / 3, 1 / 3, 0.5, 0.5], rtol=1e-12)
    assert combined.meta == {"init": True, "combined": 0}
    assert probe.meta["axis"] == [2, 1]
    np.testing.assert_allclose(probe.x, [2 / 3, 1 / 3, 0.5 + 1 / 6, 0.5], rtol=1e-12)


def test_one_improving_coordinate_or_single_asks_make_no_combined_move():
    """A batch with one improving coordinate has nothing to combine; asked one at a time, the
    pass moves its base with every improvement, so no two probes improve on one base."""
    opt = MSUCB(4, seed=0, n_init=12, budget=100)
    opt._axis = (np.arange(4), np.ones(4))
    f = _separable([0.8, 0.5, 0.5, 0.5])
    (c,) = opt.ask()
    opt.tell(c.x, f(c.x), c.meta)
    for p in opt.ask(4):
        opt.tell(p.x, f(p.x), p.meta)
    (p,) = opt.ask()
    assert p.meta["axis"] == [2, 1]
    single = MSUCB(4, seed=0, n_init=12, budget=100)
    single._axis = (np.arange(4), np.ones(4))
    metas = _run_design(single, _separable([0.8, 0.25, 0.9, 0.1]), 12)
    assert all(m.get("init") for m in metas) and not any("combined" in m for m in metas)
