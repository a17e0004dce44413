"""A trust region around the incumbent that grows on success and shrinks on failure.

The rule of TuRBO (Eriksson, Pearce, Gardner, Turner, Poloczek, "Scalable
Global Optimization via Local Bayesian Optimization", NeurIPS 2019, Sec. 2):
a hyper-rectangle of side ``length`` (in unit-cube coordinates) centred on the
best point so far. After ``success_tol`` consecutive improvements the side
doubles (at most ``length_max``); after ``failure_tol`` consecutive
non-improvements it halves. When it falls below ``length_min`` the region
*restarts*: TuRBO then discards its data and draws a new design; here the
side returns to ``length_init`` around the same incumbent and the algorithm
keeps its global model, which then knows the collapsed neighbourhood (a
restart counter is kept for diagnostics).

None of the four papers has a trust region; the engine algorithms use this
one, optionally, to confine their acquisition search (the "practical"
preset), which measured better at D >= 100 with a few hundred evaluations
(each algorithm's docstring gives its numbers).

An improvement is a finite value below the best observed value minus
``1e-3 |best|`` (TuRBO's threshold). Only model-based proposals count: told
points whose meta marks them as the initial design are skipped, so the
region's state is a function of the told history and the metas, and an
optimizer rebuilt from its history has the same region.

Ties [``skip_ties=True``; TuRBO has no such rule]: a told value *exactly*
equal to the best so far is neither a success nor a failure. Such a move
changed nothing the objective sees: it moved only coordinates the objective
ignores (an inactive parameter, Hartmann6 scattered in 300-D) or an integer
parameter that rounds back to the incumbent's value, and says nothing about
the step length. Counted as failures, these flat moves halved the region on
``hd``'s scattered Hartmann6 (D = 300, 6 active coordinates) down to side
0.0125 by evaluation 240, so that a move in the active coordinates was then
too short to leave the incumbent's basin (CobBO, seed 1: best -1.087 at 240).
On a problem without exact ties nothing changes: CobBO on shifted Ackley
(seed 0, 250 evaluations) and BKB on rover (seed 0, 300) reproduce their
committed ``hd`` cells exactly, and no cell of our four on ``hd``, ``d100``
or ``bbob`` repeats its best value after the initial design except on the
two Hartmann6 problems and LunarLander. Measured there (session 18,
``hdbo bench`` on those groups, seeds 0-2 on ``hd``, 0-4 on ``d100``, against
the committed cells), median before -> after: scattered Hartmann6, BKB
-3.3170 -> -3.3205 (all three seeds better), GO-UCB -3.3218 -> -3.3187 (seed
0 -3.3218 -> -3.3118), MS-UCB -3.3220 unchanged (its proposals never tie);
``d100``'s Hartmann6 BKB -3.3214 -> -3.3213, GO-UCB -3.3222 -> -3.3218,
MS-UCB unchanged; LunarLander unchanged for all three. CobBO, with its flat
backoff: the ``cobbo`` module docstring, "Flat blocks".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class TrustRegion:
    """TuRBO's success/failure rule on a box of side ``length`` around the incumbent.

    Defaults: ``length_init`` 0.8, ``length_min`` 2^-7, ``length_max`` 1.6,
    ``success_tol`` 3 (TuRBO's), ``failure_tol`` [TuRBO: ``max(4, D)``; the
    engine algorithms pass their own, see their docstrings], ``skip_ties``
    True (module docstring: a value equal to the best is not counted).
    """

    dim: int
    failure_tol: int
    success_tol: int = 3
    length_init: float = 0.8
    length_min: float = 2.0**-7
    length_max: float = 1.6
    skip_ties: bool = True
    length: float = field(init=False)
    successes: int = field(default=0, init=False)
    failures: int = field(default=0, init=False)
    restarts: int = field(default=0, init=False)
    best: float = field(default=np.inf, init=False)

    def __post_init__(self) -> None:
        if self.failure_tol < 1 or self.success_tol < 1:
            raise ValueError("failure_tol and success_tol must be >= 1")
        if not 0 < self.length_min <= self.length_init <= self.length_max:
            raise ValueError("expected 0 < length_min <= length_init <= length_max")
        self.length = self.length_init

    def observe(self, y: np.ndarray, metas: list[dict[str, Any]]) -> None:
        """Update with told values in order; initial-design points only move ``best``."""
        for value, meta in zip(np.asarray(y, dtype=float), metas, strict=True):
            improved = bool(np.isfinite(value) and value < self.best - 1e-3 * abs(self.best))
            tie = self.skip_ties and value == self.best  # a flat move (module docstring)
            if np.isfinite(value):
                self.best = min(self.best, float(value))
            if meta.get("init") or tie:
                continue
            if improved:
                self.successes, self.failures = self.successes + 1, 0
            else:
                self.successes, self.failures = 0, self.failures + 1
            if self.successes >= self.success_tol:
                self.length, self.successes = min(2.0 * self.length, self.length_max), 0
            elif self.failures >= self.failure_tol:
                self.length, self.failures = self.length / 2.0, 0
                if self.length < self.length_min:
                    self.length, self.restarts = self.length_init, self.restarts + 1

    def bounds(self, centre: np.ndarray, weights: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The region around ``centre`` clipped to the unit cube: ``(lower, upper)``.

        ``weights`` (D,) stretch the sides (TuRBO uses the GP lengthscales
        normalised to geometric mean 1); ``None`` gives a cube.
        """
        half = 0.5 * self.length * (np.ones(self.dim) if weights is None else weights)
        return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def perturbation_candidates(centre: np.ndarray, lower: np.ndarray, upper: np.ndarray, n: int,
                            rng: np.random.Generator) -> np.ndarray:
    """TuRBO's candidate set: ``n`` copies of ``centre``, each coordinate redrawn uniformly in
    ``[lower, upper]`` with probability ``min(1, 20 / D)`` and at least one per candidate."""
    dim = len(centre)
    mask = rng.random((n, dim)) < min(1.0, 20.0 / dim)
    mask[np.arange(n), rng.integers(0, dim, n)] = True
    return np.where(mask, lower + (upper - lower) * rng.random((n, dim)), centre)
