"""The ask/tell contract every engine algorithm implements.

Contract (docs/ARCHITECTURE.md, "Conventions")
----------------------------------------------
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

Constraints
-----------
``tell(x, y, meta, constraints=c)`` records constraint values next to the objective values:
``c`` of shape (m,) for one point or (n, m) for n points, real numbers; a point is feasible
iff every ``c_j <= 0``, and NaN (a failed evaluation of a constraint) counts as violated
(:mod:`hdbo_engine.constraints`). The first tell with constraints fixes m; a later width is a
``ValueError`` naming ``constraints``. Constraints are given with every finite value or with
none: a finite value told without them once they are in use, or constraints first given
after finite values were told without them, is a ``ValueError`` naming ``constraints``
(rebuild with :meth:`Optimizer.from_history` and the full constraints instead). A failed
value (NaN or +inf) may come without constraints; they are then recorded as NaN.
:attr:`Optimizer.best` and :meth:`Optimizer.recommend` are the best feasible point, or the
least violating one before any is feasible (SCBO's rule); every algorithm's trust region
sees the merit value of :func:`hdbo_engine.constraints.merit_values`
(:attr:`Optimizer.merit`), its surrogate :func:`hdbo_engine.constraints.surrogate_values`
(:attr:`Optimizer.model_values`), and every model-based proposal passes
:func:`hdbo_engine.constraints.steer` (random search's do not: ``steer_proposals``).
Without constraints nothing of this applies and every algorithm behaves exactly as it does
unconstrained.

Initial design
--------------
The first ``n_init`` points (counting finite told values and pending points) are the
initial design, proposed by :class:`hdbo_engine.design.InitialDesign`: the centre of the
cube when ``init_centre``, then ``init_design`` ``"uniform"`` (uniform draws) or ``"axis"``
(Hooke and Jeeves' axis pass, then a line search when ``line_search``); an axis design ends
after the centre and its first ten coordinates' probes when all of them return one value.
History told before
the first ask (a warm start) replaces the centre. A ``salt`` changes only the random
draws, so concurrent workers follow the same design, each taking the next point that is
neither told nor pending. Details and evidence: ``docs/algorithms/initial-design.md``.

Presets
-------
Every engine algorithm takes ``preset``: ``"paper"`` is exactly its paper's configuration
(the paper's initial design, no trust region, the paper's constants); ``"practical"`` [the
default] is what measured best on the ``hd`` suite. Each algorithm's options are one frozen
dataclass (its ``options_class``, extending :class:`Options`), and ``presets`` maps each
preset to an instance of it. An option given by name wins over the preset
(``dataclasses.replace``), so ``MSUCB(D, preset="paper", N0=4)`` is the paper's
configuration with four subspaces per step; ``options=`` starts from a whole options object
instead of a preset.

Large batches
-------------
``ask(n)`` takes at most ``batch_model_limit`` [16] model-based points from
the algorithm's own rule for several points (kriging believer or the
algorithm's equivalent: one model, each proposal conditioned on the ones
before it, whose cost grows faster than linearly in n). The other points of
a larger batch are *fillers*, drawn at a cost linear in n: the j-th is the
(j mod k)-th model point (k = the model points of this ask) plus a Gaussian
step of standard deviation 0.1 times the side of the search box in every
coordinate, clipped to the box (the trust region around the incumbent when
the algorithm has one, else the cube), made distinct like every proposal;
its meta is ``{"batch_fill": True, "near": j mod k}``. So a large batch
explores the neighbourhoods of the model's choices. Initial-design points
are uniform draws at any n (measured: ``benchmarks/parallel_bench.py`` of commit
be6ce2a, ``git show be6ce2a:benchmarks/parallel_bench.py``).

Trust region
------------
An algorithm may keep a :class:`hdbo_engine.trust_region.TrustRegion` in
``self.trust_region``; :meth:`Optimizer.tell` feeds it every told value of its own
(below) in order (before ``_on_tell``), so its state is a function of the history.

Points of other proposers
-------------------------
A told point whose meta names another algorithm under ``"algorithm"`` (:data:`PROPOSER`;
Auto tells its members the points of its other arms so) enters the models like any other,
but neither :attr:`Optimizer.incumbent`, the point an algorithm searches around, nor its
trust region's counts: on one shared history each algorithm keeps its own region, as
TuRBO-m's trust regions do (Eriksson et al., NeurIPS 2019, Sec. 2). Every other point
(design, own proposals, points told without an ask) is the algorithm's own, so alone its
:attr:`~Optimizer.incumbent` is :attr:`~Optimizer.best`. Once constraints are in use every
point is its own: each searches around the best feasible point anyone found, SCBO's rule
(measurements: ``docs/algorithms/auto.md#own-incumbents``).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .constraints import (
    best_index,
    check_constraints,
    feasible_mask,
    merit_values,
    steer,
    surrogate_values,
)
from .design import DEFAULT_HORIZON, InitialDesign, design_size
from .maximize import gaussian_perturbations
from .options import Options
from .space import Space
from .trust_region import TrustRegion, search_box
from .util import as_float_array, impute_failures, is_int

PROPOSER = "algorithm"  # meta key naming the algorithm that proposed a point

__all__ = ["Proposal", "Optimizer"]


@dataclass(frozen=True)
class Proposal:
    """One asked point ``x`` (shape (D,), in the unit cube) and its metadata."""

    x: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)


class Optimizer(InitialDesign, ABC):
    """Base class of every engine algorithm (minimisation on the unit cube).

    Parameters
    ----------
    space: a :class:`Space`, or an int D for the unit cube ``[0, 1]^D``.
    seed: integer seed; ``None`` draws one (stored in ``self.seed``).
    budget: total number of evaluations planned, or ``None`` when unknown;
        used by algorithms whose schedules depend on it (``self.horizon``: the budget, or
        :data:`~hdbo_engine.design.DEFAULT_HORIZON` when it is unknown).
    preset: ``"practical"`` [default] or ``"paper"`` (module docstring, "Presets"): the
        options start from ``presets[preset]``.
    options: an instance of the algorithm's ``options_class`` to start from instead of the
        preset's.
    **overrides: options by name, applied with ``dataclasses.replace`` (:class:`Options`
        lists the shared ones); an unknown name is a ``TypeError`` listing the valid ones.

    The resolved options are ``self.options``. Class attributes (set on an instance to
    change them): ``batch_model_limit`` [16], the most model-based points per ask (module
    docstring, "Large batches"); ``enumerate_limit`` [65536], the largest space without Real
    dimensions whose grid is searched for an unseen point (``_accept``);
    ``default_n_init``, the uniform design's size that the design-size rule starts from;
    ``steer_proposals`` [True], whether model-based proposals pass
    :func:`~hdbo_engine.constraints.steer` once constraints were told (module docstring).
    """

    name: ClassVar[str] = "base"
    default_n_init: ClassVar[int] = 10
    enumerate_limit: ClassVar[int] = 65536
    batch_model_limit: ClassVar[int] = 16
    steer_proposals: ClassVar[bool] = True
    options_class: ClassVar[type[Options]] = Options
    presets: ClassVar[dict[str, Options]] = {"practical": Options(), "paper": Options()}

    def __init__(
        self,
        space: Space | int,
        *,
        seed: int | None = None,
        budget: int | None = None,
        preset: str = "practical",
        options: Options | None = None,
        **overrides: Any,
    ) -> None:
        chosen = self.preset_options(preset) if options is None else options
        if not isinstance(chosen, self.options_class):
            raise TypeError(f"options: expected a {self.options_class.__name__}, "
                            f"got {chosen!r}")
        self.options = chosen.with_overrides(type(self).__name__, overrides)
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
        self.horizon = DEFAULT_HORIZON if self.budget is None else self.budget
        opts = self.options
        self.n_init = int(opts.n_init) if opts.n_init is not None else design_size(
            opts.init_design, self._uniform_n_init(), self.dim, self.budget)
        self.line_search = (opts.init_design == "axis" if opts.line_search is None
                            else bool(opts.line_search))
        self._X = np.empty((0, self.dim))
        self._y = np.empty(0)
        self._merit = self._model_y = self._y
        self._c: np.ndarray | None = None
        self._metas: list[dict[str, Any]] = []
        self._pending: list[Proposal] = []
        self.trust_region: TrustRegion | None = None
        self._axis: tuple[np.ndarray, np.ndarray] | None = None  # _axis_plan's cache

    @classmethod
    def preset_options(cls, preset: str) -> Options:
        """The options of ``preset``; a ``ValueError`` listing the presets if there is none."""
        if not isinstance(preset, str) or preset not in cls.presets:
            raise ValueError(f"preset: expected one of {sorted(cls.presets)}, got {preset!r}")
        return cls.presets[preset]

    @classmethod
    def preset_n_init(cls, preset: str = "practical", dim: int | None = None,
                      budget: int | None = None) -> int:
        """The initial design size that ``preset`` gives when ``n_init`` is not overridden.

        With ``dim`` (and ``budget`` when known), a preset whose ``n_init`` is None gives the
        design-size rule (:func:`design_size`); without ``dim``, the uniform design's size.
        """
        chosen = cls.presets.get(preset, cls.presets["practical"])
        if chosen.n_init is not None:
            return int(chosen.n_init)
        if dim is None:
            return cls.default_n_init
        return design_size(chosen.init_design, cls.default_n_init, dim, budget)

    def _uniform_n_init(self) -> int:
        """The uniform initial design's size that the design-size rule starts from."""
        return self.default_n_init

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
    def model_values(self) -> np.ndarray:
        """Values the surrogates fit (n,): the told values without constraints, else
        :func:`~hdbo_engine.constraints.surrogate_values`."""
        return self._model_y

    @property
    def merit(self) -> np.ndarray:
        """Values the trust regions see (n,): the told values without constraints, else
        :func:`~hdbo_engine.constraints.merit_values`."""
        return self._merit

    @property
    def constraints(self) -> np.ndarray | None:
        """Told constraint values (n, m), or None when no constraints were told."""
        return self._c

    @property
    def feasible(self) -> np.ndarray:
        """Which told points are feasible (n,) bool; all of them without constraints."""
        if self._c is None:
            return np.ones(self.n_told, dtype=bool)
        return feasible_mask(self._c)

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
        """``(x, y)`` of the lowest finite told value, or None; with constraints, of the
        lowest finite value among feasible points, or before any feasible point of the
        least total violation (module docstring, "Constraints")."""
        i = best_index(self._y, self._c)
        return None if i is None else (self._X[i].copy(), float(self._y[i]))

    def is_own(self, meta: dict[str, Any]) -> bool:
        """Whether a told point with ``meta`` is this algorithm's own: its meta names no other
        algorithm, or constraints are in use (module docstring, "Points of other
        proposers")."""
        return self._c is not None or meta.get(PROPOSER, self.name) == self.name

    def own_rows(self) -> np.ndarray:
        """Which told points are this algorithm's own (n,) bool (:meth:`is_own`)."""
        return np.array([self.is_own(m) for m in self._metas], dtype=bool)

    @property
    def incumbent(self) -> tuple[np.ndarray, float] | None:
        """``(x, y)`` the algorithm searches around: :attr:`best` among its own told points
        (module docstring, "Points of other proposers"); :attr:`best` while none of its own
        is finite."""
        own = np.flatnonzero(self.own_rows())
        i = best_index(self._y[own], None if self._c is None else self._c[own])
        return self.best if i is None else (self._X[own[i]].copy(), float(self._y[own[i]]))

    def recommend(self) -> np.ndarray | None:
        """The told point this optimizer recommends as its answer (unit cube), or None
        before any finite value (with a warning once values were told): the point of
        :attr:`best` unless an algorithm overrides it (for noisy objectives, a point chosen
        by the model rather than the luckiest draw)."""
        best = self.recommendable_best()
        return None if best is None else best[0]

    def recommendable_best(self) -> tuple[np.ndarray, float] | None:
        """:attr:`best`, warning when it is None although values were told (all failures)."""
        best = self.best
        if best is None and self.n_told:
            warnings.warn(f"recommend: none of the {self.n_told} told values is finite, so "
                          "there is no point to recommend (None)", RuntimeWarning, stacklevel=3)
        return best

    def model_data(self) -> tuple[np.ndarray, np.ndarray]:
        """Told points and :attr:`model_values` for the surrogate, failures imputed (module
        docstring)."""
        if not np.isfinite(self._model_y).any():
            return np.empty((0, self.dim)), np.empty(0)
        return self._X, impute_failures(self._model_y)

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
            out.append(self._accept(*self._design_point(rng), rng))
        n_model = n - n_random
        line = self._line_point() if n_model and salt is None else None
        if line is not None:
            out.append(self._accept(*line, rng))
            n_model -= 1
        if n_model:
            k = min(n_model, self.batch_model_limit)
            proposals = self._propose(k, rng)
            if self._c is not None and self.steer_proposals and self.best is not None:
                proposals = steer(self._X, self._c, self.best[0], proposals, rng)
            for x, meta in proposals:
                out.append(self._accept(x, meta, rng))
            centres = np.array([p.x for p in out[-k:]])
            best = self.incumbent  # fillers: module docstring, "Large batches"
            lo, hi = search_box(self.dim, None if best is None else best[0], self.trust_region)
            for j in range(n_model - k):
                x = gaussian_perturbations(centres[j % k], lo, hi, 1, rng)[0]
                out.append(self._accept(x, {"batch_fill": True, "near": j % k}, rng))
        return out

    @staticmethod
    def _check_ask(n: int, salt: int | None) -> None:
        """Validate ask's arguments."""
        if not is_int(n) or n < 1:
            raise ValueError(f"n: expected an int >= 1, got {n!r}")
        if salt is not None and (not is_int(salt) or salt < 0):
            raise ValueError(f"salt: expected a non-negative int or None, got {salt!r}")

    def _ask_rng(self, n: int, salt: int | None) -> np.random.Generator:
        """Validate ask's arguments; the generator keyed by (seed, n_told, n_pending[, salt])."""
        self._check_ask(n, salt)
        return self._keyed_rng(self.n_told, len(self._pending), salt)

    def _keyed_rng(self, n_told: int, n_pending: int, salt: int | None) -> np.random.Generator:
        """The generator keyed by ``(seed, n_told, n_pending[, salt])``."""
        key = (n_told, n_pending) if salt is None else (n_told, n_pending, int(salt))
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))

    def _n_random(self, n: int) -> int:
        """How many of ``n`` new points still belong to the random initial design."""
        n_done = int(np.isfinite(self._y).sum()) + len(self._pending)
        return int(min(n, max(0, self._design_length() - n_done)))

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
        *,
        constraints: Any = None,
    ) -> None:
        """Record evaluations: ``x`` (D,) with scalar ``y``, or (n, D) with ``y`` (n,), and
        optionally their ``constraints`` (m,) or (n, m) (module docstring, "Constraints")."""
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
        C = self._told_constraints(constraints, Y)
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
        if C is None:
            self._merit = self._model_y = self._y
            merit = Y
        else:
            self._c = C
            self._merit = merit_values(self._y, C)
            self._model_y = surrogate_values(self._y, C, self._merit)
            merit = self._merit[-len(Y):]
        self._metas.extend(resolved)
        if self.trust_region is not None:
            own = [self.is_own(m) for m in resolved]
            self.trust_region.observe(merit[own], [m for m in resolved if self.is_own(m)])
        self._on_tell(X, merit, resolved)

    def _told_constraints(self, constraints: Any, Y: np.ndarray) -> np.ndarray | None:
        """All told constraints after a tell of values ``Y`` with ``constraints``, or None
        while none are in use; ValueError naming ``constraints`` for a breach of the module
        docstring's rules ("Constraints"). Changes no state."""
        finite = np.isfinite(Y)
        if constraints is None:
            if self._c is None:
                return None
            if finite.any():
                raise ValueError("constraints: expected constraint values for every point "
                                 "with a finite value once constraints were told (NaN "
                                 "values for a constraint that could not be evaluated)")
            return np.vstack([self._c, np.full((len(Y), self._c.shape[1]), np.nan)])
        width = None if self._c is None else self._c.shape[1]
        C = check_constraints(constraints, len(Y), width)
        if self._c is not None:
            return np.vstack([self._c, C])
        if np.isfinite(self._y).any():
            raise ValueError("constraints: finite values were told without constraints "
                             "before; give constraints from the first evaluated point on "
                             "(Optimizer.from_history(..., constraints=...) rebuilds with "
                             "them)")
        return np.vstack([np.full((self.n_told, C.shape[1]), np.nan), C])

    @classmethod
    def from_history(
        cls,
        space: Space | int,
        X: Any,
        y: Any,
        metas: Sequence[dict[str, Any] | None] | None = None,
        constraints: Any = None,
        **kwargs: Any,
    ) -> Optimizer:
        """Rebuild an optimizer from its told history (same kwargs and seed as the original),
        with the told ``constraints`` (n, m) when there were any."""
        opt = cls(space, **kwargs)
        if len(np.atleast_1d(y)):
            opt.tell(X, y, metas, constraints=constraints)
        return opt

    # ------------------------------------------------------- algorithm hooks
    @abstractmethod
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        """Return ``n`` points (D,) with metas; ``self.pending`` holds points to avoid."""

    def _on_tell(self, X: np.ndarray, y: np.ndarray, metas: list[dict[str, Any]]) -> None:
        """Hook for incremental state updates after a tell (default: nothing)."""
        return None


# ----------------------------------------------------------------- minimize
