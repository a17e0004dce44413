"""Auto's noise judgement, its replicate, and its recommendation.

* **Replicate** (:func:`replicate`): with ``noisy`` None [default], Auto's first model ask
  (every told and pending point a design point, at least :data:`RECOMMEND_MIN` [10] finite
  values) fits a GP to the design's values; if it estimates a noise standard deviation of at
  least 20% of the values' (noise variance >= :data:`NOISY_VAR` = 0.04 on the standardised
  scale), that ask proposes the design's best point again (meta ``{"algorithm": "auto",
  "replicate": i}``, ``i`` the index of the told point it repeats; the one proposal that
  repeats a told point; in a batch that spans the design's end, the first of its model
  points; none in a space the engine enumerates, or when points other than the design's were
  told first).
* **Noise** (:func:`noise_observed`): the objective is noisy iff a told replicate's value
  differs from its original's (relative tolerance 1e-9): a GP cannot tell noise from a
  rugged deterministic function, a replicate can [auto.md#noise].
* **Recommendation** (:func:`recommend`): with ``noisy`` True, or None and noise observed,
  the told point of lowest posterior :data:`RECOMMEND_QUANTILE` [0.9] quantile
  ``mu(x) + Phi^-1(0.9) sigma(x)`` of a GP fitted to the told values (the
  :data:`RECOMMEND_MAX` [400] nearest the best point; the kriging quantile of Picheny,
  Ginsbourger, Richet & Caplin, Technometrics 55(1), 2013: a low mean that the data support,
  not an isolated one); otherwise the best told point. With constraints, both choose among
  feasible points only (:attr:`Optimizer.best`'s rule) [auto.md#recommendation].
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from ...base import Optimizer, Proposal
from ...constraints import best_index
from ...gp import GP
from ...util import is_int
from .arm import KEY

NOISY_VAR = 0.04  # estimated noise variance (standardised) above which values count as noisy
RECOMMEND_MIN, RECOMMEND_MAX = 10, 400  # told points the recommendation's GP needs / keeps
RECOMMEND_QUANTILE = 0.9  # posterior quantile a noisy recommendation minimises
REPLICATE = "replicate"  # meta key of Auto's replicate: the index of the told point it repeats


def noise_observed(opt: Optimizer) -> bool | None:
    """Whether a told replicate's value differs from its original's (relative tolerance
    1e-9); None while no replicate with finite values was told."""
    observed = None
    for y, meta in zip(opt._y, opt._metas, strict=True):
        i = meta.get(REPLICATE)
        if not is_int(i) or not 0 <= i < opt.n_told:
            continue
        if np.isfinite(y) and np.isfinite(opt._y[i]):
            differs = not np.isclose(y, opt._y[i], rtol=1e-9, atol=0.0)
            observed = bool(observed) or differs
    return observed


def is_noisy(opt: Optimizer, noisy: bool | None) -> bool:
    """The ``noisy`` option, or where it is None, whether noise was observed."""
    return noisy if noisy is not None else bool(noise_observed(opt))


def replicate(opt: Optimizer, noisy: bool | None) -> Proposal | None:
    """The replicate of the best design point, when this is the run's first model ask and a
    GP fitted to the design's values estimates noise (module docstring)."""
    n_points = opt.space.n_points
    if noisy is not None or (n_points is not None and n_points <= opt.enumerate_limit):
        return None  # an enumerated space repeats no point (base module docstring)
    if any(not m.get("init") for m in opt._metas) or any(
            not p.meta.get("init") for p in opt._pending):
        return None
    design = np.flatnonzero(np.isfinite(opt._y))
    if len(design) < RECOMMEND_MIN:
        return None
    y = opt._y[design]
    if GP(opt.dim).fit(opt._X[design], y).params.noise_var < NOISY_VAR:
        return None
    i = int(design[best_index(y, None if opt._c is None else opt._c[design])])
    return Proposal(opt._X[i].copy(), {KEY: opt.name, REPLICATE: i})


def recommend(opt: Optimizer, noisy: bool | None) -> np.ndarray | None:
    """The told point to report as the answer (module docstring)."""
    best = opt.recommendable_best()
    if best is None or not is_noisy(opt, noisy):
        return None if best is None else best[0]
    ok = np.isfinite(opt._y) & opt.feasible
    X, y = opt._X[ok], opt._y[ok]
    if len(y) < RECOMMEND_MIN:
        return best[0]
    if len(y) > RECOMMEND_MAX:
        near = np.argsort(np.abs(X - best[0]).sum(axis=1), kind="stable")[:RECOMMEND_MAX]
        X, y = X[near], y[near]
    mean, var = GP(opt.dim).fit(X, y).predict(X)
    quantile = mean + ndtri(RECOMMEND_QUANTILE) * np.sqrt(np.maximum(var, 0.0))
    return X[int(np.argmin(quantile))].copy()
