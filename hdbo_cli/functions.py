"""Vectorised benchmark functions (minimisation) with domains and known minima.

Definitions follow the Virtual Library of Simulation Experiments (Surjanovic
& Bingham). Domains: Ackley, Levy, Rastrigin and Rosenbrock use the box
``[-5, 10]^D`` of the high-dimensional BO literature (CobBO Sec. 4.2, TuRBO),
which puts the optimum off-centre; Styblinski-Tang ``[-5, 5]^D``, the rotated
hyper-ellipsoid ``[-65.536, 65.536]^D``. Every function takes ``X`` of shape
(n, D) in its own domain and returns (n,). Low-dimensional functions (Branin, six-hump Camelback,
Hartmann6) are *embedded*: the first 2 or 6 coordinates are effective, the
other ``D - d_eff`` coordinates are ignored (domain [0, 1]), which is the
"low effective dimension" setting of the MS-UCB and CobBO papers.

Instances (the ``hd`` suite). A prefix turns a problem into a family with one
random instance per ``seed`` (drawn from ``seed`` and the problem's name, so
the same ``(name, dim, seed)`` is the same function in every process):

* ``shifted_<f>`` (full-dimensional ``f``): the minimiser is moved to a point
  ``o`` drawn uniformly from the central 80% of the box in every coordinate,
  ``f_o(x) = f(x - o + x*)``. Off the centre and off the box diagonal, which
  the unshifted ``[-5, 10]^D`` problems are not (their minimum lies on it).
* ``rotated_<f>``: as ``shifted_`` and also rotated about ``o`` by a uniformly
  random orthogonal ``Q`` (scipy's ``special_ortho_group``),
  ``f_o(x) = f(x* + Q (x - o))``: a separable function becomes non-separable,
  as in BBOB's rotated functions (f15 is rotated Rastrigin).
* ``scattered_<g>`` (embedded ``g``): the ``d_eff`` effective coordinates sit
  at random positions of the ``D``-dimensional box instead of the first ones.
* ``noisy_shifted_ackley``: instance ``seed`` of ``shifted_ackley`` plus
  Gaussian noise N(0, sigma^2) with sigma = 1.0 (:data:`NOISE_SD`; Ackley's
  values on its box run from 0 to about 22, and the ``hd`` suite's methods end
  500 evaluations of ``shifted_ackley`` at D = 100 between about 5 and 14).
  The k-th evaluation's draw comes from the generator seeded by
  ``(seed, name, k)``, so a run is reproducible and the noise does not depend
  on how evaluations are batched.

A noisy problem carries its noise-free function (``Problem.f_true``), which
``hdbo bench`` uses only to score the point a method recommends at the end.

``Problem.info`` records the instance (the optimum ``o``, the rotation's
seed, the effective coordinates), and ``hdbo bench`` writes it into each
cell's JSON. The real tasks (MuJoCo, LunarLander, rover) are in
:mod:`hdbo_cli.tasks`; :func:`hdbo_cli.problems.make_problem` builds both.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Array = np.ndarray


@dataclass(frozen=True)
class Problem:
    """A benchmark: ``f`` on the box ``[lower, upper]`` with minimum ``f_min`` at ``x_min``.

    ``f_min`` and ``x_min`` are ``None`` where the minimum is unknown (the real
    tasks); ``info`` describes a random instance (JSON-serialisable). ``f_true`` is
    the noise-free function of a noisy problem (``None``: ``f`` is deterministic);
    ``f_min`` and ``x_min`` are then ``f_true``'s. ``c`` gives a constrained problem's
    ``n_constraints`` constraint values, (n, D) -> (n, m), feasible where every value is
    ``<= 0`` (:mod:`hdbo_cli.constrained`); ``f_min`` and ``x_min`` are then the best
    feasible ones.
    """

    name: str
    dim: int
    lower: Array
    upper: Array
    f: Callable[[Array], Array]
    f_min: float | None
    x_min: Array | None
    info: dict[str, Any] = field(default_factory=dict)
    f_true: Callable[[Array], Array] | None = None
    c: Callable[[Array], Array] | None = None
    n_constraints: int = 0

    @property
    def noisy(self) -> bool:
        return self.f_true is not None

    def _points(self, X: Array) -> Array:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self.dim:
            raise ValueError(f"X: expected {self.dim} columns, got {X.shape[1]}")
        return X

    def __call__(self, X: Array) -> Array:
        """Evaluate at points of the domain, (n, D) or (D,) (a noisy problem: one draw each)."""
        return self.f(self._points(X))

    def noise_free(self, X: Array) -> Array:
        """The noise-free values at points of the domain (``f`` itself where it has no noise)."""
        return (self.f if self.f_true is None else self.f_true)(self._points(X))

    def noise_free_unit(self, U: Array) -> Array:
        """:meth:`noise_free` at unit-cube points."""
        return self.noise_free(self.from_unit(U))

    def from_unit(self, U: Array) -> Array:
        """Map unit-cube points to the domain."""
        return self.lower + np.atleast_2d(U) * (self.upper - self.lower)

    def evaluate_unit(self, U: Array) -> Array:
        """Evaluate at unit-cube points (what the engine proposes)."""
        return self(self.from_unit(U))

    def constraints_unit(self, U: Array) -> Array:
        """The constraint values (n, ``n_constraints``) at unit-cube points; feasible where
        every one is ``<= 0``."""
        if self.c is None:
            raise ValueError(f"problem: {self.name} has no constraints")
        return self.c(self._points(self.from_unit(U)))


def ackley(X: Array) -> Array:
    D = X.shape[1]
    s1 = np.sqrt((X**2).sum(1) / D)
    s2 = np.cos(2 * np.pi * X).sum(1) / D
    return -20.0 * np.exp(-0.2 * s1) - np.exp(s2) + 20.0 + np.e


def levy(X: Array) -> Array:
    w = 1.0 + (X - 1.0) / 4.0
    head = np.sin(np.pi * w[:, 0]) ** 2
    mid = ((w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2)).sum(1)
    tail = (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2)
    return head + mid + tail


def rastrigin(X: Array) -> Array:
    return 10.0 * X.shape[1] + (X**2 - 10.0 * np.cos(2 * np.pi * X)).sum(1)


def rosenbrock(X: Array) -> Array:
    return (100.0 * (X[:, 1:] - X[:, :-1] ** 2) ** 2 + (X[:, :-1] - 1) ** 2).sum(1)


def styblinski_tang(X: Array) -> Array:
    return 0.5 * (X**4 - 16 * X**2 + 5 * X).sum(1)


def hyper_ellipsoid(X: Array) -> Array:
    """Rotated hyper-ellipsoid: sum_i sum_{j <= i} x_j^2 (interacting variables)."""
    return np.cumsum(X**2, axis=1).sum(1)


def branin(X: Array) -> Array:
    x1, x2 = X[:, 0], X[:, 1]
    b, c = 5.1 / (4 * np.pi**2), 5 / np.pi
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x1) + 10


def camelback(X: Array) -> Array:
    x1, x2 = X[:, 0], X[:, 1]
    return (4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2


_H6_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                  [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
_H6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(X: Array) -> Array:
    inner = (_H6_A[None] * (X[:, None, :6] - _H6_P[None]) ** 2).sum(2)
    return -(np.exp(-inner) @ _H6_ALPHA)


# name: (function, lower, upper, f_min, x_min per coordinate or effective point, d_eff)
_FULL = {
    "ackley": (ackley, -5.0, 10.0, 0.0, 0.0),
    "levy": (levy, -5.0, 10.0, 0.0, 1.0),
    "rastrigin": (rastrigin, -5.0, 10.0, 0.0, 0.0),
    "rosenbrock": (rosenbrock, -5.0, 10.0, 0.0, 1.0),
    "styblinski_tang": (styblinski_tang, -5.0, 5.0, -39.16616570377142, -2.903534018185960),
    "hyper_ellipsoid": (hyper_ellipsoid, -65.536, 65.536, 0.0, 0.0),
}
_PER_COORDINATE_MIN = {"styblinski_tang"}  # its f_min above is per coordinate
_EMBEDDED = {
    "branin": (branin, [-5.0, 0.0], [10.0, 15.0], 0.39788735772973816, [np.pi, 2.275]),
    "camelback": (camelback, [-3.0, -2.0], [3.0, 2.0], -1.0316284534898774,
                  [0.08984201368301331, -0.7126564032704135]),
    "hartmann6": (hartmann6, [0.0] * 6, [1.0] * 6, -3.3223680114155147,
                  [0.20168952, 0.15001069, 0.47687398, 0.27533243, 0.31165162, 0.65730054]),
}


_PREFIXES = ("shifted_", "rotated_", "scattered_")
#: Noisy problem -> standard deviation of its additive Gaussian noise (module docstring).
NOISE_SD = {"noisy_shifted_ackley": 1.0}


def function_names() -> list[str]:
    """All names accepted by :func:`make_function`."""
    return sorted([*_FULL, *_EMBEDDED, *(f"{p}{n}" for p in _PREFIXES[:2] for n in _FULL),
                   *(f"scattered_{n}" for n in _EMBEDDED), *NOISE_SD])


def instance_key(name: str, seed: int) -> list[int]:
    """The seed of instance ``seed`` of problem ``name``'s generator (stable across
    processes); a noisy problem's k-th evaluation draws from ``[*key, k]``."""
    return [seed, zlib.crc32(name.encode())]


def instance_rng(name: str, seed: int) -> np.random.Generator:
    """The generator of instance ``seed`` of problem ``name`` (stable across processes)."""
    return np.random.default_rng(instance_key(name, seed))


def make_function(key: str, dim: int, seed: int = 0) -> Problem | None:
    """The synthetic function ``key`` at dimension ``dim`` (instance ``seed``, where the name
    has a random-instance prefix; see the module docstring), or None for an unknown name."""
    if key in NOISE_SD:
        clean = make_function(key.removeprefix("noisy_"), dim, seed)
        assert clean is not None
        sigma = NOISE_SD[key]
        info = {**clean.info, "noise": f"additive Gaussian, N(0, {sigma}^2) per evaluation"}
        return Problem(key, dim, clean.lower, clean.upper,
                       _AdditiveNoise(clean.f, sigma, instance_key(key, seed)),
                       clean.f_min, clean.x_min, info, f_true=clean.f)
    prefix = next((p for p in _PREFIXES if key.startswith(p)), "")
    base = key.removeprefix(prefix)
    if base in _FULL and prefix != "scattered_":
        f, lo, hi, fmin, xmin = _FULL[base]
        if dim < 2:
            raise ValueError(f"dim: {key} needs dim >= 2, got {dim}")
        fmin = fmin * dim if base in _PER_COORDINATE_MIN else fmin
        lower, upper, x_star = np.full(dim, lo), np.full(dim, hi), np.full(dim, xmin)
        if not prefix:
            return Problem(key, dim, lower, upper, f, fmin, x_star)
        rng = instance_rng(key, seed)
        o = lo + (0.1 + 0.8 * rng.random(dim)) * (hi - lo)
        info: dict[str, Any] = {"instance_seed": seed, "optimum": o.tolist()}
        if prefix == "shifted_":
            g = _shifted(f, o - x_star)
        else:
            from scipy.stats import special_ortho_group

            rotation_seed = int(rng.integers(2**31))
            g = _rotated(f, o, x_star, special_ortho_group.rvs(dim, random_state=rotation_seed))
            info["rotation_seed"] = rotation_seed
        return Problem(key, dim, lower, upper, g, fmin, o, info)
    if base in _EMBEDDED and prefix in ("", "scattered_"):
        f, lo, hi, fmin, xmin = _EMBEDDED[base]
        k = len(lo)
        if dim < k:
            raise ValueError(f"dim: {key} is embedded and needs dim >= {k}, got {dim}")
        coords = (np.sort(instance_rng(key, seed).choice(dim, k, replace=False)) if prefix
                  else np.arange(k))
        lower, upper, x_min = np.zeros(dim), np.ones(dim), np.full(dim, 0.5)
        lower[coords], upper[coords], x_min[coords] = lo, hi, xmin
        info = {"instance_seed": seed, "coordinates": coords.tolist()} if prefix else {}
        g = f if not prefix else (lambda X: f(X[:, coords]))
        return Problem(key, dim, lower, upper, g, fmin, x_min, info)
    return None


def _shifted(f: Callable[[Array], Array], shift: Array) -> Callable[[Array], Array]:
    """``x -> f(x - shift)``."""
    return lambda X: f(X - shift)


def _rotated(f: Callable[[Array], Array], o: Array, x_star: Array,
             Q: Array) -> Callable[[Array], Array]:
    """``x -> f(x* + Q (x - o))``: minimum ``f(x*)`` at ``o``."""
    return lambda X: f(x_star + (X - o) @ Q.T)


class _AdditiveNoise:
    """``f`` plus N(0, ``sigma``^2): the k-th evaluation (counted from 0 over this object's
    life) draws its noise from the generator seeded by ``(*key, k)``."""

    def __init__(self, f: Callable[[Array], Array], sigma: float, key: list[int]) -> None:
        self.f, self.sigma, self.key, self.count = f, sigma, key, 0

    def __call__(self, X: Array) -> Array:
        draws = np.array([np.random.default_rng([*self.key, self.count + i]).standard_normal()
                          for i in range(len(X))])
        self.count += len(X)
        return self.f(X) + self.sigma * draws
