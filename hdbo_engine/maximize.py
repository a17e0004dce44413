"""Acquisition maximisation: batched multi-start L-BFGS-B and candidate scoring.

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
