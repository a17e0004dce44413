"""The ask/tell contract every engine algorithm implements, and ``minimize``.

Contract (DESIGN.md, "Conventions")
-----------------------------------
* Points live in the unit cube ``[0, 1]^D`` (``D = space.n_columns``) as
  float64 arrays; the public API **minimises**.
* ``ask(n)`` returns ``n`` :class:`Proposal` objects (point + small
  JSON-serialisable ``meta`` dict). Asked-but-not-told points are *pending*;
  a new ask never returns a point equal to a pending or told one (after the
  space's snapping of integers and categoricals), unless the space has no
  unseen point left.
* ``tell(x, y, meta=None)`` records one point or many. A told point equal to
  a pending one clears it and inherits its ``meta``. Points told without an
  ask are accepted.
* ``y`` must be real numbers (a string, None or a complex number is a
  ``TypeError`` naming ``y``). **NaN and +inf** are recorded as failed
  evaluations: they stay in the history (and count toward ``n_told``), never
  become ``best``, and enter the surrogate as the worst finite value seen up to
  them, so the model steers away from the region instead of forgetting it.
  **-inf** is a ``ValueError`` naming ``y``: to a minimiser it would be the
  best possible value, which no surrogate can model, and recording it as a
  failure would hide the very point the user is looking for.
* **Randomness**: each ask draws from a generator seeded by
  ``(seed, n_told, n_pending)``. Proposals are therefore a pure function of
  the constructor arguments, the told history (with metas, in order) and the
  pending points. To rebuild an optimizer in a new process, construct it with
  the same arguments and ``tell`` the history in the original order (see
  :meth:`Optimizer.from_history`); its next proposal equals the one the
  uninterrupted optimizer would make.
* **Validation** happens before any state changes, so a bad call never
  corrupts the history.

Initial design
--------------
The first ``n_init`` points (counting finite told values and pending
points) are the initial design. With ``init_centre`` [True for every
algorithm except random search] the first of them, asked while nothing is
told or pending, is the centre of the cube (snapped by the space: the
geometric middle of a log-scaled range, the middle integer, a categorical's
first choice); the others are uniform draws. The papers draw every initial
point uniformly and are silent on this choice. We adopt the centre because
it is the first evaluation of CMA-ES, Nevergrad's NGOpt and COCO's
``initial_solution``, and because it is measured to help: on the committed
``bbob`` suite (COCO f1, f2, f8, f15 at D = 20 and 40, optima off the box
diagonal) the centre alone beats the median best of 100 uniform points on 7
of 8 problems, and CobBO started there improves its 3-seed median on all 8
(``python benchmarks/d100_diagnostics.py cobbo-centre --suite bbob``);
our five engine methods improved 112 of 120 paired bbob cells (3 seeds). It costs
where the centre is a poor point: Styblinski-Tang's centre is a local
maximum of every coordinate, and MS-UCB there (10-D, 45 evaluations, 20
seeds) reached a median of -204 with it against -225 without. History told
before the first ask (a warm start) replaces the centre.

``init_design`` chooses the other points ["axis" in the practical preset of
MS-UCB, CobBO, GO-UCB and BKB; "uniform" in their paper presets, for GP-UCB
and random search]. ``"uniform"``: uniform draws. ``"axis"``: the
exploratory move of Hooke and Jeeves' pattern search ("Direct search
solution of numerical and statistical problems", J. ACM 8, 1961): the
coordinates in a random order (a permutation seeded by ``seed`` alone), each
probed at the best told point plus its step (``AXIS_STEP``, 1/6 of the cube's
side, times a factor drawn once per coordinate from U(0.75, 1.25),
``AXIS_JITTER``, seeded likewise; the paragraph "Why the step is jittered"
below) and, when that is not an improvement, minus it; the best told point
moves with every improvement, so the design is one greedy pass over the
coordinates. The design then ends with a line search along the pass's
finite-difference slopes ("Line search after the design", below). Left at
None, ``n_init`` is then ``max(the uniform design's size, min(2 D + 1,
budget // 4))`` (:func:`design_size`; an unknown budget
counts as ``DESIGN_HORIZON`` = 100): 125 points at D = 100 with 500
evaluations, 25 at D = 12, and the uniform size (e.g. MS-UCB's 20) where the
pass is shorter, as for D < 10. Once every coordinate is probed, the rest of
the design is uniform draws. A probe whose value is not yet told counts
as no improvement, so a batch probes both signs at once; a probe that would
leave the cube goes the other way; with nothing told and no centre pending
the point is a uniform draw. Probes carry ``{"init": True, "axis": [k,
sign]}`` (``k``: position in the order). A step that the space snaps back
to the base point is skipped: a categorical's one-hot columns (a step of
1/6 never changes the argmax) and an integer too coarse for it, so the pass
probes Real and Integer parameters and the rest of the design is uniform
draws. The next probe is a function of the told history, these metas and
the pending points, so a rebuilt optimizer continues the pass exactly. For
the same reason two workers that share a state but cannot see each other's
latest proposal would propose the same probe, so an ask with a ``salt``
(the adapters pass one when other trials are running) draws its design
points uniformly, as with ``"uniform"``.

Why: at D = 100 with a few hundred evaluations every uniform point is worse
than the centre and tells the surrogate little about any single coordinate,
while NGOpt (which runs COBYLA at these sizes) builds its first simplex from
axis steps of 1/6 of the box, greedily, and leads every D = 100 ``hd``
problem after 101 evaluations (``shifted_styblinski_tang`` seed 0: -2206
against 174 for the best of ours). The step is COBYLA's; it was not tuned.
Measured before adopting it (seed 0, 500 evaluations, an ask/tell probe
that tells the pass as the design; default -> axis): GO-UCB
``shifted_ackley`` 6.71 -> 6.16, ``shifted_levy`` 84.0 -> 76.7,
``rotated_rosenbrock`` 1.66e5 -> 3.09e4, ``rover`` 6.82 -> 1.59; BKB 8.25 ->
7.32, 109.2 -> 91.1, 5.73e5 -> 5.64e4, 1.57 -> 1.18; MS-UCB 9.73 -> 8.53,
111.4 -> 75.3, 1.85e5 -> 1.09e5, 5.07 -> -3.51: better in all 12 pairs.
A pass probing only the plus side, as COBYLA does, was better than the
default in 7 of the 12 and worse than the two-sided pass in 9. A pass that
always probes both signs and keeps the better was worse than this one in 6
of 8 (GO-UCB and MS-UCB on shifted Ackley, shifted Levy, rotated Rosenbrock
and Styblinski-Tang, seed 0; better only on Levy), though it escapes the
trap on ``d100``'s Rastrigin (BENCHMARKS.md, session 15). A longer design, a whole pass
at D = 100 (``n_init`` = 2 D + 1 = 201 of 500, session 16; GO-UCB and BKB, the five D = 100
``hd`` problems, seeds 0-1, fixed step), was better in 12 of 20 pairs but GO-UCB, our best
there, lost 5 of 10, rotated Rosenbrock 4.80e4 / 8.99e4 -> 1.70e5 / 1.72e5 (its Phase I
grows with the design), so the quarter of the budget stays. The ``hd`` suite's result is in
BENCHMARKS.md (preface, session 15).

Why the step is jittered: a fixed step of a round fraction of the box lands on
whatever structure the objective has at round fractions of the box. On
``d100``'s Rastrigin (box [-5, 10], local minima at the integers) a step of
1/6 (2.5 units) moves every coordinate from the centre's local maximum at 2.5
onto the local minimum at 5, slightly better, so the pass never tries the
optimum at 0 and ends on a lattice point that our models barely left (MS-UCB
ended at exactly 2500 on every seed, BKB on four of five). The same alignment
helped ``d100``'s Ackley and Levy. A factor per coordinate removes the
alignment either way. Measured before adopting it (an ask/tell probe with the
bench's construction, 500 evaluations; fixed -> jittered): ``d100``
Rastrigin, seeds 0-1, GO-UCB 2500 / 2476 -> 1171 / 1261, CobBO 2040 / 1858
-> 1269 / 1248, BKB 2500 / 2500 -> 1338 / 1328, MS-UCB 2500 / 2500 -> 1523 /
1390; ``d100`` seed 0, GO-UCB and CobBO: Ackley 5.63 / 5.70 -> 6.22 / 6.24 and
Levy 14.8 / 21.4 -> 21.6 / 23.5 (worse: the lost alignment), Rosenbrock
1.23e5 / 7.66e4 -> 1.09e5 / 5.78e4; on ``hd`` (GO-UCB and BKB, the five D =
100 problems, seeds 0-1) better in 13 of 20 pairs, e.g. BKB rotated
Rosenbrock 1.76e5 / 1.64e5 -> 1.51e5 / 9.47e4, GO-UCB shifted Ackley 6.45 /
6.38 -> 6.64 / 7.34 (worse). The factor's range was not tuned (one value
tried). On the suites (session 16; BENCHMARKS.md, preface): ``hd`` 70 of 132 cells
better (neutral, as intended where the optimum is not aligned with the box), ``d100``
Rastrigin's best of ours 1997 -> 1171, Levy 22.1 -> 20.6, Ackley 5.63 -> 5.82; ``bbob``
better on 5 of 8 groups.

Line search after the design
----------------------------
With ``line_search`` [True exactly when ``init_design`` is ``"axis"``: the
practical presets], the axis design ends with a line search, the second half
of Hooke and Jeeves' iteration (their pattern move) in the form COBYLA takes
at these sizes: a step on all coordinates at once along a linear model. Each
axis probe gives a finite-difference slope for its coordinate: the probe
against the told point it stepped from (the one equal to it in every other
coordinate) or, where both signs were probed from one point, their central
difference; coordinates without a probe get 0. The direction ``d`` is minus
the slopes, scaled to a largest entry of 1. Starting at the best point of the
design, the search evaluates ``best + s d`` (clipped to the cube) for ``s`` in
``LINE_STEPS`` = 1/6, 1/3, 2/3, 1/12, 1/24 of the side, in that order, the
best point moving with every improvement, and stops when a step of 1/6 or
more fails after one improved: 2 to 5 evaluations, beyond ``n_init``. Its
points carry ``{"init": True, "line": s}`` (so a trust region does not count
them). The next step is a function of the told history and metas, so a
rebuilt optimizer continues it exactly. It is proposed only by an unsalted
ask with nothing pending, and ends for good once a model point has been
asked, so a batch (``ask(n)``, n > 1) takes one line point and then the
model's, and concurrent workers skip it. It is skipped where no slope is
known (a warm start without axis metas, a uniform design).

Why: the greedy pass moves one coordinate at a time, and NGOpt's COBYLA,
which leads every D = 100 ``hd`` problem after about D + 1 evaluations, moves
all of them along its linear model. The steps are COBYLA's initial radius
(1/6), longer steps for a slope that keeps improving, and shorter ones for a
direction that overshoots; they were not tuned. Measured before adopting it
(session 16, an ask/tell probe that told the line search after the design
without the ``"init"`` mark, 500 evaluations, against the ``hd`` cells of the
same seeds): better in 56 of 80 runs; by problem, shifted Styblinski-Tang
12 / 12 (-3179 to -3356, against NGOpt's median -3181), rover 8 / 8, shifted
Ackley 10 / 12, rotated Rastrigin 7 / 12, rotated Rosenbrock 6 / 12, shifted
Levy 6 / 12, Swimmer 3 / 4, LunarLander 2 / 4, HalfCheetah and Hopper 1 / 2.
On the suites (session 17, our four re-run with it, against session 16's cells of the
same seeds; BENCHMARKS.md, preface): ``hd`` 28 of 44 medians and 80 of 132 cells better,
the best of ours on Styblinski-Tang -3090 -> -3245 and rover -1.46 -> -3.03 (both now
ahead of every peer), shifted Ackley 6.92 -> 5.86, rotated Rosenbrock 5.65e4 -> 3.56e4,
LunarLander -284.6 -> -274.2 (lost to GPSampler's -276.0); ``d100`` 14 of 20 medians
better (Rosenbrock 4.62e4 -> 2.56e4, Rastrigin 1171 -> 1121, Levy 20.6 -> 24.7 worse);
``bbob`` 15 of 32 medians better, groups where ours beats every peer 1 -> 3 of 8.

Presets
-------
Every engine algorithm takes ``preset``: ``"paper"`` is exactly its paper's
configuration (listed in the algorithm's docstring: the paper's initial
design, no trust region, the paper's constants); ``"practical"`` [the
default] is what measured best on the ``hd`` suite. Options left unset take
the preset's value; an option given explicitly always wins, so
``MSUCB(D, preset="paper", N0=4)`` is the paper's configuration with four
subspaces per step. ``n_init`` and ``init_centre`` follow the preset too.

Large batches
-------------
``ask(n)`` takes at most ``batch_model_limit`` [16] model-based points from
the algorithm's own rule for several points (kriging believer or the
algorithm's equivalent: one model, each proposal conditioned on the ones
before it, whose cost grows faster than linearly in n). The other points of
a larger batch are *fillers*, drawn at a cost linear in n: the j-th is the
(j mod k)-th model point (k = the model points of this ask) plus a Gaussian
step of standard deviation 0.1 times the side of the search box in every
coordinate, clipped to the box (the trust region around the best point when
the algorithm has one, else the cube), made distinct like every proposal;
its meta is ``{"batch_fill": True, "near": j mod k}``. So a large batch
explores the neighbourhoods of the model's choices. Initial-design points
are uniform draws at any n. Measured: ``python benchmarks/parallel_bench.py``
(BENCHMARKS.md, "Rebuild from history and large batches").

Trust region
------------
An algorithm may keep a :class:`hdbo_engine.trust_region.TrustRegion` in
``self.trust_region``; :meth:`Optimizer.tell` feeds it every told value in
order (before ``_on_tell``), so its state is a function of the history.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .registry import get_algorithm
from .space import Space
from .trust_region import TrustRegion

INIT_DESIGNS = ("uniform", "axis")
AXIS_STEP = 1.0 / 6.0  # side fraction of one axis probe (module docstring, "Initial design")
AXIS_JITTER = 0.25  # each coordinate's step is AXIS_STEP times U(1 - AXIS_JITTER, 1 + AXIS_JITTER)
LINE_STEPS = (1 / 6, 1 / 3, 2 / 3, 1 / 12, 1 / 24)  # the line search's steps (side fractions)
DESIGN_HORIZON = 100  # the budget the axis design's size assumes when none is given
_AXIS_STREAM = 52_711  # separates the axis order from the ask streams


def design_size(design: str, uniform_size: int, dim: int, budget: int | None) -> int:
    """Initial design size: ``uniform_size`` for ``"uniform"``; for ``"axis"``, room for the
    centre and both probes of every coordinate up to a quarter of the budget (of
    ``DESIGN_HORIZON`` when it is unknown), and never less than ``uniform_size``:
    ``max(uniform_size, min(2 dim + 1, budget // 4))``."""
    if design != "axis":
        return int(uniform_size)
    return int(max(uniform_size, min(2 * dim + 1, (budget or DESIGN_HORIZON) // 4)))

__all__ = ["Proposal", "Optimizer", "OptimizeResult", "minimize", "impute_failures",
           "FROM_PRESET"]


class _FromPreset:
    """Sentinel default of the options that a preset sets."""

    def __repr__(self) -> str:
        return "FROM_PRESET"


FROM_PRESET: Any = _FromPreset()


@dataclass(frozen=True)
class Proposal:
    """One asked point ``x`` (shape (D,), in the unit cube) and its metadata."""

    x: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)


def is_int(value: object) -> bool:
    """A Python or numpy integer, and not a bool (argument validation)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """A Python or numpy real number, and not a bool (argument validation)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def as_float_array(value: Any, arg: str, expected: str) -> np.ndarray:
    """``value`` as a float64 array, or TypeError/ValueError naming ``arg`` (validation).

    Numbers, numeric arrays and nested sequences of numbers are accepted;
    strings, None, complex numbers, ragged sequences and other objects raise
    ``TypeError`` (numpy would turn ``"0.5"`` into 0.5 and None into NaN), and
    a number too large for float64 raises ``ValueError``.
    """
    def bad_type() -> TypeError:
        return TypeError(f"{arg}: expected {expected}, got {type(value).__name__} {value!r:.80}")

    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested sequences
        raise bad_type() from None
    if raw.dtype.kind == "O":
        if any(v is None or isinstance(v, (str, bytes, complex)) for v in raw.ravel()):
            raise bad_type()
    elif raw.dtype.kind not in "biuf":
        raise bad_type()
    try:
        return raw.astype(float)
    except OverflowError:
        raise ValueError(f"{arg}: expected {expected}; a value is too large for float64") from None
    except (TypeError, ValueError):
        raise bad_type() from None


def history_fingerprint(settings: str, X: np.ndarray, y: np.ndarray) -> str:
    """Short hash of an algorithm's ``settings`` (a repr) and a told history prefix.

    A fit recorded in a proposal's meta is reused on rebuild only where this
    matches, so a record from another history or configuration is ignored.
    """
    h = hashlib.sha1(settings.encode())
    h.update(np.ascontiguousarray(X, dtype=float).tobytes())
    h.update(np.ascontiguousarray(y, dtype=float).tobytes())
    return h.hexdigest()[:20]


def impute_failures(y: np.ndarray) -> np.ndarray:
    """Replace each non-finite value by the worst (largest) finite value before it.

    Values with no finite value before them take the worst finite value of all
    of ``y`` (or 0 when nothing is finite). Prefix-consistent, so a model
    fitted on the first n points sees the same data in a rebuilt optimizer.
    """
    y = np.asarray(y, dtype=float).copy()
    bad = ~np.isfinite(y)
    if not bad.any():
        return y
    finite = y[~bad]
    fallback = float(finite.max()) if finite.size else 0.0
    running = np.maximum.accumulate(np.where(bad, -np.inf, y))
    y[bad] = np.where(np.isfinite(running[bad]), running[bad], fallback)
    return y


class Optimizer(ABC):
    """Base class of every engine algorithm (minimisation on the unit cube).

    Parameters
    ----------
    space: a :class:`Space`, or an int D for the unit cube ``[0, 1]^D``.
    seed: integer seed; ``None`` draws one (stored in ``self.seed``).
    budget: total number of evaluations planned, or ``None`` when unknown;
        used by algorithms whose schedules depend on it.
    n_init: size of the initial design; ``None`` takes the algorithm's
        ``default_n_init``.
    init_centre: whether the initial design starts at the centre of the cube
        (see "Initial design" in the module docstring); ``None`` takes the
        algorithm's ``default_init_centre``.
    init_design: ``"uniform"`` or ``"axis"`` (module docstring, "Initial
        design"); ``None`` takes the preset's, else ``default_init_design``.
    line_search: whether the axis design ends with a line search along its
        finite-difference slopes (module docstring, "Line search after the
        design"); ``None``: True exactly when ``init_design`` is ``"axis"``.
    preset: ``"practical"`` [default] or ``"paper"`` (module docstring,
        "Presets"); ``n_init``, ``init_centre``, ``init_design`` and
        ``line_search`` left at ``None`` take the preset's values where it sets them.

    Class attributes (set on an instance to change them): ``batch_model_limit``
    [16], the most model-based points per ask (module docstring, "Large
    batches"); ``enumerate_limit`` [65536], the largest space without Real
    dimensions whose grid is searched for an unseen point (``_accept``).
    """

    name: ClassVar[str] = "base"
    default_n_init: ClassVar[int] = 10
    enumerate_limit: ClassVar[int] = 65536
    batch_model_limit: ClassVar[int] = 16
    default_init_centre: ClassVar[bool] = True
    default_init_design: ClassVar[str] = "uniform"
    presets: ClassVar[dict[str, dict[str, Any]]] = {"practical": {}, "paper": {}}

    def __init__(
        self,
        space: Space | int,
        *,
        seed: int | None = None,
        budget: int | None = None,
        n_init: int | None = None,
        init_centre: bool | None = None,
        init_design: str | None = None,
        line_search: bool | None = None,
        preset: str = "practical",
    ) -> None:
        if not isinstance(preset, str) or preset not in self.presets:
            raise ValueError(f"preset: expected one of {sorted(self.presets)}, got {preset!r}")
        self.preset = preset
        if isinstance(space, bool) or not isinstance(space, (Space, int, np.integer)):
            raise TypeError(f"space: expected a Space or an int D >= 1, got {space!r}")
        self.space = space if isinstance(space, Space) else Space(int(space))
        self.dim = self.space.n_columns
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        if not is_int(seed) or seed < 0:
            raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
        self.seed = int(seed)
        if budget is not None and (not is_int(budget) or budget < 1):
            raise ValueError(f"budget: expected a positive int or None, got {budget!r}")
        self.budget = None if budget is None else int(budget)
        chosen = self.presets[preset]
        if init_design is None:
            init_design = chosen.get("init_design", self.default_init_design)
        if init_design not in INIT_DESIGNS:
            raise ValueError(f"init_design: expected one of {list(INIT_DESIGNS)}, "
                             f"got {init_design!r}")
        self.init_design = str(init_design)
        if n_init is None:
            n_init = design_size(self.init_design, self._uniform_n_init(), self.dim,
                                 self.budget)
        if not is_int(n_init) or n_init < 1:
            raise ValueError(f"n_init: expected an int >= 1, got {n_init!r}")
        self.n_init = int(n_init)
        if init_centre is None:
            init_centre = chosen.get("init_centre", self.default_init_centre)
        if not isinstance(init_centre, (bool, np.bool_)):
            raise TypeError(f"init_centre: expected a bool or None, got {init_centre!r}")
        self.init_centre = bool(init_centre)
        if line_search is None:
            line_search = chosen.get("line_search", self.init_design == "axis")
        if not isinstance(line_search, (bool, np.bool_)):
            raise TypeError(f"line_search: expected a bool or None, got {line_search!r}")
        self.line_search = bool(line_search)
        self._X = np.empty((0, self.dim))
        self._y = np.empty(0)
        self._metas: list[dict[str, Any]] = []
        self._pending: list[Proposal] = []
        self.trust_region: TrustRegion | None = None
        self._axis: tuple[np.ndarray, np.ndarray] | None = None  # _axis_plan's cache

    @classmethod
    def preset_n_init(cls, preset: str = "practical", dim: int | None = None,
                      budget: int | None = None) -> int:
        """The initial design size that ``preset`` gives when ``n_init`` is left at None.

        With ``dim`` (and ``budget`` when known), a preset whose design is ``"axis"`` gives
        :func:`design_size`'s rule; without ``dim``, the uniform design's size.
        """
        chosen = cls.presets.get(preset, {})
        size = int(chosen.get("n_init", cls.default_n_init))
        if dim is None:
            return size
        return design_size(chosen.get("init_design", cls.default_init_design), size, dim,
                           budget)

    def _uniform_n_init(self) -> int:
        """The uniform initial design's size under this preset (``n_init`` left at None)."""
        return self.preset_n_init(self.preset)

    def _from_preset(self, **given: Any) -> dict[str, Any]:
        """The given options, each left at ``FROM_PRESET`` replaced by the preset's value."""
        values = self.presets[self.preset]
        return {k: values[k] if v is FROM_PRESET else v for k, v in given.items()}

    # ---------------------------------------------------------------- history
    @property
    def X(self) -> np.ndarray:
        """Told points (n, D), in told order."""
        return self._X

    @property
    def y(self) -> np.ndarray:
        """Told values (n,), possibly non-finite for failed evaluations."""
        return self._y

    @property
    def metas(self) -> list[dict[str, Any]]:
        """Metadata of the told points."""
        return self._metas

    @property
    def n_told(self) -> int:
        return len(self._y)

    @property
    def pending(self) -> np.ndarray:
        """Pending points (k, D): asked (or added) and not yet told."""
        if not self._pending:
            return np.empty((0, self.dim))
        return np.array([p.x for p in self._pending])

    @property
    def best(self) -> tuple[np.ndarray, float] | None:
        """``(x, y)`` of the lowest finite told value, or None."""
        ok = np.isfinite(self._y)
        if not ok.any():
            return None
        i = int(np.argmin(np.where(ok, self._y, np.inf)))
        return self._X[i].copy(), float(self._y[i])

    def recommend(self) -> np.ndarray | None:
        """The told point this optimizer recommends as its answer (unit cube), or None
        before any finite value: the point of :attr:`best` unless an algorithm overrides it
        (for noisy objectives, a point chosen by the model rather than the luckiest draw)."""
        best = self.best
        return None if best is None else best[0]

    def model_data(self) -> tuple[np.ndarray, np.ndarray]:
        """Told points and values for the surrogate, failures imputed (module docstring)."""
        if not np.isfinite(self._y).any():
            return np.empty((0, self.dim)), np.empty(0)
        return self._X, impute_failures(self._y)

    # ---------------------------------------------------------------- ask/tell
    def ask(self, n: int = 1, *, salt: int | None = None) -> list[Proposal]:
        """Propose ``n`` distinct new points (see module docstring).

        ``salt`` (a non-negative int, default None) is appended to the ask
        generator's key ``(seed, n_told, n_pending)``. Callers whose workers
        may ask while seeing the same state (e.g. processes that cannot see
        each other's latest proposal yet) pass a per-worker value such as a
        trial number so that their random draws differ; None keeps the
        documented key.
        """
        rng = self._ask_rng(n, salt)
        out: list[Proposal] = []
        n_random = self._n_random(n)
        for _ in range(n_random):
            out.append(self._accept(*self._design_point(rng, salted=salt is not None), rng))
        n_model = n - n_random
        line = self._line_point() if n_model and salt is None else None
        if line is not None:
            out.append(self._accept(*line, rng))
            n_model -= 1
        if n_model:
            k = min(n_model, self.batch_model_limit)
            for x, meta in self._propose(k, rng):
                out.append(self._accept(x, meta, rng))
            centres = np.array([p.x for p in out[-k:]])
            lo, hi = self._fill_region()
            for j in range(n_model - k):
                step = rng.normal(0.0, 0.1, self.dim) * (hi - lo)
                x = np.clip(centres[j % k] + step, lo, hi)
                out.append(self._accept(x, {"batch_fill": True, "near": j % k}, rng))
        return out

    def _design_point(self, rng: np.random.Generator,
                      salted: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
        """The next initial-design point and its meta (module docstring, "Initial design");
        ``salted`` asks (concurrent workers) get uniform draws instead of axis probes."""
        if self.init_centre and self.n_told == 0 and not self._pending:
            return np.full(self.dim, 0.5), {"init": True, "centre": True}
        use_axis = self.init_design == "axis" and not salted
        probe = self._axis_probe() if use_axis else None
        return probe if probe is not None else (rng.random(self.dim), {"init": True})

    def _axis_probe(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The next point of the exploratory move along the axes (module docstring,
        "Initial design"), or None when every coordinate has been probed or there is no
        base point yet."""
        best = self.best
        if best is not None:
            base = best[0]
        elif self.init_centre and self._pending:
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
                self._metas[self._best_index()].get("axis") == [k, sign])
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

    def _best_index(self, n: int | None = None) -> int:
        """Index of the lowest finite value among the first ``n`` told ones (all when None;
        call only when one exists)."""
        y = self._y[:n]
        return int(np.argmin(np.where(np.isfinite(y), y, np.inf)))

    def _axis_plan(self) -> tuple[np.ndarray, np.ndarray]:
        """The order in which the axis design probes the coordinates (a permutation) and each
        coordinate's step factor in [1 - AXIS_JITTER, 1 + AXIS_JITTER], drawn from a
        generator seeded by ``seed`` alone (module docstring, "Initial design")."""
        if self._axis is None:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                               spawn_key=(_AXIS_STREAM,)))
            order = rng.permutation(self.dim)
            self._axis = order, 1.0 + AXIS_JITTER * (2.0 * rng.random(self.dim) - 1.0)
        return self._axis

    def _design_end(self) -> int | None:
        """Number of told points up to and including the ``n_init``-th finite value (None
        while the design is not complete; GO-UCB's Phase I ends here too)."""
        finite = np.flatnonzero(np.isfinite(self._y))
        return None if len(finite) < self.n_init else int(finite[self.n_init - 1]) + 1

    def _design_slopes(self, end: int) -> np.ndarray:
        """Finite-difference slope of each coordinate from the axis probes among the first
        ``end`` told points (module docstring, "Line search after the design"); 0 where a
        coordinate has no usable probe."""
        X, y = self._X[:end], self._y[:end]
        order = self._axis_plan()[0]
        slopes = np.zeros(self.dim)
        plus: dict[int, int] = {}  # coordinate -> index of its plus probe
        for i in range(end):
            axis = self._metas[i].get("axis")
            if not (isinstance(axis, (list, tuple)) and len(axis) == 2 and is_int(axis[0])
                    and 0 <= axis[0] < self.dim and np.isfinite(y[i])):
                continue  # not an axis probe of this design (or a failed one)
            j = int(order[axis[0]])
            others = np.delete(X[:i], j, axis=1)
            same = np.flatnonzero((np.abs(others - np.delete(X[i], j)) <= 1e-12).all(axis=1)
                                  & np.isfinite(y[:i]) & (X[:i, j] != X[i, j]))
            if not len(same):
                continue
            b = int(same[-1])  # the point it stepped from
            slopes[j] = (y[i] - y[b]) / (X[i, j] - X[b, j])
            if axis[1] == 1:
                plus[j] = i
            elif j in plus:
                p = plus[j]
                if (X[p, j] - X[b, j]) * (X[i, j] - X[b, j]) < 0 and np.array_equal(
                        np.delete(X[p], j), np.delete(X[i], j)):
                    slopes[j] = (y[p] - y[i]) / (X[p, j] - X[i, j])  # central difference
        return slopes

    def _line_point(self) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The next point of the line search after the axis design, or None when it does not
        apply or is over (module docstring, "Line search after the design")."""
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
        i = self._best_index(end)
        x_best, y_best, improved = self._X[i], float(self._y[i]), False
        for k, step in zip(range(end, self.n_told), LINE_STEPS, strict=False):
            if self._y[k] < y_best:
                x_best, y_best, improved = self._X[k], float(self._y[k]), True
            elif improved and step >= LINE_STEPS[0]:
                return None  # a long step failed after one improved
        step = LINE_STEPS[tried]
        return np.clip(x_best + step * direction, 0.0, 1.0), {"init": True, "line": step}

    def _fill_region(self) -> tuple[np.ndarray, np.ndarray]:
        """Box of a large batch's filler points: the trust region around the best point, or
        the cube (module docstring, "Large batches")."""
        best = self.best
        if self.trust_region is None or best is None:
            return np.zeros(self.dim), np.ones(self.dim)
        return self.trust_region.bounds(best[0])

    def _ask_rng(self, n: int, salt: int | None) -> np.random.Generator:
        """Validate ask's arguments; the generator keyed by (seed, n_told, n_pending[, salt])."""
        if not is_int(n) or n < 1:
            raise ValueError(f"n: expected an int >= 1, got {n!r}")
        key: tuple[int, ...] = (self.n_told, len(self._pending))
        if salt is not None:
            if not is_int(salt) or salt < 0:
                raise ValueError(f"salt: expected a non-negative int or None, got {salt!r}")
            key = (*key, int(salt))
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))

    def _n_random(self, n: int) -> int:
        """How many of ``n`` new points still belong to the random initial design."""
        n_done = int(np.isfinite(self._y).sum()) + len(self._pending)
        return int(min(n, max(0, self.n_init - n_done)))

    def seen_mask(self, X: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """Which rows of X (m, D) coincide (max-norm <= tol) with a told or pending point."""
        seen = np.vstack([self._X, self.pending])
        if not len(seen):
            return np.zeros(len(X), dtype=bool)
        return np.array([np.min(np.abs(seen - x).max(axis=1)) <= tol for x in X])

    def _accept(self, x: np.ndarray, meta: dict[str, Any], rng: np.random.Generator) -> Proposal:
        """Snap, make distinct from told and pending points, and mark pending.

        A duplicate in a space of at most ``enumerate_limit`` [65536] points (no
        Real dimension) becomes the nearest unseen point of the grid (ties broken
        at random), so such spaces are enumerated without repeats while unseen
        points remain. Otherwise it is moved by a Gaussian step of growing size
        (1e-3 doubling), and after 12 tries replaced by a uniform draw, so an
        algorithm that wants to re-sample its incumbent gets the nearest unseen
        point instead.
        """
        x = self.space.snap(x)[0]
        if self.seen_mask(x[None], tol=1e-12)[0]:
            meta = {**meta, "duplicate_replaced": True}
            n_points = self.space.n_points
            if n_points is not None and n_points <= self.enumerate_limit:
                x = self._nearest_unseen(x, rng)
            else:
                x = self._moved(x, rng)
        proposal = Proposal(x, meta)
        self._pending.append(proposal)
        return proposal

    def _nearest_unseen(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The grid point nearest to ``x`` that is neither told nor pending (x if none is)."""
        def keys(rows: np.ndarray) -> list[bytes]:
            return [r.tobytes() for r in np.round(rows, 9) + 0.0]

        grid = self.space.grid()
        seen = set(keys(np.vstack([self._X, self.pending])))
        free = grid[[k not in seen for k in keys(grid)]]
        if not len(free):
            return x
        free = free[rng.permutation(len(free))]
        return free[int(np.argmin(((free - x) ** 2).sum(1)))].copy()

    def _moved(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Gaussian steps of growing size from ``x``, then uniform draws, until unseen."""
        original = x
        for attempt in range(24):
            if attempt < 12:
                step = rng.normal(0.0, 1e-3 * 2.0**attempt, self.dim)
                x = self.space.snap(np.clip(original + step, 0.0, 1.0))[0]
            else:
                x = self.space.snap(rng.random(self.dim))[0]
            if not self.seen_mask(x[None], tol=1e-12)[0]:
                break
        return x

    def add_pending(self, x: np.ndarray, meta: dict[str, Any] | None = None) -> None:
        """Mark a point evaluated elsewhere (e.g. by another worker) as pending."""
        X = self._check_points(x, "x")
        if meta is not None and not isinstance(meta, dict):
            raise TypeError(f"meta: expected a dict or None, got {meta!r}")
        for row in X:
            self._pending.append(Proposal(row, dict(meta or {})))

    def clear_pending(self) -> None:
        """Forget every pending point (e.g. after workers were cancelled)."""
        self._pending.clear()

    def _check_points(self, x: Any, arg: str) -> np.ndarray:
        X = np.atleast_2d(as_float_array(
            x, arg, f"an array of numbers of shape (D,) or (n, D) with D = {self.dim}"))
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise ValueError(f"{arg}: expected shape (D,) or (n, D) with D = {self.dim}, "
                             f"got shape {np.shape(x)}")
        if not np.isfinite(X).all():
            raise ValueError(f"{arg}: points must be finite")
        if (X < -1e-9).any() or (X > 1 + 1e-9).any():
            raise ValueError(f"{arg}: points must lie in the unit cube [0, 1]^{self.dim}; "
                             f"got values in [{X.min():.6g}, {X.max():.6g}]")
        return np.clip(X, 0.0, 1.0)

    def tell(
        self,
        x: Any,
        y: Any,
        meta: dict[str, Any] | Sequence[dict[str, Any] | None] | None = None,
    ) -> None:
        """Record evaluations: ``x`` (D,) with scalar ``y``, or (n, D) with ``y`` (n,)."""
        X = self._check_points(x, "x")
        Y = np.atleast_1d(as_float_array(y, "y", "a number or a sequence of numbers"))
        if Y.ndim != 1 or len(Y) != len(X):
            raise ValueError(f"y: expected {len(X)} value(s) for {len(X)} point(s), "
                             f"got shape {np.shape(y)}")
        if np.isneginf(Y).any():
            raise ValueError("y: -inf cannot be told to a minimiser (NaN or +inf records a "
                             "failed evaluation; clip a value that is unbounded below)")
        if meta is None or isinstance(meta, dict):
            metas: list[dict[str, Any] | None] = [meta] * len(X)
        else:
            if isinstance(meta, (str, bytes)) or not isinstance(meta, Sequence):
                raise TypeError(f"meta: expected a dict, None or a sequence of them, "
                                f"got {meta!r:.80}")
            metas = list(meta)
            if len(metas) != len(X):
                raise ValueError(f"meta: expected {len(X)} dicts, got {len(metas)}")
        for m in metas:
            if m is not None and not isinstance(m, dict):
                raise TypeError(f"meta: expected a dict or None per point, got {m!r}")
        resolved = []
        for row, m in zip(X, metas, strict=True):
            hit = next((k for k, p in enumerate(self._pending)
                        if np.array_equal(p.x, row)), None)
            if hit is not None:
                p = self._pending.pop(hit)
                m = p.meta if m is None else m
            resolved.append(dict(m or {}))
        self._X = np.vstack([self._X, X])
        self._y = np.concatenate([self._y, Y])
        self._metas.extend(resolved)
        if self.trust_region is not None:
            self.trust_region.observe(Y, resolved)
        self._on_tell(X, Y, resolved)

    @classmethod
    def from_history(
        cls,
        space: Space | int,
        X: Any,
        y: Any,
        metas: Sequence[dict[str, Any] | None] | None = None,
        **kwargs: Any,
    ) -> Optimizer:
        """Rebuild an optimizer from its told history (same kwargs and seed as the original)."""
        opt = cls(space, **kwargs)
        if len(np.atleast_1d(y)):
            opt.tell(X, y, metas)
        return opt

    # ------------------------------------------------------- algorithm hooks
    @abstractmethod
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        """Return ``n`` points (D,) with metas; ``self.pending`` holds points to avoid."""

    def _on_tell(self, X: np.ndarray, y: np.ndarray, metas: list[dict[str, Any]]) -> None:
        """Hook for incremental state updates after a tell (default: nothing)."""
        return None


# ----------------------------------------------------------------- minimize
@dataclass
class OptimizeResult:
    """Outcome of :func:`minimize` (field names follow scikit-optimize)."""

    x: list[Any]
    fun: float
    x_iters: list[list[Any]]
    func_vals: np.ndarray
    X_unit: np.ndarray
    ask_times: np.ndarray
    algorithm: str
    space: Space

    @property
    def n_evals(self) -> int:
        return len(self.func_vals)


def minimize(
    func: Callable[[list[Any]], float],
    space: Space | int,
    algorithm: str | type[Optimizer] = "msucb",
    budget: int = 100,
    seed: int | None = None,
    callback: Callable[[OptimizeResult], bool | None] | None = None,
    progress: bool = True,
    **algorithm_kwargs: Any,
) -> OptimizeResult:
    """Minimise ``func`` over ``space`` with ``budget`` sequential evaluations.

    ``func`` receives one list of parameter values (decoded by the space) and
    returns a float. ``algorithm`` is a registered name (see
    :func:`hdbo_engine.available`) or an :class:`Optimizer`
    subclass; extra keyword arguments go to its constructor. ``callback``
    is called with the result so far after each evaluation and stops the run
    by returning True. ``progress`` shows a progress bar with the best value.
    """
    from tqdm.auto import tqdm

    if not is_int(budget) or budget < 1:
        raise ValueError(f"budget: expected a positive int, got {budget!r}")
    cls = get_algorithm(algorithm) if isinstance(algorithm, str) else algorithm
    opt = cls(space, seed=seed, budget=budget, **algorithm_kwargs)
    times: list[float] = []
    with tqdm(total=budget, disable=not progress, desc=cls.name) as bar:
        for _ in range(budget):
            t0 = time.perf_counter()
            (proposal,) = opt.ask()
            times.append(time.perf_counter() - t0)
            values = opt.space.decode(proposal.x)[0]
            opt.tell(proposal.x, float(func(values)))
            bar.update(1)
            if opt.best is not None:
                bar.set_postfix(best=f"{opt.best[1]:.6g}")
            if callback is not None and callback(_result(opt, times)):
                break
    return _result(opt, times)


def _result(opt: Optimizer, times: list[float]) -> OptimizeResult:
    best = opt.best
    x_best = best[0] if best is not None else opt.X[-1]
    return OptimizeResult(
        x=opt.space.decode(x_best)[0],
        fun=best[1] if best is not None else float("nan"),
        x_iters=opt.space.decode(opt.X),
        func_vals=opt.y.copy(),
        X_unit=opt.X.copy(),
        ask_times=np.array(times),
        algorithm=opt.name,
        space=opt.space,
    )
