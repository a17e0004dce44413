"""Warm starts: points told without a meta (a data set, enqueued trials, another sampler's
points) before and between asks.

Such points carry no record of a fit, and no proposal was made from a fit due among them,
so a model refit due inside a run of them happens once, at the run's end
(``hdbo_engine.gp.run_end``). What must hold: proposals stay valid and a function of the
told history (however the points were grouped into tells), a rebuild from the history with
metas proposes what the live optimizer does, and a warm start of n points costs one fit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hdbo_engine import get_algorithm
from hdbo_engine.algorithms.bkb import BKB
from hdbo_engine.algorithms.msucb import MSUCB
from hdbo_engine.gp import GP, HyperparameterChain, run_end, told_without_meta

D = 4
ALGORITHMS = ("msucb", "bkb", "goucb", "cobbo", "auto")
# small models where the defaults would only make the tests slower
OPTIONS: dict[str, dict[str, Any]] = {
    "goucb": {"n_candidates": 64, "fit_restarts": 2, "fit_maxiter": 100, "refit_every": 3},
    "bkb": {"n_candidates": 128},
}


def _levy(X: np.ndarray) -> np.ndarray:
    w = 1.0 + (4.0 * np.atleast_2d(X) - 2.0) / 4.0
    head = np.sin(np.pi * w[:, 0]) ** 2
    body = ((w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2)).sum(1)
    tail = (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2)
    return head + body + tail


def _make(name: str) -> Any:
    if name in ("goucb", "auto"):
        pytest.importorskip("torch")
    return get_algorithm(name)(D, seed=7, budget=60, **OPTIONS.get(name, {}))


def _points(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, D))


def _ask_and_tell(opt: Any, k: int) -> None:
    for _ in range(k):
        (p,) = opt.ask()
        opt.tell(p.x, float(_levy(p.x)[0]), p.meta)


def test_run_end_moves_a_due_fit_to_the_end_of_its_run() -> None:
    bare = np.array([False, True, True, True, False, True, True])
    assert run_end(1, bare) == 1  # the first point came with a meta
    assert run_end(2, bare) == 4  # points 1-3 are a run; point 4 carries a meta
    assert run_end(4, bare) == 4
    assert run_end(5, bare) == 5
    assert run_end(6, bare) == 7  # a run reaching the end of the history
    assert run_end(3, None) == 3
    assert told_without_meta([{}, {"t": 1}, {}]).tolist() == [True, False, True]


def test_a_history_with_metas_keeps_every_checkpoint() -> None:
    X = _points(30, 1)
    y = _levy(X)
    plain, marked = HyperparameterChain(D), HyperparameterChain(D)
    plain.params(X, y)
    marked.params(X, y, bare=np.zeros(30, dtype=bool))
    np.testing.assert_array_equal(plain.gp.params.lengthscales, marked.gp.params.lengthscales)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_warm_started_proposals_are_valid_and_a_function_of_the_history(name: str) -> None:
    X = _points(20, 2)
    y = _levy(X)
    at_once, one_by_one = _make(name), _make(name)
    at_once.tell(X, y)
    for x, v in zip(X, y, strict=True):
        one_by_one.tell(x, v)
    a, b = at_once.ask(2), one_by_one.ask(2)
    for p, q in zip(a, b, strict=True):
        assert p.x.shape == (D,) and ((p.x >= 0) & (p.x <= 1)).all()
        assert not (np.abs(X - p.x).max(axis=1) <= 1e-12).any()
        np.testing.assert_array_equal(p.x, q.x)
    assert not np.array_equal(a[0].x, a[1].x)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_rebuild_with_points_told_without_metas_between_asks(name: str) -> None:
    opt = _make(name)
    opt.tell(_points(12, 3), _levy(_points(12, 3)))
    _ask_and_tell(opt, 3)
    for x in _points(6, 4):  # one at a time
        opt.tell(x, float(_levy(x)[0]))
    (late,) = opt.ask()  # evaluated while other points arrive
    opt.tell(_points(4, 5), _levy(_points(4, 5)))
    opt.tell(late.x, float(_levy(late.x)[0]), late.meta)
    _ask_and_tell(opt, 2)
    opt.tell(_points(5, 6), _levy(_points(5, 6)))
    nxt = opt.ask()[0]
    rebuilt = type(opt).from_history(D, opt.X, opt.y, opt.metas, seed=7, budget=60,
                                     **OPTIONS.get(name, {}))
    rebuilt.add_pending(nxt.x, nxt.meta)
    opt_second, rebuilt_second = opt.ask()[0], rebuilt.ask()[0]
    np.testing.assert_array_equal(rebuilt_second.x, opt_second.x)


def test_msucb_fits_a_warm_start_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fits: list[int] = []
    real = GP.fit
    monkeypatch.setattr(GP, "fit", lambda self, X, y, *a, **k: fits.append(len(X))
                        or real(self, X, y, *a, **k))
    opt = MSUCB(D, seed=0)
    opt.tell(_points(40, 7), _levy(_points(40, 7)))
    opt.ask()
    assert fits == [40]  # the schedule's checkpoints 1, 2, ..., 39 all fall inside the run
    _ask_and_tell(opt, 3)
    opt.ask()
    assert fits == [40]  # the next checkpoint is 40 + floor(0.1 * 40) = 44
    _ask_and_tell(opt, 1)
    opt.ask()
    assert fits == [40, 44]


def test_bkb_takes_a_warm_start_with_one_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    fits: list[int] = []
    real = BKB._fit_gp
    monkeypatch.setattr(BKB, "_fit_gp", lambda self, X, y: fits.append(len(X))
                        or real(self, X, y))
    opt = BKB(D, seed=0)
    opt.tell(_points(40, 8), _levy(_points(40, 8)))
    assert fits == []  # the run waits for the model to be read
    opt.ask()
    assert fits == [40]
    assert 0 < opt.dictionary_size < 40  # the run was resampled in steps, not kept whole


def test_goucb_refits_a_warm_start_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from hdbo_engine.algorithms.goucb import GOUCB

    fits: list[int] = []
    real = GOUCB._least_squares
    monkeypatch.setattr(GOUCB, "_least_squares", lambda self, w, X, *a: fits.append(len(X))
                        or real(self, w, X, *a))
    opt = GOUCB(D, seed=0, budget=60, **OPTIONS["goucb"])
    opt.tell(_points(40, 9), _levy(_points(40, 9)))
    opt.ask()
    n_init = opt.n_init
    # Phase I on the design (each restart), then the refits due at n_init + 3, + 6, ... are
    # one refit at the run's end
    assert fits == [n_init] * OPTIONS["goucb"]["fit_restarts"] + [40]
