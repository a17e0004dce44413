"""Acquisition functions on a GP posterior, for maximisation, with gradients.

All functions take the posterior mean and variance (and their gradients with
respect to the inputs, or ``None``) of the model of the objective *to be
maximised*; algorithms model ``-y`` since the public API minimises.
"""

from __future__ import annotations

import numpy as np
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
