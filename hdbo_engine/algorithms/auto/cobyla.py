"""Auto's COBYLA phase, for budgets of few evaluations per dimension.

With a budget below :data:`COBYLA_PER_DIM` [10] evaluations per effective dimension (the
n = 10 d sample size below which a GP is not expected to fit a function of d inputs; Loeppky,
Sacks & Welch, Technometrics 51(4), 2009), where the effective dimension
(:func:`effective_dim`) is D times the share of the design's probed coordinates whose axis
probes changed the value, at most :data:`~hdbo_engine.algorithms.auto.members.LARGE_D`
columns, every dimension Real, no constraints, and no noise declared or observed
(:meth:`CobylaArm.active`), each model ask of one point is claimed by COBYLA (Powell 1994;
SciPy's PRIMA implementation, :class:`~hdbo_engine.cobyla.AskTellCobyla`): linear models of
the objective on a simplex inside a trust region, started from the best told point with a
radius of :data:`COBYLA_RHOBEG` [1/6 of the box] that shrinks to 1e-8 (both radii the paper
leaves to the user); its run ends there or after ``budget`` values. Its proposals carry
``{"algorithm": "cobyla", "x0": i}``, ``i`` the index of its start; the told values of its
points are fed back in told order (a NaN or infinite value as the largest finite value fed
so far). When its run ends, the other arms take their turns; the members take its points
as a start they share, like the design's (:attr:`CobylaArm.shared_start`, :mod:`.members`),
so each searches on from COBYLA's best point. A batch ask, or one while a COBYLA point is
pending, goes to the choice. Alone (Auto's ``arms=("cobyla",)``, the part
``hdbo bench`` runs as ``auto-cobyla``), COBYLA takes every unconstrained single ask,
whatever the budget, and when a run ends the next starts from the incumbent; a restarted
run's points carry ``"run": k``.

Departure from the portfolio: COBYLA is not an arm chosen by its record, since its first D
steps build its simplex and seldom improve on the design's best
[auto.md#few-evaluations-per-dimension].
"""

from __future__ import annotations

import numpy as np

from ...base import Optimizer, Proposal
from ...cobyla import AskTellCobyla
from ...constraints import best_index
from ...space import Real
from ...util import is_int
from .arm import KEY, Arm
from .members import LARGE_D
from .noise import is_noisy

COBYLA = "cobyla"  # the arm's name in metas
COBYLA_X0 = "x0"  # meta key of a COBYLA point: the index of the told point its run starts from
COBYLA_RUN = "run"  # meta key of a restarted run's points: the run's number (from 1)
COBYLA_PER_DIM = 10  # budgets below this many evaluations per dimension run the COBYLA phase
COBYLA_RHOBEG = 1.0 / 6.0  # COBYLA's first trust-region radius, in unit-cube widths


def effective_dim(opt: Optimizer) -> float | None:
    """``D`` times the share of the design's probed coordinates whose axis probes changed
    the value (:meth:`~hdbo_engine.design.InitialDesign._design_effects`): how many
    coordinates the objective depends on, as the design saw it; None before the design ends
    or when it probed no coordinate."""
    end = opt._design_end()
    if end is None:
        return None
    _, probed, changed = opt._design_effects(end)
    if not probed.any():
        return None
    return opt.dim * float(changed[probed].mean())


class _CobylaCache:
    """The live solver, kept between asks; it is a cache of what the told history
    determines, so a copy or a pickle starts empty and replays."""

    def __init__(self) -> None:
        self.run: AskTellCobyla | None = None
        self.x0: np.ndarray = np.empty(0)
        self.fed: list[float] = []  # the told values fed, in told order (before replacement)
        self.known: dict[bytes, float] = {}  # the points the run was given values for
        self.worst = -np.inf  # the largest finite value fed

    def __reduce__(self) -> tuple:
        return (_CobylaCache, ())


class CobylaArm(Arm):
    """COBYLA from the design's best point, claiming single asks in its phase (module
    docstring); ``noisy`` is Auto's option."""

    name = COBYLA
    shared_start = True  # the members search on from its points (module docstring)

    def __init__(self, noisy: bool | None, *, alone: bool = False) -> None:
        self.noisy = noisy
        self.alone = alone
        self._cache = _CobylaCache()

    def eligible(self, auto: Optimizer) -> bool:
        return False  # it claims asks in its phase and is never chosen

    def active(self, auto: Optimizer) -> bool:
        """Whether single model asks go to COBYLA (module docstring). The phase ends with
        COBYLA's run. Alone, COBYLA takes every unconstrained ask."""
        if self.alone or auto._c is not None:
            return auto._c is None
        if auto.budget is None or auto.dim > LARGE_D:
            return False
        if any(type(d) is not Real for d in auto.space.dimensions):
            return False
        d_eff = effective_dim(auto)
        if d_eff is None or auto.budget >= COBYLA_PER_DIM * d_eff:
            return False
        return not is_noisy(auto, self.noisy)

    def claim(self, auto: Optimizer, rng: np.random.Generator) -> Proposal | None:
        if not self.active(auto) or any(p.meta.get(KEY) == COBYLA for p in auto._pending):
            return None
        run = max((m.get(COBYLA_RUN, 0) for m in auto._metas if m.get(KEY) == COBYLA),
                  default=0)
        made = self.next_point(auto, run)
        if made is None and self.alone:  # a new run from the incumbent
            run += 1
            made = self.next_point(auto, run)
        if made is None:
            return None
        x, start = made
        meta = {KEY: COBYLA, COBYLA_X0: start}
        return auto._accept(x, {**meta, COBYLA_RUN: run} if run else meta, rng)

    def next_point(self, auto: Optimizer, run: int = 0) -> tuple[np.ndarray, int] | None:
        """COBYLA's next point in run number ``run`` and the index of the told point that
        run starts from, replayed from the told values of the run's points (the live solver
        is reused while the history extends the one it was fed); None once the run has
        ended."""
        rows = [i for i, m in enumerate(auto._metas)
                if m.get(KEY) == COBYLA and m.get(COBYLA_RUN, 0) == run]
        start = auto._metas[rows[0]].get(COBYLA_X0) if rows else best_index(auto._y, None)
        if not is_int(start) or not 0 <= start < auto.n_told or not np.isfinite(auto._y[start]):
            return None  # a history whose COBYLA points name no usable start
        start = int(start)
        values = [float(auto._y[i]) for i in rows]
        cache = self._cache
        if (cache.run is None or not np.array_equal(cache.x0, auto._X[start])
                or not np.array_equal(cache.fed, values[:len(cache.fed)], equal_nan=True)):
            self._cache = cache = _CobylaCache()
            cache.x0 = auto._X[start].copy()
            cache.run = AskTellCobyla(cache.x0, rhobeg=COBYLA_RHOBEG, max_evals=auto.budget)
            cache.known[cache.x0.tobytes()] = cache.worst = float(auto._y[start])
        run = cache.run
        while run.point is not None:
            key = run.point.tobytes()
            if key in cache.known:  # its start, or a point it was given a value for
                run.tell(cache.known[key])
                continue
            if len(cache.fed) == len(values):
                return run.point.copy(), start
            told = values[len(cache.fed)]
            cache.fed.append(told)
            if np.isfinite(told):
                cache.worst = max(cache.worst, told)
            value = told if np.isfinite(told) else cache.worst  # a failure: the worst fed
            cache.known[key] = value
            run.tell(value)
        return None

    def ask(self, auto: Optimizer, n: int, rng: np.random.Generator,
            salt: int | None) -> list[Proposal]:
        raise RuntimeError("COBYLA is never chosen; it claims asks in its phase")

