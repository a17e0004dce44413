"""A trust region around the incumbent that grows on success and shrinks on failure.

The rule of TuRBO (Eriksson, Pearce, Gardner, Turner, Poloczek, "Scalable
Global Optimization via Local Bayesian Optimization", NeurIPS 2019, Sec. 2):
a hyper-rectangle of side ``length`` (in unit-cube coordinates) centred on the
best point so far. After ``success_tol`` [3] consecutive improvements the side
doubles (at most ``length_max`` [1.6]); after ``failure_tol`` consecutive
non-improvements it halves. An improvement is a finite value below the best
observed value minus ``1e-3 |best|`` (TuRBO's threshold). TuRBO's candidates,
the incumbent with each coordinate redrawn in the region with probability
``min(1, 20 / D)``, are :func:`perturbation_candidates`; the box an algorithm searches,
the trust region's or the whole cube, is :func:`search_box`.

None of the four papers has a trust region; the engine algorithms use this one
in their "practical" preset to confine their acquisition search.

Departures from TuRBO, one line each; the section of
``docs/algorithms/trust-region.md`` that gives the reason and the measurement is
in brackets:

* Below ``length_min`` [2^-7] the side returns to ``length_init`` [0.8] around the same
  incumbent and the global model is kept [#restart].
* Initial-design points (meta ``init``) are not counted [#only-model-proposals-count]; nor
  are points another algorithm proposed on a shared history, which the owner does not pass
  (``hdbo_engine.base``, "Points of other proposers") [#other-proposers].
* The algorithms pass their own ``failure_tol`` (TuRBO: ``max(4, D)``) [#failure-tolerance].
* ``skip_ties=True``: a value exactly equal to the best is neither a success nor a
  failure [#ties].
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
        return _clipped_box(centre, half)


def search_box(dim: int, centre: np.ndarray | None = None,
               trust_region: TrustRegion | None = None, radius: float | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The box ``(lower, upper)`` an acquisition is maximised in, around ``centre``.

    The trust region's cube (side ``trust_region.length``) when there is one, else the cube
    of half-side ``radius``, each clipped to the unit cube; the whole cube ``[0, 1]^dim``
    when ``centre`` is None or neither is given. ``dim`` is the length of ``centre``, which
    may be a block of coordinates (CobBO's) rather than the trust region's ``dim``.
    """
    if centre is not None:
        half = 0.5 * trust_region.length if trust_region is not None else radius
        if half is not None:
            return _clipped_box(centre, float(half))
    return np.zeros(dim), np.ones(dim)


def _clipped_box(centre: np.ndarray, half: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[centre - half, centre + half]`` clipped to the unit cube."""
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def perturbation_candidates(centre: np.ndarray, lower: np.ndarray, upper: np.ndarray, n: int,
                            rng: np.random.Generator) -> np.ndarray:
    """TuRBO's candidate set: ``n`` copies of ``centre``, each coordinate redrawn uniformly in
    ``[lower, upper]`` with probability ``min(1, 20 / D)`` and at least one per candidate."""
    dim = len(centre)
    mask = rng.random((n, dim)) < min(1.0, 20.0 / dim)
    mask[np.arange(n), rng.integers(0, dim, n)] = True
    return np.where(mask, lower + (upper - lower) * rng.random((n, dim)), centre)
