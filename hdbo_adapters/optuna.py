"""Optuna samplers backed by the hdbo engine.

``optuna.create_study(sampler=AutoSampler(seed=0))`` — one generic
:class:`HDBOSampler` drives any registered engine algorithm (looked up by
name with :func:`hdbo_engine.get_algorithm` at first use); each public
algorithm of :mod:`hdbo_engine.registry` also has a sampler of its own name,
generated from the registry (``AutoSampler``, ``MSUCBSampler``, ``CobBOSampler``,
``GOUCBSampler``, ``BKBSampler``; :func:`named_samplers`). The algorithms, their
papers and equations are documented in ``hdbo_engine.algorithms``; this module
only translates (``docs/ARCHITECTURE.md``).

How a study maps onto the engine
--------------------------------
* **Search space.** Relative sampling runs on Optuna's intersection search
  space (parameters every COMPLETE trial has, with one distribution).
  Single-value distributions are left to the independent sampler (they
  have one possible value). The rest go through :class:`hdbo_engine.Space`,
  one dimension per parameter, in name order:

  - ``FloatDistribution(low, high, log)`` -> ``Real(low, high, log)``;
  - ``FloatDistribution(low, high, step)`` -> ``Integer(0, K)`` over the grid
    index ``k`` with value ``low + k * step`` (``K = round((high - low) / step)``),
    so every grid value has the same share of the cube;
  - ``IntDistribution(low, high, log)`` -> ``Integer(low, high, log)``; with
    ``step > 1`` -> ``Integer(0, (high - low) // step)`` over grid indices;
  - ``CategoricalDistribution(choices)`` -> ``Categorical(choices)``.

  Returned values are plain Python ``float``/``int``/the choice object, on
  the grid and inside ``[low, high]``, so Optuna always accepts them.
  Parameters outside the relative space (the first trials, conditional or
  dynamic parameters) come from ``independent_sampler``. With the default,
  the study's first trial (number 0) takes each parameter's centre, the point
  the engine's design starts from (``init_centre``; the decoded cube centre:
  the middle of a range, geometric for a log scale, the middle integer, a
  categorical's first choice; stored with it as the engine's first design
  point, so the engine is told it as its own centre), and other trials draw from
  :class:`TrialSeededRandomSampler`, uniform from a generator seeded by (seed,
  trial number, parameter name), so workers sharing a seed draw different
  first trials (Optuna's ``RandomSampler(seed)`` would give every worker the
  same ones).
* **Recommendation.** ``study.best_trial`` is Optuna's; under noise it is the
  luckiest draw. :meth:`HDBOSampler.recommended_trial` returns the trial
  whose point the engine recommends (``Optimizer.recommend``: for Auto under
  noise, the told point of lowest posterior 0.9 quantile).
* **History.** The engine minimises; ``maximize`` studies are negated.
  COMPLETE trials are told with their value (the engine's rule: a value of
  ``inf`` counts as a failed evaluation, imputed as the worst value seen and
  never best; Optuna itself turns NaN into FAIL). A value infinitely *good*
  (``-inf`` minimising, ``inf`` maximising) is refused by the engine (no
  surrogate can model it) but a study cannot refuse a finished trial, so it is
  told as a failed evaluation too, with a ``UserWarning`` naming the trial.
  PRUNED trials are told as failed evaluations (value NaN): the configuration
  was stopped for looking bad, and its last intermediate value is not
  comparable to final values, so the model is steered away from it without
  a made-up number. FAIL trials are ignored (an error says nothing about the
  objective). A finished trial counts only
  if it has a value inside every distribution of the space. It is told at the
  point the sampler proposed for it when its parameters equal that proposal
  (with the proposal's metadata), otherwise at the encoding of its actual
  parameters (enqueued, partially fixed or foreign trials) with empty
  metadata.
* **Constraints** (``docs/constraints.md``). A trial's constraint values are Optuna's own:
  ``trial.set_constraint(key, value)`` (Optuna 5) and, when the sampler was given
  ``constraints_func`` (as :class:`optuna.samplers.GPSampler` and ``TPESampler`` take it,
  with the same ``FutureWarning``), its values, which :meth:`HDBOSampler.after_trial`
  stores under Optuna's system attribute ``constraints`` exactly as Optuna's samplers do
  (a NaN value is Optuna's ``ValueError``), so ``study.best_trial`` and the visualisations
  see them. A study is constrained once a told trial has constraint values; every told
  trial then reaches the engine with ``constraints=`` (the values in the order of their
  keys), a finished trial without them as violated (NaN, as ``TPESampler`` counts a trial
  whose ``constraints_func`` failed), and trials with different numbers of constraints are
  a ``ValueError``, as in ``GPSampler``.
* **Order.** Finished trials are told in completion order
  (``datetime_complete``, then trial number), which every process reads
  identically from the storage. The engine's rebuild rule only needs a fixed
  order; completion order makes the history of a parallel study grow by
  appending, so the cached optimizer is extended rather than rebuilt when
  trials finish out of number order.
* **n_startup_trials** is the engine's ``n_init``: the initial design (the
  centre, then the axis pass or uniform draws, ``hdbo_engine.base``) is drawn
  by the engine inside the relative space (seeded, aware of pending
  points, stored with the trial), not by the independent sampler. ``None``
  takes the algorithm's default.

Parallel and distributed use
----------------------------
* One sampler shared by ``n_jobs > 1`` threads: every sampler method runs
  under one lock.
* At ask time the proposal (unit-cube point, metadata and a key of the search
  space) is written to the trial's system attribute ``hdbo:proposal``
  (one write). Every other RUNNING trial is a pending
  point for the engine (``Optimizer.add_pending``): its stored proposal with
  the same space key, else the encoding of its parameters if it has all of
  them. The engine never repeats a pending or told point.
* The engine's state is a pure function of (algorithm arguments, seed, told
  history with metadata, pending points), so any process sharing the storage
  (SQLite, JournalFileStorage, any RDB URL) rebuilds the same optimizer and
  continues the study exactly where it stood.
* One engine seed per study: each proposal the engine makes is stored with
  the seed it was made with, and every ask of any sampler on the study uses
  the seed of the lowest-numbered trial that holds one. So workers with
  different seeds (``seed=None`` draws one per sampler) and the reseeding of
  ``n_jobs > 1`` follow one initial design, whose axis order the seed draws,
  instead of each its own.
* Processes take turns: a trial entering relative sampling first marks
  itself (system attr ``hdbo:asking``, a timestamp refreshed every
  ``pending_wait_s / 4`` seconds while the ask runs), then waits until every
  lower-numbered RUNNING trial marked by another sampler has stored its
  proposal or let its mark go stale (older than ``pending_wait_s`` [10]
  seconds: its worker died mid-ask). So a proposal made while another is
  being computed sees it as pending instead of duplicating it.
* Dead workers: on a storage with a heartbeat
  (``RDBStorage(heartbeat_interval=...)``) the mid-ask mark also records the
  trial's heartbeat, so a trial whose worker dies while asking goes stale
  like one whose worker dies in the objective, and ``study.optimize`` in any
  worker fails it. FAIL trials are neither told nor pending, so the next
  proposal may retry a dead trial's point. Without a heartbeat a dead
  worker's trial stays RUNNING, a pending point, until it is failed by hand
  (``study.tell(number, state=TrialState.FAIL)``). So does, even with a
  heartbeat, a trial whose worker died in the instant between the trial's
  creation and its first heartbeat: Optuna never sees it as stale.
* Whenever another trial is RUNNING (a pending point, or one whose point is
  still unknown: created but not yet marked, or sampled only by the
  independent sampler so far), the ask generator is salted with the trial
  number (``Optimizer.ask(salt=...)``), so two processes that see the same
  state still draw different random numbers. A trial asked with no other
  trial running (a sequential study) is not salted: its proposal is the
  engine's plain next proposal. Either way the proposal is a pure function
  of (seed, history, pending points, trial number), so a rebuilt sampler
  makes it again.
* A proposal need not depend on the ask's random draws, so two processes that
  could not see each other's trial may land on the same point. After storing
  its proposal an ask waits for every lower-numbered trial of another sampler
  that is mid-ask, and if a lower-numbered trial (running or finished) holds
  the same point, it withdraws its proposal (setting ``hdbo:proposal`` to
  None, so that later trials wait for it again) and asks again. A
  lower-numbered trial not yet marked reads the study after that proposal
  was stored, so it avoids the point itself. No two trials keep one point
  unless Auto asks for one again on purpose (the replicate that judges
  noise, ``hdbo_engine.algorithms.auto.noise``), a mark went stale or the
  space has no unseen point left.
* The engine optimizer is cached between asks; new finished trials are told
  to it incrementally when the history extends what it has seen, and it is
  rebuilt from the history otherwise (changed search space, reordered
  history, :meth:`HDBOSampler.reseed_rng`). A rebuild (every new process
  pays one) costs about one ask: the algorithms record their fits in the
  proposal metas stored in ``hdbo:proposal`` and start from the latest one
  of the study's history (each algorithm's docstring and page, e.g.
  docs/algorithms/msucb.md, "Hyperparameters and rebuild").
* ``reseed_rng`` (called by Optuna for ``n_jobs > 1``) reseeds the
  independent sampler and draws a new engine seed for the studies this
  sampler starts; a study under way keeps its seed.

Multi-objective studies are rejected with ``ValueError``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
import uuid
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
    distribution_to_json,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.samplers._base import _process_constraints_after_trial  # Optuna's own storing
from optuna.search_space import IntersectionSearchSpace
from optuna.storages._heartbeat import is_heartbeat_enabled  # what study.optimize checks
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hdbo_engine import get_algorithm
from hdbo_engine.base import Optimizer
from hdbo_engine.registry import Entry, generate
from hdbo_engine.space import Categorical, Dimension, Integer, Real, Space
from hdbo_engine.util import is_int

__all__ = [  # and a ``<Class>Sampler`` per public registered algorithm (named_samplers)
    "HDBOSampler", "named_samplers", "ATTR_PROPOSAL", "ATTR_ASKING", "TrialSeededRandomSampler",
]

ATTR_PROPOSAL = "hdbo:proposal"  # {"x": cube point, "meta": engine meta, "space": space key,
#                                    "seed": engine seed}
ATTR_ASKING = "hdbo:asking"


# ----------------------------------------------------------------- codec
class _Param:
    """One Optuna distribution as one engine dimension (module docstring)."""

    def __init__(self, dist: BaseDistribution) -> None:
        self.dist = dist
        self.grid: tuple[float, float, int] | None = None  # (low, step, K) for stepped ranges
        if isinstance(dist, FloatDistribution):
            if dist.step is not None:
                k = int(round((dist.high - dist.low) / dist.step))
                self.grid = (dist.low, dist.step, k)
                self.dim: Dimension = Integer(0, k)
            else:
                self.dim = Real(dist.low, dist.high, log=dist.log)
        elif isinstance(dist, IntDistribution):
            if dist.step != 1:
                k = (dist.high - dist.low) // dist.step
                self.grid = (dist.low, dist.step, k)
                self.dim = Integer(0, k)
            else:
                self.dim = Integer(dist.low, dist.high, log=dist.log)
        elif isinstance(dist, CategoricalDistribution):
            self.dim = Categorical(dist.choices)
        else:
            raise TypeError(f"search_space: unsupported distribution {dist!r}; expected "
                            "FloatDistribution, IntDistribution or CategoricalDistribution")

    def to_engine(self, value: Any) -> Any:
        """Optuna value -> engine dimension value (grid index for stepped ranges)."""
        if self.grid is None:
            return value
        low, step, k = self.grid
        return int(min(max(round((value - low) / step), 0), k))

    def to_optuna(self, value: Any) -> Any:
        """Engine dimension value -> Optuna value (plain Python type, inside the distribution)."""
        if self.grid is not None:
            low, step, _ = self.grid
            if isinstance(self.dist, IntDistribution):
                return int(min(low + value * step, self.dist.high))
            return float(min(low + value * step, self.dist.high))
        if isinstance(self.dist, IntDistribution):
            return int(value)
        if isinstance(self.dist, FloatDistribution):
            return float(value)
        return value

    def contains(self, value: Any) -> bool:
        try:
            return bool(self.dist._contains(self.dist.to_internal_repr(value)))
        except (ValueError, TypeError):
            return False


class _Codec:
    """A relative search space (name -> distribution) and its engine :class:`Space`."""

    def __init__(self, search_space: dict[str, BaseDistribution]) -> None:
        self.names = sorted(search_space)
        self.params = [_Param(search_space[n]) for n in self.names]
        self.space = Space([p.dim for p in self.params], names=self.names)
        text = json.dumps([[n, distribution_to_json(search_space[n])] for n in self.names])
        self.key = hashlib.sha1(text.encode()).hexdigest()[:16]

    def centre(self) -> np.ndarray:
        """The cube's centre as the space snaps it: the engine's first design point."""
        return self.space.snap(np.full(self.space.n_columns, 0.5))[0]

    def decode(self, x: np.ndarray) -> dict[str, Any]:
        row = self.space.decode(np.asarray(x, dtype=float))[0]
        return {n: p.to_optuna(v) for n, p, v in zip(self.names, self.params, row, strict=True)}

    def encode(self, params: dict[str, Any]) -> np.ndarray | None:
        """Cube point of a trial's parameters, or None if one is missing or out of range."""
        row = []
        for n, p in zip(self.names, self.params, strict=True):
            if n not in params or not p.contains(params[n]):
                return None
            row.append(p.to_engine(params[n]))
        return self.space.encode([row])[0]


# ----------------------------------------------------------- engine cache
@dataclass
class _Entry:
    """One told history item: (trial number, x, y, meta, constraint values or None)."""

    number: int
    x: np.ndarray
    y: float
    meta: dict[str, Any]
    constraints: tuple[float, ...] | None = None

    def same_as(self, other: _Entry) -> bool:
        return (self.number == other.number and np.array_equal(self.x, other.x)
                and (self.y == other.y or (math.isnan(self.y) and math.isnan(other.y)))
                and self.meta == other.meta
                and (self.constraints is None) == (other.constraints is None)
                and np.array_equal(self.constraints or (), other.constraints or (),
                                   equal_nan=True))

    def constraint_row(self, width: int | None) -> tuple[float, ...] | None:
        """The constraints told to the engine: None without constraints in the study, NaN
        (violated) for a trial that has none in a constrained study (module docstring)."""
        if width is None:
            return None
        return self.constraints if self.constraints is not None else (math.nan,) * width


@dataclass
class _EngineCache:
    key: tuple[Any, ...]
    optimizer: Optimizer
    told: list[_Entry] = field(default_factory=list)


def _jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON types (numpy scalars and arrays converted)."""
    return json.loads(json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist")
                                 else str(o)))


def _check_single_objective(study: Study, sampler: BaseSampler) -> None:
    if len(study.directions) > 1:
        raise ValueError(f"{type(sampler).__name__} supports single-objective studies only; "
                         f"this study has {len(study.directions)} objectives (directions="
                         f"{[d.name.lower() for d in study.directions]})")


# ---------------------------------------------------------------- sampler
class HDBOSampler(BaseSampler):
    """Optuna sampler running the hdbo engine algorithm ``algorithm`` (see module docstring).

    Parameters (defaults in brackets)
    ---------------------------------
    algorithm: registered engine algorithm name, e.g. ``"msucb"``, ``"cobbo"``,
        ``"goucb"``, ``"bkb"``, ``"gpucb"``, ``"random"``; resolved at first use.
    seed: engine seed [None: drawn once per sampler]. Give every worker of a
        distributed study the same seed for exact continuation.
    n_startup_trials: the engine's initial design size ``n_init`` [None: the
        algorithm's default for the space and ``budget``; pass ``budget=n_trials``
        to size it for the study].
    independent_sampler: sampler for parameters outside the relative space
        [``TrialSeededRandomSampler(seed)`` with the engine seed: distinct draws per trial].
    constraints_func: a function of a finished :class:`~optuna.trial.FrozenTrial` returning
        its constraint values (a sequence of floats, feasible iff all ``<= 0``), called once
        per COMPLETE or PRUNED trial in :meth:`after_trial`, as in ``GPSampler`` (module
        docstring, "Constraints"; Optuna 5 prefers ``trial.set_constraint``, which needs no
        argument) [None].
    **algorithm_kwargs: passed to the algorithm's constructor (e.g. ``budget``,
        ``d`` for MS-UCB); checked by the algorithm at the first relative sample.

    ``pending_wait_s`` [10.0]: a mid-ask mark not refreshed for this long is
    stale (module docstring); set it on the instance.
    """

    pending_wait_s: float = 10.0

    def __init__(
        self,
        algorithm: str,
        *,
        seed: int | None = None,
        n_startup_trials: int | None = None,
        independent_sampler: BaseSampler | None = None,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        **algorithm_kwargs: Any,
    ) -> None:
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm: expected a registered algorithm name (str), "
                            f"got {algorithm!r}")
        if seed is not None and (not is_int(seed)
                                 or seed < 0):
            raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
        if n_startup_trials is not None and (
                not is_int(n_startup_trials) or n_startup_trials < 1):
            raise ValueError(f"n_startup_trials: expected an int >= 1 or None, "
                             f"got {n_startup_trials!r}")
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError(f"independent_sampler: expected an optuna BaseSampler, "
                            f"got {independent_sampler!r}")
        if constraints_func is not None:
            if not callable(constraints_func):
                raise TypeError(f"constraints_func: expected a callable or None, "
                                f"got {constraints_func!r:.80}")
            warnings.warn(_CONSTRAINTS_FUNC_WARNING, FutureWarning, stacklevel=2)
        self._constraints_func = constraints_func
        self.algorithm = algorithm
        self._seed = int(seed) if seed is not None else _fresh_seed()
        self._n_startup_trials = None if n_startup_trials is None else int(n_startup_trials)
        self._independent_sampler = independent_sampler or TrialSeededRandomSampler(self._seed)
        self._default_independent = independent_sampler is None
        self._algorithm_kwargs = dict(algorithm_kwargs)
        self._algorithm_cls: type[Optimizer] | None = None
        self._lock = threading.RLock()
        self._search_spaces: dict[tuple[int, int], IntersectionSearchSpace] = {}
        self._cache: _EngineCache | None = None
        self._told_memo: dict[tuple[Any, ...], _Entry | None] = {}
        self._token = uuid.uuid4().hex

    # ------------------------------------------------------------ plumbing
    @property
    def seed(self) -> int:
        """The engine seed of the studies this sampler starts (a study keeps the seed of its
        first proposal: module docstring, "Parallel and distributed use")."""
        return self._seed

    @property
    def algorithm_class(self) -> type[Optimizer]:
        """The engine optimizer class (imported at first use)."""
        if self._algorithm_cls is None:
            self._algorithm_cls = get_algorithm(self.algorithm)
        return self._algorithm_cls

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_lock=None, _cache=None, _told_memo={}, _search_spaces={})
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._token = uuid.uuid4().hex

    def reseed_rng(self) -> None:
        with self._lock:
            self._independent_sampler.reseed_rng()
            self._seed = _fresh_seed()

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        with self._lock:
            self._independent_sampler.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        with self._lock:
            self._independent_sampler.after_trial(study, trial, state, values)
            if self._constraints_func is not None:
                _process_constraints_after_trial(self._constraints_func, study, trial, state)
            if trial.number == 0 and ATTR_PROPOSAL not in trial.system_attrs:
                self._store_centre(study, trial)

    def _store_centre(self, study: Study, trial: FrozenTrial) -> None:
        """Store the first trial, drawn at the centre, as the engine's first design point
        (meta ``{"init": True, "centre": True}``), so that the engine is told it as its own
        centre; no seed is recorded (module docstring, "Search space")."""
        free = {n: d for n, d in trial.distributions.items() if not d.single()}
        if not free or not (self._default_independent and self._starts_at_centre()):
            return
        codec = _Codec(free)
        x = codec.centre()
        if any(trial.params[n] != v for n, v in codec.decode(x).items()):
            return  # values the user fixed or enqueued
        study._storage.set_trial_system_attr(trial._trial_id, ATTR_PROPOSAL, {
            "x": [float(v) for v in x], "meta": {"init": True, "centre": True},
            "space": codec.key})

    def recommended_trial(self, study: Study) -> FrozenTrial | None:
        """The finished trial whose point the engine recommends (``Optimizer.recommend``), or
        None before any trial in the relative search space has a finite value.

        ``study.best_trial`` is the best value told; under noise that is the luckiest draw.
        Where the engine judges the objective noisy (Auto's replicate, or ``noisy=True``),
        its recommendation is the told point of lowest posterior 0.9 quantile instead
        (``docs/algorithms/auto.md``, "Recommendation"); otherwise it is the best trial
        (the best feasible one under constraints).
        """
        _check_single_objective(study, self)
        with self._lock:
            free = self._relative_space(study)
            if not free:
                return None
            codec = _Codec(free)
            history, _, _, seed = self._read_study(study, None, codec)
            x = self._optimizer(codec, history, seed).recommend() if history else None
            if x is None:
                return None
            number = next(e.number for e in history if np.array_equal(e.x, x))
            return next(t for t in study.get_trials(deepcopy=False) if t.number == number)

    # ------------------------------------------------------- search space
    def infer_relative_search_space(self, study: Study,
                                    trial: FrozenTrial) -> dict[str, BaseDistribution]:
        _check_single_objective(study, self)
        with self._lock:
            return self._relative_space(study)

    def _relative_space(self, study: Study) -> dict[str, BaseDistribution]:
        """The study's intersection search space without single-value distributions."""
        key = (id(study._storage), study._study_id)
        finder = self._search_spaces.setdefault(key, IntersectionSearchSpace())
        return {name: d for name, d in finder.calculate(study).items() if not d.single()}

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        _check_single_objective(study, self)
        with self._lock:
            if trial.number == 0 and self._default_independent and self._starts_at_centre():
                codec = _Codec({param_name: param_distribution})
                return codec.decode(codec.centre())[param_name]
            return self._independent_sampler.sample_independent(study, trial, param_name,
                                                                param_distribution)

    def _starts_at_centre(self) -> bool:
        """Whether the engine's design starts at the centre of the cube: ``init_centre`` as
        given, else that of ``options`` or of the preset."""
        kwargs = self._algorithm_kwargs
        if "init_centre" in kwargs:
            return bool(kwargs["init_centre"])
        options = kwargs.get("options") or self.algorithm_class.preset_options(
            kwargs.get("preset", "practical"))
        return bool(options.init_centre)

    # ---------------------------------------------------- relative sample
    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        _check_single_objective(study, self)
        constants = {n: d.to_external_repr(d.low if not isinstance(d, CategoricalDistribution)
                                           else 0)
                     for n, d in search_space.items() if d.single()}
        free = {n: d for n, d in search_space.items() if not d.single()}
        if not free:
            return constants
        storage = study._storage
        with self._lock:
            codec = _Codec(free)
            mark = _AskMark(storage, trial._trial_id, self._token, self.pending_wait_s / 4)
            done = False
            try:
                x, known = self._propose(study, trial, codec)
                while self._held_by_earlier_trial(study, trial, codec, x, known):
                    # withdrawn first, so that later trials wait for the new proposal
                    storage.set_trial_system_attr(trial._trial_id, ATTR_PROPOSAL, None)
                    x, known = self._propose(study, trial, codec)
                done = True
            finally:
                mark.stop()
                if not done:  # nobody should wait for a proposal that will not come
                    storage.set_trial_system_attr(trial._trial_id, ATTR_ASKING, None)
            return {**codec.decode(x), **constants}

    def _propose(self, study: Study, trial: FrozenTrial, codec: _Codec
                 ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Wait for earlier asks, ask the engine with every other RUNNING trial pending, and
        store the proposal in the trial; returns the point to evaluate and the points the
        engine knew of (told and pending)."""
        self._wait_for_earlier_asks(study, trial)
        history, pending, unknown, seed = self._read_study(study, trial, codec)
        optimizer = self._optimizer(codec, history, seed)
        for x, meta in pending:
            optimizer.add_pending(x, meta)
        (proposal,) = optimizer.ask(salt=trial.number if unknown or pending else None)
        x = proposal.x.copy()
        fixed = trial.system_attrs.get("fixed_params", {})
        if fixed:  # the evaluated point keeps the user's fixed values
            values = codec.decode(x)
            values.update({n: v for n, v in fixed.items() if n in values})
            fixed_x = codec.encode(values)
            x = x if fixed_x is None else fixed_x
        study._storage.set_trial_system_attr(trial._trial_id, ATTR_PROPOSAL, {
            "x": [float(v) for v in x], "meta": _jsonable(proposal.meta), "space": codec.key,
            "seed": seed})
        return x, [e.x for e in history] + [p for p, _ in pending]

    def _held_by_earlier_trial(self, study: Study, trial: FrozenTrial, codec: _Codec,
                               x: np.ndarray, known: list[np.ndarray]) -> bool:
        """Whether a lower-numbered trial (running or finished) holds the stored point ``x``
        though the engine did not know that trial's point when it proposed ``x`` (it knows when
        the space has no unseen point left), read once every earlier ask of another sampler
        has stored its proposal.

        Two processes that could not see each other's trial when they read the study may
        land on the same point (a proposal need not depend on the ask's random draws); the
        higher-numbered trial then asks again. An earlier trial that is neither marked nor
        holding a proposal reads the study after ``x`` was stored, so it avoids ``x`` itself.
        """
        self._wait_for_earlier_asks(study, trial)
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,
                                                          TrialState.COMPLETE,
                                                          TrialState.PRUNED)):
            if t.number < trial.number:
                if t.state == TrialState.RUNNING:
                    point = self._trial_point(t, codec)
                else:
                    entry = self._finished_entry(study, t, codec, sign)
                    point = None if entry is None else (entry.x, entry.meta)
                if (point is not None and np.array_equal(point[0], x)
                        and not any(np.array_equal(point[0], k) for k in known)):
                    return True
        return False

    def _wait_for_earlier_asks(self, study: Study, trial: FrozenTrial) -> None:
        """Wait while a lower-numbered RUNNING trial of another sampler is mid-ask."""
        storage = study._storage
        waiting = [t._trial_id for t in study.get_trials(deepcopy=False,
                                                         states=(TrialState.RUNNING,))
                   if t.number < trial.number]
        while waiting:
            still = []
            for trial_id in waiting:
                t = storage.get_trial(trial_id)
                mark = t.system_attrs.get(ATTR_ASKING)
                if (t.state == TrialState.RUNNING and t.system_attrs.get(ATTR_PROPOSAL) is None
                        and isinstance(mark, list) and mark[0] != self._token
                        and time.time() - float(mark[1]) < self.pending_wait_s):
                    still.append(trial_id)
            waiting = still
            if waiting:
                time.sleep(0.02)

    def _read_study(self, study: Study, trial: FrozenTrial | None, codec: _Codec
                    ) -> tuple[list[_Entry], list[tuple[np.ndarray, dict]], bool, int]:
        """Told history (completion order), pending points (``trial`` left out), whether a
        RUNNING trial's point is unknown, and the study's engine seed: the one stored with
        the lowest-numbered trial's proposal that records one, else this sampler's."""
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        finished: list[tuple[Any, _Entry]] = []
        pending: list[tuple[np.ndarray, dict]] = []
        unknown = False
        seed: tuple[int, int] | None = None  # (trial number, seed)
        for t in study.get_trials(deepcopy=False):
            if trial is not None and t.number == trial.number:
                continue
            stored = t.system_attrs.get(ATTR_PROPOSAL)
            if (isinstance(stored, dict) and is_int(stored.get("seed"))
                    and (seed is None or t.number < seed[0])):
                seed = (t.number, int(stored["seed"]))
            if t.state in (TrialState.COMPLETE, TrialState.PRUNED):
                entry = self._finished_entry(study, t, codec, sign)
                if entry is not None:
                    finished.append(((t.datetime_complete is None, t.datetime_complete,
                                      t.number), entry))
            elif t.state == TrialState.RUNNING:
                point = self._trial_point(t, codec)
                if point is None:
                    unknown = True
                else:
                    pending.append(point)
        finished.sort(key=lambda item: item[0])
        return ([entry for _, entry in finished], pending, unknown,
                self._seed if seed is None else seed[1])

    def _finished_entry(self, study: Study, t: FrozenTrial, codec: _Codec, sign: float
                        ) -> _Entry | None:
        """:meth:`_told_entry` of a finished trial, computed once per trial and space."""
        memo_key = (id(study._storage), t._trial_id, codec.key, sign)
        if memo_key not in self._told_memo:
            self._told_memo[memo_key] = self._told_entry(t, codec, sign)
        return self._told_memo[memo_key]

    @staticmethod
    def _trial_point(t: FrozenTrial, codec: _Codec) -> tuple[np.ndarray, dict] | None:
        """(x, meta) of a trial: its stored proposal if its parameters agree, else its params."""
        encoded = codec.encode(t.params)
        stored = t.system_attrs.get(ATTR_PROPOSAL)
        if isinstance(stored, dict) and stored.get("space") == codec.key:
            x = np.asarray(stored["x"], dtype=float)
            if encoded is None and t.state == TrialState.RUNNING:
                return x, dict(stored["meta"])  # its parameters are not all set yet
            if encoded is not None and np.array_equal(codec.encode(codec.decode(x)), encoded):
                return x, dict(stored["meta"])
        return None if encoded is None else (encoded, {})

    def _told_entry(self, t: FrozenTrial, codec: _Codec, sign: float) -> _Entry | None:
        point = self._trial_point(t, codec)
        if point is None:
            return None
        y = sign * float(t.value) if t.state == TrialState.COMPLETE else math.nan
        if y == -math.inf:  # refused by the engine (module docstring, "History")
            warnings.warn(f"trial {t.number}: value {t.value} is told to the engine as a failed "
                          "evaluation (an infinitely good value cannot be modelled)",
                          UserWarning, stacklevel=2)
            y = math.nan
        constraints = t.constraints
        values = tuple(float(constraints[k]) for k in sorted(constraints, key=_constraint_order))
        return _Entry(t.number, point[0], y, point[1], values or None)

    def _optimizer(self, codec: _Codec, history: list[_Entry], seed: int) -> Optimizer:
        """The cached engine optimizer with ``seed`` told exactly ``history`` (extended or
        rebuilt)."""
        widths = sorted({len(e.constraints) for e in history if e.constraints is not None})
        if len(widths) > 1:
            raise ValueError(f"constraints: the number of constraints must be the same for "
                             f"all trials; the study's trials have {widths}")
        width = widths[0] if widths else None
        key = (codec.key, seed, width)
        cache = self._cache
        if (cache is None or cache.key != key or len(cache.told) > len(history)
                or not all(a.same_as(b) for a, b in zip(cache.told, history, strict=False))):
            design = {} if self._n_startup_trials is None else {"n_init": self._n_startup_trials}
            optimizer = self.algorithm_class(codec.space, seed=seed, **design,
                                             **self._algorithm_kwargs)
            cache = self._cache = _EngineCache(key, optimizer)
            if len(self._told_memo) > 100_000:
                self._told_memo.clear()
        cache.optimizer.clear_pending()
        for entry in history[len(cache.told):]:
            cache.optimizer.tell(entry.x, entry.y, entry.meta,
                                 constraints=entry.constraint_row(width))
            cache.told.append(entry)
        return cache.optimizer


class _AskMark:
    """Marks a trial as mid-ask (``ATTR_ASKING``) and refreshes the mark until stopped.

    On a storage with a heartbeat it records the trial's heartbeat with each
    write, at least every heartbeat interval (module docstring, "Parallel and distributed use").
    """

    def __init__(self, storage: Any, trial_id: int, token: str, interval: float) -> None:
        self._storage, self._trial_id, self._token = storage, trial_id, token
        self._heartbeat = is_heartbeat_enabled(storage)
        if self._heartbeat:
            interval = min(interval, float(storage.get_heartbeat_interval()))
        self._interval = interval
        self._stopped = threading.Event()
        self._write()
        self._thread = threading.Thread(target=self._refresh, daemon=True)
        self._thread.start()

    def _write(self) -> None:
        self._storage.set_trial_system_attr(self._trial_id, ATTR_ASKING,
                                            [self._token, time.time()])
        if self._heartbeat:
            self._storage.record_heartbeat(self._trial_id)

    def _refresh(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self._write()
            except Exception:  # a storage hiccup (a locked SQLite file): try at the next beat
                continue

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()


class TrialSeededRandomSampler(BaseSampler):
    """Uniform independent draws seeded by ``(seed, trial number, parameter name)``.

    Trial numbers are unique in a study, so workers that share a seed (on one
    machine or several) never draw the same first points, and a re-run draws
    what an uninterrupted run would have. ``reseed_rng`` draws a new seed.
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (not is_int(seed)
                                 or seed < 0):
            raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
        self._seed = _fresh_seed() if seed is None else int(seed)

    def reseed_rng(self) -> None:
        self._seed = _fresh_seed()

    def infer_relative_search_space(self, study: Study,
                                    trial: FrozenTrial) -> dict[str, BaseDistribution]:
        return {}

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        return {}

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        key = (trial.number, zlib.crc32(param_name.encode()))
        seed = int(np.random.SeedSequence(self._seed, spawn_key=key).generate_state(1)[0])
        return RandomSampler(seed=seed).sample_independent(study, trial, param_name,
                                                           param_distribution)


_CONSTRAINTS_FUNC_WARNING = (
    "constraints_func has been deprecated in Optuna v5.0.0, whose samplers take it the same "
    "way; use optuna.trial.Trial.set_constraint instead, which every sampler of hdbo reads.")


def _constraint_order(key: str) -> tuple[int, int, str]:
    """Constraint keys in a fixed order: ``constraints_func``'s "0", "1", ... by number, then
    ``set_constraint``'s names alphabetically."""
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2**63))


# ------------------------------------------------------- named samplers
class _NamedSampler(HDBOSampler):
    algorithm_name: ClassVar[str]

    def __init__(
        self,
        seed: int | None = None,
        n_startup_trials: int | None = None,
        independent_sampler: BaseSampler | None = None,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        **algorithm_kwargs: Any,
    ) -> None:
        super().__init__(self.algorithm_name, seed=seed, n_startup_trials=n_startup_trials,
                         independent_sampler=independent_sampler,
                         constraints_func=constraints_func, **algorithm_kwargs)


def _named_sampler(entry: Entry) -> type[HDBOSampler]:
    """``<Class>Sampler``: :class:`HDBOSampler` with the registered algorithm fixed."""
    name = f"{entry.class_name}Sampler"
    return type(name, (_NamedSampler,), {
        "__module__": __name__, "__qualname__": name, "algorithm_name": entry.name,
        "__doc__": f"{entry.class_name} (engine algorithm ``{entry.name}``) as an Optuna "
                   f"sampler; see :class:`HDBOSampler` and ``{entry.module}`` for "
                   "``algorithm_kwargs``."})


_GENERATED: dict[tuple[str, str], type[HDBOSampler]] = {}


def named_samplers() -> dict[str, type[HDBOSampler]]:
    """``<Class>Sampler`` for every public registered algorithm (``AutoSampler``, ...)."""
    return generate(_GENERATED, lambda e: f"{e.class_name}Sampler", _named_sampler)


def __getattr__(name: str) -> Any:
    """The registry's samplers, generated on first access (``from ... import AutoSampler``)."""
    classes = named_samplers()
    if name in classes:
        return classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(named_samplers()))
