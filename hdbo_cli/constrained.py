"""Constrained benchmark problems (minimisation; feasible where every constraint value is <= 0).

Each is a :class:`~hdbo_cli.functions.Problem` whose ``c`` returns the constraint values
(n, m), built by :func:`hdbo_cli.problems.make_problem` under its name.

* ``keane_bump`` (any D >= 2): Keane's bump function (A. J. Keane, "Experiences with
  optimizers in structural design", Proc. Conf. Adaptive Computing in Engineering Design and
  Control, 1994), maximised there; we minimise its negative on ``[0, 10]^D``:

      f(x) = -| (sum_i cos^4 x_i - 2 prod_i cos^2 x_i) / sqrt(sum_i i x_i^2) |,
      c_1(x) = 0.75 - prod_i x_i <= 0,     c_2(x) = sum_i x_i - 7.5 D <= 0

  (Keane writes the second bound as 15 D / 2).

  The true optimum is unknown. Best known values (S. K. Mishra, "Minimization of Keane's bump
  function by the repulsive particle swarm and the differential evolution methods", MPRA
  paper 3098, 2007, by differential evolution; BoTorch's ``KeaneBumpFunction`` tabulates
  them): -0.803619104 at D = 20 (the best Keane knew of), -0.818056222 at D = 30,
  -0.826624404 at D = 40, -0.83078783 at D = 50; we know of none at D = 100.
  ``info["best_known"]`` carries the value where there is one; ``f_min`` is ``None``. The
  optimum lies on the boundary of ``c_1``; at D = 100 the product spans many orders of
  magnitude, as in the definition.
* ``scbo_ackley`` (D >= 10): the 10-D Ackley function of SCBO's experiments (D. Eriksson and
  M. Poloczek, "Scalable constrained Bayesian optimization", AISTATS 2021, arXiv 2002.08526,
  Sec. 5) on ``[-5, 10]^10`` with two constraints,

      c_1(x) = sum_i x_i <= 0,     c_2(x) = ||x||_2 - 5 <= 0,

  minimum 0 at ``x = 0`` (feasible). For D > 10 the 10 active coordinates are drawn from the
  seed (``info["coordinates"]``); the other D - 10 are ignored (box ``[-5, 10]`` too).
* ``speed_reducer`` (D = 7): Golinski's speed reducer, weight minimisation with 11
  constraints, as defined by A. C. C. Lemonge, H. J. C. Barbosa, C. C. H. Borges and F. B. S.
  Silva, "Constrained optimization problems in mechanical engineering design using a
  real-coded steady-state genetic algorithm", Mecanica Computacional 29, 2010. Variables: face
  width ``x1 in [2.6, 3.6]``, module ``x2 in [0.7, 0.8]``, number of teeth ``x3 in [17, 28]``,
  shaft lengths ``x4 in [7.3, 8.3]``, ``x5 in [7.8, 8.3]``, shaft diameters
  ``x6 in [2.9, 3.9]``, ``x7 in [5.0, 5.5]``. Best known: 2996.3482 at
  ``(3.5, 0.7, 17, 7.3, 7.8, 3.350215, 5.286683)``. The number of teeth is relaxed to a real
  (as in BoTorch's ``SpeedReducer``); the optimum has it at its bound, 17.
"""

from __future__ import annotations

import numpy as np

from .functions import Array, Problem, ackley, instance_rng

#: Constrained problem name -> its number of constraints.
CONSTRAINED = {"keane_bump": 2, "scbo_ackley": 2, "speed_reducer": 11}
#: Mishra (2007)'s best known Keane bump values (module docstring), by dimension.
KEANE_BEST_KNOWN = {20: -0.803619104, 30: -0.818056222, 40: -0.826624404, 50: -0.83078783}
SCBO_ACKLEY_DIM = 10
SPEED_REDUCER_LOWER = np.array([2.6, 0.7, 17.0, 7.3, 7.8, 2.9, 5.0])
SPEED_REDUCER_UPPER = np.array([3.6, 0.8, 28.0, 8.3, 8.3, 3.9, 5.5])
SPEED_REDUCER_BEST = (2996.3482, np.array([3.5, 0.7, 17.0, 7.3, 7.8, 3.350215, 5.286683]))


def keane_bump(X: Array) -> Array:
    """Minus Keane's bump function (module docstring) of each row of ``X`` (n, D)."""
    cos = np.cos(X)
    numerator = (cos**4).sum(1) - 2.0 * (cos**2).prod(1)
    denominator = np.sqrt((np.arange(1, X.shape[1] + 1) * X**2).sum(1))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = -np.abs(numerator / denominator)
    return np.where(denominator > 0, value, 0.0)


def keane_bump_constraints(X: Array) -> Array:
    """``(0.75 - prod x_i, sum x_i - 7.5 D)`` per row."""
    return np.stack([0.75 - X.prod(1), X.sum(1) - 7.5 * X.shape[1]], axis=1)


def scbo_ackley_constraints(X: Array) -> Array:
    """``(sum x_i, ||x||_2 - 5)`` per row of the active coordinates ``X`` (n, 10)."""
    return np.stack([X.sum(1), np.linalg.norm(X, axis=1) - 5.0], axis=1)


def speed_reducer(X: Array) -> Array:
    """Weight of the speed reducer (module docstring) per row of ``X`` (n, 7)."""
    x1, x2, x3, x4, x5, x6, x7 = X.T
    return (0.7854 * x1 * x2**2 * (3.3333 * x3**2 + 14.9334 * x3 - 43.0934)
            - 1.508 * x1 * (x6**2 + x7**2) + 7.4777 * (x6**3 + x7**3)
            + 0.7854 * (x4 * x6**2 + x5 * x7**2))


def speed_reducer_constraints(X: Array) -> Array:
    """Lemonge et al.'s eleven constraints ``g_j(x) <= 0`` per row of ``X`` (n, 7): bending
    and contact stress of the teeth (g1, g2), shaft deflections (g3, g4) and stresses (g5,
    g6), geometry (g7-g9) and shaft design (g10, g11)."""
    x1, x2, x3, x4, x5, x6, x7 = X.T
    return np.stack([
        27.0 / (x1 * x2**2 * x3) - 1,
        397.5 / (x1 * x2**2 * x3**2) - 1,
        1.93 * x4**3 / (x2 * x3 * x6**4) - 1,
        1.93 * x5**3 / (x2 * x3 * x7**4) - 1,
        np.sqrt((745.0 * x4 / (x2 * x3)) ** 2 + 16.9e6) / (110.0 * x6**3) - 1,
        np.sqrt((745.0 * x5 / (x2 * x3)) ** 2 + 157.5e6) / (85.0 * x7**3) - 1,
        x2 * x3 / 40.0 - 1,
        5.0 * x2 / x1 - 1,
        x1 / (12.0 * x2) - 1,
        (1.5 * x6 + 1.9) / x4 - 1,
        (1.1 * x7 + 1.9) / x5 - 1,
    ], axis=1)


def make_constrained(name: str, dim: int, seed: int = 0) -> Problem:
    """The constrained problem ``name`` (a key of :data:`CONSTRAINED`) at dimension ``dim``;
    ``seed`` picks ``scbo_ackley``'s active coordinates."""
    m = CONSTRAINED[name]
    if name == "keane_bump":
        if dim < 2:
            raise ValueError(f"dim: keane_bump needs dim >= 2, got {dim}")
        info = {"best_known": KEANE_BEST_KNOWN.get(dim)}
        return Problem(name, dim, np.zeros(dim), np.full(dim, 10.0), keane_bump, None, None,
                       info, c=keane_bump_constraints, n_constraints=m)
    if name == "scbo_ackley":
        k = SCBO_ACKLEY_DIM
        if dim < k:
            raise ValueError(f"dim: scbo_ackley is embedded and needs dim >= {k}, got {dim}")
        coords = np.sort(instance_rng(name, seed).choice(dim, k, replace=False))
        x_min = np.zeros(dim)
        return Problem(name, dim, np.full(dim, -5.0), np.full(dim, 10.0),
                       lambda X: ackley(X[:, coords]), 0.0, x_min,
                       {"instance_seed": seed, "coordinates": coords.tolist()},
                       c=lambda X: scbo_ackley_constraints(X[:, coords]), n_constraints=m)
    if dim != 7:
        raise ValueError(f"dim: speed_reducer has 7 variables, got dim={dim}")
    value, x_best = SPEED_REDUCER_BEST
    return Problem(name, dim, SPEED_REDUCER_LOWER.copy(), SPEED_REDUCER_UPPER.copy(),
                   speed_reducer, value, x_best.copy(), {}, c=speed_reducer_constraints,
                   n_constraints=m)
