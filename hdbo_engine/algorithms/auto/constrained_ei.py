"""Auto's constrained-EI arm (``"cei"``).

Once constraints were told and a feasible point has a finite value, this arm takes part in
the choice with a record of its own: it proposes the maximiser of ``log EI(x) + log PoF(x)``
(:func:`~hdbo_engine.constraints.constrained_ei`; Schonlau, Welch & Jones 1998; Gardner et
al., ICML 2014) in the box of half-width ``r`` around the feasible incumbent. ``r``
(:meth:`ConstrainedEIArm.radius`) starts at :data:`CEI_RADIUS` [0.1], doubles on a success
up to :data:`CEI_MAX_RADIUS` [0.2] and halves after :data:`CEI_FAILURES` [2] failures in a
row down to :data:`CEI_MIN_RADIUS` [1e-6], read from the told metas. Its proposals pass the
shared proposal step like the members'; their metas carry ``"radius"``.

Departure from the members' design: under constraints most of their proposals are steered,
which gives up their own acquisition's choice; this arm's acquisition weighs feasibility
itself [constraints.md#constrained-ei].
"""

from __future__ import annotations

import numpy as np

from ...base import Optimizer
from ...constraints import constrained_ei, constraint_models, has_feasible_value, steer
from .arm import KEY, OwnArm, outcomes

CEI = "cei"  # the arm's name in metas and records
CEI_RADIUS, CEI_MAX_RADIUS, CEI_MIN_RADIUS = 0.1, 0.2, 1e-6  # its box's half-width
CEI_FAILURES = 2  # failures in a row that halve the box


class ConstrainedEIArm(OwnArm):
    """Constrained expected improvement around the feasible incumbent (module docstring)."""

    name = CEI

    def eligible(self, auto: Optimizer) -> bool:
        return auto._c is not None and has_feasible_value(auto._y, auto._c)

    def radius(self, auto: Optimizer) -> float:
        """Half-width of the arm's box, replayed from its told proposals' successes."""
        radius, failures = CEI_RADIUS, 0
        for success in outcomes(auto).get(CEI, []):
            if success:
                radius, failures = min(2.0 * radius, CEI_MAX_RADIUS), 0
            else:
                failures += 1
                if failures == CEI_FAILURES:
                    radius, failures = max(0.5 * radius, CEI_MIN_RADIUS), 0
        return radius

    def make(self, auto: Optimizer, n: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, dict]]:
        incumbent, value = auto.best
        radius = self.radius(auto)
        models = constraint_models(auto._X, auto._c, incumbent)
        points = constrained_ei(auto._X, auto.model_values, models, incumbent, value, radius,
                                auto.pending, n, rng)
        made = [(x, {KEY: CEI, "radius": radius}) for x in points]
        return steer(auto._X, auto._c, incumbent, made, rng, models)
