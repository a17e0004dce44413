"""Auto's evolution-strategy arm (``"es"``), for a design whose probes found no effect.

Where the design ended early because its probes found no effect
(:meth:`EvolutionArm.eligible`), this arm takes part in the choice with a record of its own.
It proposes the incumbent plus ``sigma * N(0, I)``, every coordinate moved, reflected into
the unit cube: a Gaussian step is blind to the coordinates the objective ignores, so it
searches the few that matter as if they were all there were. ``sigma``
(:meth:`EvolutionArm.state`) follows the (1+1)-ES's one-fifth success rule,
``sigma <- sigma exp((1[success] - 1/5) / 2.4)`` (e^(1/3) up, e^(-1/12) down; Auger &
Hansen, arXiv:1310.8397), from :data:`ES_SIGMA` [0.2], at most :data:`ES_MAX_SIGMA` [0.5].
Below :data:`ES_MIN_SIGMA` [0.2 / 128] the arm restarts, as TuRBO's regions do: its next
proposal is a uniform point (meta ``"start"``), and from then on its parent is the best point
of the restarted search and a success beats that search's best. All of it is read from the
told metas (``"sigma"``, ``"restarts"``).

Departure from the (1+1)-ES: before the first restart the parent is Auto's incumbent, which
any arm may have moved [auto.md#flat-design].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...base import Optimizer
from ...constraints import steer
from .arm import KEY, OwnArm

ES = "es"  # the arm's name in metas and records
ES_SIGMA, ES_MAX_SIGMA = 0.2, 0.5  # its step's standard deviation: first, largest
ES_MIN_SIGMA = ES_SIGMA * 2.0**-7  # below this the arm restarts from a uniform point
ES_START = "start"  # meta key of a restart's uniform first point
ES_UP, ES_DOWN = np.exp(1.0 / 3.0), np.exp(-1.0 / 12.0)  # the 1/5 rule's factors


@dataclass(frozen=True)
class EsState:
    """The arm's state: ``sigma``, the number of ``restarts`` so far, and the ``parent`` of a
    restarted search (None: Auto's incumbent before the first restart, a uniform start after
    one until the start is told)."""

    sigma: float
    restarts: int
    parent: np.ndarray | None


class EvolutionArm(OwnArm):
    """A (1+1) evolution strategy with restarts (module docstring)."""

    name = ES

    def eligible(self, auto: Optimizer) -> bool:
        """Whether the design ended early because its probes found no effect (base module:
        :meth:`~hdbo_engine.design.InitialDesign._design_length`)."""
        return auto._design_length() < auto.n_init

    def state(self, auto: Optimizer) -> EsState:
        """Step size, restart count and parent, replayed from the told history."""
        sigma, chain, chain_best, parent = ES_SIGMA, 0, np.inf, None
        best = np.inf
        for x, y, ok, meta in zip(auto._X, auto._y, auto.feasible, auto._metas, strict=True):
            finite = bool(ok and np.isfinite(y))
            if meta.get(KEY) == ES:
                success = finite and y < (best if chain == 0 else chain_best)
                if chain and finite and y < chain_best:
                    chain_best, parent = float(y), x
                if not meta.get(ES_START):
                    sigma = min(sigma * ES_UP, ES_MAX_SIGMA) if success else sigma * ES_DOWN
                if sigma < ES_MIN_SIGMA:
                    sigma, chain, chain_best, parent = ES_SIGMA, chain + 1, np.inf, None
            if finite:
                best = min(best, float(y))
        return EsState(sigma, chain, None if parent is None else parent.copy())

    def make(self, auto: Optimizer, n: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, dict]]:
        """The parent plus a Gaussian step in every coordinate, reflected into the unit cube,
        or a restart's uniform start."""
        state = self.state(auto)
        meta = {KEY: ES, "sigma": state.sigma, "restarts": state.restarts}
        if state.restarts and state.parent is None:
            made = [(rng.random(auto.dim), {**meta, ES_START: True}) for _ in range(n)]
        else:
            parent = auto.best[0] if state.parent is None else state.parent
            made = []
            for _ in range(n):
                x = np.mod(parent + state.sigma * rng.standard_normal(auto.dim), 2.0)
                made.append((np.where(x > 1.0, 2.0 - x, x), dict(meta)))
        if auto._c is not None:
            return steer(auto._X, auto._c, auto.best[0], made, rng)
        return made
