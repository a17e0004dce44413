"""Helpers shared by the algorithms' tests: a GP posterior and expected improvement written
out independently of the engine, a test function, a told design, and a spy on a function.

Imported by the test files as ``from helpers import ...`` (pytest puts ``tests/`` on the
path, the folder holding no ``__init__.py``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.stats import norm

from hdbo_engine.gp import GPParams


def matern52(A: np.ndarray, B: np.ndarray, ls: np.ndarray, s2: float) -> np.ndarray:
    """Matern-5/2 ARD kernel matrix, Rasmussen & Williams eq. (4.17)."""
    r = np.sqrt((((A[:, None, :] - B[None, :, :]) / ls) ** 2).sum(-1))
    return s2 * (1 + math.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-math.sqrt(5) * r)


def gp_posterior(X: np.ndarray, target: np.ndarray, params: GPParams, Xq: np.ndarray,
                 extra_noise: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and variance on the standardised scale (R&W eqs. 2.25-2.26),
    with the targets standardised to mean 0 and std 1."""
    z = (target - target.mean()) / target.std()
    noise = params.noise_var + (0.0 if extra_noise is None else extra_noise)
    K = matern52(X, X, params.lengthscales, params.signal_var) + np.diag(
        np.broadcast_to(noise, len(X)))
    kq = matern52(Xq, X, params.lengthscales, params.signal_var)
    mean = kq @ np.linalg.solve(K, z)
    var = params.signal_var - np.einsum("ij,ji->i", kq, np.linalg.solve(K, kq.T))
    return mean, var


def ei_by_quadrature(mean: float, sd: float, best: float) -> float:
    """E[max(f - best, 0)] for f ~ N(mean, sd^2), by numerical integration."""
    value, _ = integrate.quad(lambda f: (f - best) * norm.pdf(f, mean, sd), best, np.inf,
                              epsabs=1e-14, epsrel=1e-12)
    return value


def shifted_sphere(x: np.ndarray) -> float:
    """A smooth bowl whose minimum (0) is off the centre and off the axes."""
    target = np.linspace(0.2, 0.8, len(x))[::-1]
    return float(((x - target) ** 2).sum())


def told_history(opt, f, n: int, seed: int) -> None:
    """Tell ``n`` uniform points as the initial design."""
    rng = np.random.default_rng(1000 + seed)
    X = rng.random((n, opt.dim))
    opt.tell(X, [f(x) for x in X], [{"init": True}] * n)


class Capture:
    """Wraps a function, keeping every call's arguments."""

    def __init__(self, func):
        self.func, self.calls, self.returned = func, [], None

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        self.returned = self.func(*args, **kwargs)
        return self.returned
