"""Acquisition functions on a GP posterior, for maximisation, with gradients.

All functions take the posterior mean and variance (and their gradients with
respect to the inputs, or ``None``) of the model of the objective *to be
maximised*; algorithms model ``-y`` since the public API minimises.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfcx, log_ndtr
from scipy.stats import norm

Array = np.ndarray


def ucb(
    mean: Array, var: Array, dmean: Array | None, dvar: Array | None, beta: float
) -> tuple[Array, Array | None]:
    """GP-UCB ``a(x) = mu(x) + sqrt(beta) sigma(x)`` (Srinivas et al. 2010; MS-UCB eq. 2)."""
    sd = np.sqrt(var)
    value = mean + np.sqrt(beta) * sd
    if dmean is None:
        return value, None
    return value, dmean + np.sqrt(beta) * dvar / (2.0 * sd)[:, None]


def expected_improvement(
    mean: Array, var: Array, dmean: Array | None, dvar: Array | None, best: float
) -> tuple[Array, Array | None]:
    """Expected improvement over ``best``: ``(mu - best) Phi(u) + sigma phi(u)``.

    ``u = (mu - best) / sigma`` (Jones et al. 1998, for maximisation).
    """
    sd = np.sqrt(var)
    u = (mean - best) / sd
    cdf, pdf = norm.cdf(u), norm.pdf(u)
    value = (mean - best) * cdf + sd * pdf
    if dmean is None:
        return value, None
    dsd = dvar / (2.0 * sd)[:, None]
    return value, dmean * cdf[:, None] + dsd * pdf[:, None]


def _log_h(z: Array) -> Array:
    """``log(phi(z) + z Phi(z))``, stable for very negative ``z`` (Ament et al. 2023, eq. 9).

    For ``z <= -5`` it uses ``phi(z) (1 - u R(u))`` with ``u = -z`` and Mills' ratio
    ``R(u) = erfcx(u / sqrt2) sqrt(pi / 2)``, so no term underflows.
    """
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    mid = z > -5.0
    zm = z[mid]
    out[mid] = np.log(norm.pdf(zm) + zm * np.exp(log_ndtr(zm)))
    u = -z[~mid]
    out[~mid] = (-0.5 * u**2 - 0.5 * np.log(2.0 * np.pi)
                 + np.log1p(-u * erfcx(u / np.sqrt(2.0)) * np.sqrt(np.pi / 2.0)))
    return out


def log_expected_improvement(
    mean: Array, var: Array, dmean: Array | None, dvar: Array | None, best: float
) -> tuple[Array, Array | None]:
    """``log EI = log sigma + log h(u)``, ``h(u) = phi(u) + u Phi(u)``, ``u = (mu - best) / sd``.

    Ament, Daulton, Eriksson, Balandat, Bakshy, "Unexpected Improvements to Expected
    Improvement for Bayesian Optimization" (NeurIPS 2023), eq. (9): the same maximiser as
    EI, without EI's underflow to 0 (and zero gradient) far from the incumbent.
    """
    sd = np.sqrt(var)
    u = (mean - best) / sd
    log_h = _log_h(u)
    value = np.log(sd) + log_h
    if dmean is None:
        return value, None
    dsd = dvar / (2.0 * sd)[:, None]
    du = dmean / sd[:, None] - (u / sd)[:, None] * dsd
    ratio = np.exp(log_ndtr(u) - log_h)  # h'(u) / h(u), h' = Phi
    return value, dsd / sd[:, None] + ratio[:, None] * du
