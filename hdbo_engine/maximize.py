"""Acquisition maximisation: candidate sets, candidate scoring, batched multi-start L-BFGS-B.

The engine's maximisers share three pieces: :func:`incumbent_candidates` (the incumbent,
Gaussian perturbations of it and uniform draws in the search box, the box being
:func:`hdbo_engine.trust_region.search_box`), :func:`maximize_candidates` (score the
candidates, refine the best few) and :func:`lbfgsb_batch` (the refinement).

Batched multi-start: ``m`` independent starts are stacked into one vector and
L-BFGS-B maximises the *sum* of their acquisition values. Because the starts
do not interact, the gradient is block-separable and each start follows its
own ascent path, while every objective call is one vectorised evaluation of
the posterior for all starts (the batching used by BoTorch's
``gen_candidates_scipy``). Works over a box or over many axis-aligned
subspaces at once (see :class:`hdbo_engine.gp.SubspacePosterior`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize

Array = np.ndarray
AcqFn = Callable[[Array], tuple[Array, Array]]
ScoreFn = Callable[[Array], Array]
RefineFn = Callable[[Array], tuple[Array, Array]]


def gaussian_perturbations(centre: Array, lower: Array, upper: Array, n: int,
                           rng: np.random.Generator, *, relative: bool = True) -> Array:
    """``n`` Gaussian perturbations of ``centre`` (D,), clipped into the box [lower, upper].

    Each coordinate moves by a normal step of standard deviation 0.1 times the box's side
    ``upper - lower`` (``relative=True``, the default) or 0.1 of the unit cube's side
    (``relative=False``). Draws: one ``rng.normal`` of shape (n, D).
    """
    step = rng.normal(0.0, 0.1, (n, len(centre)))
    if relative:
        step = step * (upper - lower)
    return np.clip(centre + step, lower, upper)


def incumbent_candidates(incumbent: Array, lower: Array, upper: Array, n: int,
                         rng: np.random.Generator, *, relative: bool = True) -> Array:
    """``n`` candidates in the box [lower, upper]: the incumbent (D,) first, then ``n // 4``
    :func:`gaussian_perturbations` of it (``relative`` as there), then ``n - 1 - n // 4``
    uniform draws in the box; shape (n, D) for ``n >= 1``.

    Draws: the perturbations' normal steps (n // 4, D), then the uniform draws
    (n - 1 - n // 4, D).
    """
    n_local = n // 4
    local = gaussian_perturbations(incumbent, lower, upper, n_local, rng, relative=relative)
    uniform = lower + rng.random((n - 1 - n_local, len(incumbent))) * (upper - lower)
    return np.vstack([incumbent[None, :], local, uniform])


def maximize_candidates(cand: Array, score: ScoreFn, n_starts: int,
                        refine: RefineFn) -> tuple[Array, Array]:
    """Candidates -> score -> refine: the maximiser of a scored candidate set.

    ``score(cand)`` gives each candidate (m, D) a value (m,); the ``n_starts`` best
    (:func:`top_k`, best first) are refined by ``refine(starts)``, which returns points and
    their values (usually :func:`lbfgsb_batch` of the acquisition in the search box).
    Returns the refined points and values, or with ``n_starts == 0`` the candidates and
    their scores; the caller picks among them (the largest value, or the best unseen).
    """
    scores = score(cand)
    if n_starts == 0:
        return cand, scores
    return refine(cand[top_k(scores, n_starts)])


def lbfgsb_batch(
    acq: AcqFn, Y0: Array, lower: Array | float = 0.0, upper: Array | float = 1.0,
    maxiter: int = 100,
) -> tuple[Array, Array]:
    """Maximise ``acq`` from each row of ``Y0`` (m, k) inside the box [lower, upper].

    ``acq(Y)`` returns values (m,) and gradients (m, k). Returns the final
    points (m, k) and their values (m,). Non-finite values never escape: a
    start whose value is not finite keeps its initial point.
    """
    m, k = Y0.shape
    lo = np.broadcast_to(np.asarray(lower, dtype=float), (k,))
    hi = np.broadcast_to(np.asarray(upper, dtype=float), (k,))
    bounds = list(zip(np.tile(lo, m), np.tile(hi, m), strict=True))

    def negsum(flat: Array) -> tuple[float, Array]:
        val, grad = acq(flat.reshape(m, k))
        ok = np.isfinite(val)
        grad = np.where(ok[:, None] & np.isfinite(grad), grad, 0.0)
        return -float(np.sum(val[ok])), -grad.ravel()

    res = minimize(negsum, np.clip(Y0, lo, hi).ravel(), jac=True, method="L-BFGS-B",
                   bounds=bounds, options={"maxiter": maxiter})
    Y = np.clip(res.x.reshape(m, k), lo, hi)
    vals, _ = acq(Y)
    v0, _ = acq(Y0)
    worse = ~np.isfinite(vals) | (vals < v0)
    Y[worse], vals[worse] = Y0[worse], v0[worse]
    return Y, vals


def top_k(values: Array, k: int) -> Array:
    """Indices of the k largest values, best first."""
    k = min(k, len(values))
    idx = np.argpartition(-values, k - 1)[:k]
    return idx[np.argsort(-values[idx])]
