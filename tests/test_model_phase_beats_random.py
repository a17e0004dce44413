"""The model phase of every engine algorithm beats uniform random draws.

After the same uniform history, the best of the model's proposals against the best of as
many further uniform draws. Only the proposals count, so the initial design cannot win it.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import shifted_sphere, told_history

from hdbo_engine.algorithms.baselines import GPUCB
from hdbo_engine.algorithms.bkb import BKB
from hdbo_engine.algorithms.cobbo import CobBO
from hdbo_engine.algorithms.msucb import MSUCB


def model_phase_best(opt, f, steps: int) -> float:
    """Best value among ``steps`` model-based proposals (design already told)."""
    values = []
    for _ in range(steps):
        (p,) = opt.ask()
        assert "init" not in p.meta  # the design is over: every proposal is the model's
        values.append(f(p.x))
        opt.tell(p.x, values[-1])
    return min(values)


def random_best(dim: int, f, steps: int, seed: int) -> float:
    rng = np.random.default_rng(2000 + seed)
    return min(f(x) for x in rng.random((steps, dim)))


def last_three(x: np.ndarray) -> float:
    """The shifted sphere of the last three coordinates: MS-UCB's free ones at D = 6, d = 3
    (the paper's setting, where the function lives in the subspaces' free directions)."""
    return shifted_sphere(x[-3:])


def _make(name: str, D: int, seed: int, n_init: int, steps: int):
    common = dict(seed=seed, n_init=n_init, init_design="uniform", line_search=False)
    if name == "msucb":
        return MSUCB(D, d=3, **common)
    if name == "msucb-no-region":
        return MSUCB(D, d=3, trust_region=False, n_perturb=None, **common)
    if name == "gpucb":
        return GPUCB(D, seed=seed, n_init=n_init)
    if name == "cobbo":
        return CobBO(D, **common)
    if name == "bkb":
        return BKB(D, **common)
    pytest.importorskip("torch")
    from hdbo_engine.algorithms.goucb import GOUCB
    return GOUCB(D, budget=n_init + steps, fit_restarts=1, fit_maxiter=100, **common)


@pytest.mark.parametrize("name, D, f", [
    ("msucb", 6, shifted_sphere), ("msucb-no-region", 6, last_three), ("gpucb", 3, shifted_sphere),
    ("cobbo", 6, shifted_sphere), ("bkb", 6, shifted_sphere), ("goucb", 6, shifted_sphere)])
def test_model_phase_beats_random_draws_after_the_same_history(name, D, f):
    """After the same 10 uniform points, the best of 15 model proposals against the best of
    15 further uniform draws, over five seeds. Only the proposals count, so the design cannot
    win it. Measured (medians of the five seeds, model / random): MS-UCB 0.147 / 0.287,
    CobBO 0.097 / 0.287, BKB 0.100 / 0.287, GO-UCB 0.108 / 0.287 at D = 6; GP-UCB 0.002 /
    0.046 at D = 3 (at D = 6 its unconfined UCB explores the box's corners and loses);
    MS-UCB without its trust region on a function of its free coordinates 0.0007 / 0.043.
    Each won on at least four of the five seeds. The bar, a median under 0.7x random's and a
    majority of paired wins, leaves room for the worst of them (MS-UCB, 0.51x) and is out of
    reach of the design points alone (their best, median 0.229 on the shifted sphere, is
    0.80x). The trust region's local moves alone beat random here: MS-UCB maximising -mu +
    sqrt(beta) sigma still reached 0.168; without the region the same error gives 0.93,
    which the ``msucb-no-region`` case catches."""
    n_init, steps = 10, 15
    ours, theirs = [], []
    for seed in range(5):
        opt = _make(name, D, seed, n_init, steps)
        told_history(opt, f, n_init, seed)
        ours.append(model_phase_best(opt, f, steps))
        theirs.append(random_best(D, f, steps, seed))
    assert np.median(ours) < 0.7 * np.median(theirs), (ours, theirs)
    assert sum(o < r for o, r in zip(ours, theirs, strict=True)) >= 3, (ours, theirs)
