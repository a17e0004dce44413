"""The initial design every engine algorithm shares: the centre, Hooke and Jeeves' axis pass
and a line search along its slopes (``docs/algorithms/initial-design.md``).

* ``"uniform"``: uniform draws after the centre (the papers' designs).
* ``"axis"``: the exploratory move of Hooke and Jeeves' pattern search ("Direct search
  solution of numerical and statistical problems", J. ACM 8, 1961): the coordinates in an
  order drawn from ``seed``, each probed at the best told point plus a step of
  ``AXIS_STEP`` [1/6 of the side] times a factor from U(0.75, 1.25) drawn once per coordinate
  and, when that is not an improvement, minus it [initial-design.md#the-axis-pass].
* Batches: where several probes stepped from one base point (a batch, or asks with points
  pending) and two or more coordinates improved on it, the next design point makes every
  improving move at once (the best probe per coordinate; meta ``{"combined": i}``, ``i`` the
  base's row), and probes asked with it step from it: one at a time, the base moves with
  each improvement [initial-design.md#batches].
* Line search (``line_search``, with the axis design): steps ``LINE_STEPS`` along minus the
  pass's finite-difference slopes from the best point, until a long step fails after one
  improved [initial-design.md#line-search-after-the-design].
* Size: :func:`design_size` [initial-design.md#the-axis-pass]; the design ends early when
  the centre and the pass's first ``FLAT_COORDINATES`` [10] coordinates all return one value
  (:meth:`InitialDesign._design_length`) [initial-design.md#when-the-probes-find-nothing].

Every design point is a function of the told history, the metas and the pending points, so
a rebuilt optimizer continues the design exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .constraints import best_index
from .streams import DESIGN_AXIS
from .util import is_int

if TYPE_CHECKING:
    from .base import Proposal
    from .options import Options

INIT_DESIGNS = ("uniform", "axis")
AXIS_STEP = 1.0 / 6.0  # side fraction of one axis probe
AXIS_JITTER = 0.25  # a coordinate's step: AXIS_STEP times U(1 - AXIS_JITTER, 1 + AXIS_JITTER)
LINE_STEPS = (1 / 6, 1 / 3, 2 / 3, 1 / 12, 1 / 24)  # the line search's steps (side fractions)
DEFAULT_HORIZON = 100  # the budget every algorithm assumes when none is given
FLAT_COORDINATES = 10  # an axis pass whose first this many coordinates change nothing ends
COMBINED = "combined"  # meta key of a batch's combined move: the index of its probes' base


def design_size(design: str, uniform_size: int, dim: int, budget: int | None) -> int:
    """Initial design size: ``uniform_size`` for ``"uniform"``; for ``"axis"``, room for the
    centre and both probes of every coordinate up to a quarter of the budget (of
    ``DEFAULT_HORIZON`` when it is unknown), and never less than ``uniform_size``:
    ``max(uniform_size, min(2 dim + 1, budget // 4))``."""
    if design != "axis":
        return int(uniform_size)
    return int(max(uniform_size, min(2 * dim + 1, (budget or DEFAULT_HORIZON) // 4)))


class InitialDesign:
    """The design's proposals, mixed into :class:`hdbo_engine.base.Optimizer` (which holds
    the history these read: ``_X``, ``_y``, ``_metas``, ``_pending``)."""

    dim: int
    seed: int
    n_told: int
    options: Options
    n_init: int
    line_search: bool
    _X: np.ndarray
    _y: np.ndarray
    _metas: list[dict[str, Any]]
    _pending: list[Proposal]
    _c: np.ndarray | None
    _axis: tuple[np.ndarray, np.ndarray] | None

    def _design_point(self, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
        """The next initial-design point and its meta."""
        if self.options.init_centre and self.n_told == 0 and not self._pending:
            return np.full(self.dim, 0.5), {"init": True, "centre": True}
        use_axis = self.options.init_design == "axis"
        probe = (self._combined_move() or self._axis_probe()) if use_axis else None
        return probe if probe is not None else (rng.random(self.dim), {"init": True})

    def _combined_move(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The point that makes every improving probe of the last told batch of axis probes
        at once, or None [initial-design.md#batches]: the probes stepped from one base point,
        and two or more coordinates improved on it; asked once, before the next probe."""
        if any("axis" in p.meta or COMBINED in p.meta for p in self._pending):
            return None
        base, moves = self._last_probe_base()
        if base is None or len(moves) < 2 or any(m.get(COMBINED) == base for m in self._metas):
            return None
        x = self._X[base].copy()
        for j, value in moves.items():
            x[j] = value
        return x, {"init": True, COMBINED: base}

    def _last_probe_base(self) -> tuple[int | None, dict[int, float]]:
        """The told point the last told axis probe stepped from, and per coordinate the value
        of the best probe from that point that improved on it."""
        X, y, metas = self._X, self._y, self._metas
        rows = [i for i, m in enumerate(metas) if "axis" in m]
        if not rows:
            return None, {}
        order = self._axis_plan()[0]
        last = rows[-1]
        k = metas[last]["axis"][0]
        same = [b for b in self._stepped_from(last, int(order[k]))
                if metas[b].get("axis", [None])[0] != k]
        if not same or not np.isfinite(y[same[-1]]):
            return None, {}
        base = int(same[-1])
        best: dict[int, tuple[float, float]] = {}
        for i in rows:
            j = int(order[metas[i]["axis"][0]])
            if (i > base and np.isfinite(y[i]) and y[i] < y[base] and X[i, j] != X[base, j]
                    and np.array_equal(np.delete(X[i], j), np.delete(X[base], j))
                    and (j not in best or y[i] < best[j][0])):
                best[j] = (float(y[i]), float(X[i, j]))
        return base, {j: v for j, (_, v) in best.items()}

    def _stepped_from(self, i: int, j: int) -> np.ndarray:
        """The rows before ``i`` equal to row ``i`` (to 1e-12) in every coordinate but ``j`` and
        different in ``j``: the told points the axis probe in row ``i`` may have stepped from."""
        X = self._X
        others = np.delete(X[:i], j, axis=1)
        return np.flatnonzero((np.abs(others - np.delete(X[i], j)) <= 1e-12).all(axis=1)
                              & (X[:i, j] != X[i, j]))

    def _axis_probe(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The next point of the exploratory move along the axes
        [initial-design.md#the-axis-pass], or None when every coordinate has been probed or
        there is no base point yet."""
        best = self.best
        combined = [p.x for p in self._pending if COMBINED in p.meta]
        if combined:
            base = combined[-1]  # pending in this batch: the probes step from it
        elif best is not None:
            base = best[0]
        elif self.options.init_centre and self._pending:
            base = np.full(self.dim, 0.5)  # the centre, pending in this batch
        else:
            return None
        told = [m["axis"] for m in self._metas if "axis" in m]
        issued = told + [p.meta["axis"] for p in self._pending if "axis" in p.meta]
        if not issued:
            k, sign = 0, 1
        else:
            k, sign = issued[-1]
            # the last probe improved if it is told and is now the best told point
            improved = len(issued) == len(told) and best is not None and (
                self._metas[best_index(self._y, None)].get("axis") == [k, sign])
            k, sign = (k, -1) if sign == 1 and not improved else (k + 1, 1)
        base = self.space.snap(base)[0]
        order, scale = self._axis_plan()
        while k < self.dim:
            j = int(order[k])
            x = base.copy()
            step = sign * AXIS_STEP * scale[j]
            x[j] = base[j] + step if 0.0 <= base[j] + step <= 1.0 else base[j] - step
            if not np.array_equal(self.space.snap(x)[0], base):
                return x, {"init": True, "axis": [k, sign]}
            # a step the space snaps back (a categorical's one-hot column, a coarse integer)
            k, sign = (k, -1) if sign == 1 else (k + 1, 1)
        return None

    def _axis_plan(self) -> tuple[np.ndarray, np.ndarray]:
        """The order in which the axis design probes the coordinates (a permutation) and each
        coordinate's step factor in [1 - AXIS_JITTER, 1 + AXIS_JITTER], drawn from a
        generator seeded by ``seed`` alone."""
        if self._axis is None:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                               spawn_key=(DESIGN_AXIS,)))
            order = rng.permutation(self.dim)
            self._axis = order, 1.0 + AXIS_JITTER * (2.0 * rng.random(self.dim) - 1.0)
        return self._axis

    def _design_length(self) -> int:
        """How many finite values the design takes: ``n_init``, or ``1 + 2 FLAT_COORDINATES``
        when that is shorter, the design is ``"axis"``, and its first ``1 + 2
        FLAT_COORDINATES`` told points are design points whose values (and constraint
        values, if any) are all equal and finite: the centre and both probes of each of the
        first ``FLAT_COORDINATES`` coordinates found no effect, so the objective depends on
        few of the coordinates and the rest of the design goes to the model."""
        flat_end = 1 + 2 * FLAT_COORDINATES
        if self.options.init_design != "axis" or self.n_init <= flat_end or self.n_told < flat_end:
            return self.n_init
        y = self._y[:flat_end]
        if not (np.isfinite(y).all() and (y == y[0]).all()
                and all(m.get("init") for m in self._metas[:flat_end])):
            return self.n_init
        c = None if self._c is None else self._c[:flat_end]
        if c is not None and not (c == c[0]).all():
            return self.n_init
        return flat_end

    def _design_end(self) -> int | None:
        """Number of told points up to and including the :meth:`_design_length`-th finite
        value (None while the design is not complete; GO-UCB's Phase I ends here too)."""
        finite = np.flatnonzero(np.isfinite(self._y))
        size = self._design_length()
        return None if len(finite) < size else int(finite[size - 1]) + 1

    def _design_slopes(self, end: int) -> np.ndarray:
        """Finite-difference slope of each coordinate from the axis probes among the first
        ``end`` told points [initial-design.md#line-search-after-the-design]; 0 where a
        coordinate has no usable probe."""
        return self._design_effects(end)[0]

    def _design_effects(self, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per coordinate, from the axis probes among the first ``end`` told points: the
        slope (:meth:`_design_slopes`), whether it has a usable probe, and whether one of its
        probes returned a value other than that of the point it stepped from."""
        X, y = self._X[:end], self._y[:end]
        order = self._axis_plan()[0]
        slopes = np.zeros(self.dim)
        probed = np.zeros(self.dim, dtype=bool)
        changed = np.zeros(self.dim, dtype=bool)
        plus: dict[int, int] = {}  # coordinate -> index of its plus probe
        for i in range(end):
            axis = self._metas[i].get("axis")
            if not (isinstance(axis, (list, tuple)) and len(axis) == 2 and is_int(axis[0])
                    and 0 <= axis[0] < self.dim and np.isfinite(y[i])):
                continue  # not an axis probe of this design (or a failed one)
            j = int(order[axis[0]])
            same = self._stepped_from(i, j)
            same = same[np.isfinite(y[same])]
            if not len(same):
                continue
            b = int(same[-1])  # the point it stepped from
            slopes[j] = (y[i] - y[b]) / (X[i, j] - X[b, j])
            probed[j], changed[j] = True, bool(changed[j] or y[i] != y[b])
            if axis[1] == 1:
                plus[j] = i
            elif j in plus:
                p = plus[j]
                if (X[p, j] - X[b, j]) * (X[i, j] - X[b, j]) < 0 and np.array_equal(
                        np.delete(X[p], j), np.delete(X[i], j)):
                    slopes[j] = (y[p] - y[i]) / (X[p, j] - X[i, j])  # central difference
        return slopes, probed, changed

    def _line_point(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The next point of the line search after the axis design, or None when it does not
        apply or is over [initial-design.md#line-search-after-the-design]."""
        if not self.line_search or self._pending:
            return None
        end = self._design_end()
        if end is None or not all("line" in m for m in self._metas[end:]):
            return None  # the design is not told yet, or the model has taken over
        tried = self.n_told - end
        if tried >= len(LINE_STEPS):
            return None
        direction = -self._design_slopes(end)
        scale = float(np.abs(direction).max())
        if not scale > 0.0:
            return None
        direction /= scale
        i = best_index(self._y[:end], None)  # the design's values, constraints aside
        x_best, y_best, improved = self._X[i], float(self._y[i]), False
        for k, step in zip(range(end, self.n_told), LINE_STEPS, strict=False):
            if self._y[k] < y_best:
                x_best, y_best, improved = self._X[k], float(self._y[k]), True
            elif improved and step >= LINE_STEPS[0]:
                return None  # a long step failed after one improved
        step = LINE_STEPS[tried]
        return np.clip(x_best + step * direction, 0.0, 1.0), {"init": True, "line": step}
