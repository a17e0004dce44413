"""Nevergrad optimizers backed by the hdbo engine (Auto, MS-UCB, CobBO, GO-UCB, BKB).

``import hdbo_adapters.nevergrad`` registers one optimizer per public algorithm of
:mod:`hdbo_engine.registry` in ``nevergrad.optimizers.registry``: ``HDBO`` (Auto, the
recommended one), ``MSUCB``, ``CobBO``, ``GOUCB`` and ``BKB``; :func:`register` registers
an algorithm added to the engine registry later. Configurable families follow
Nevergrad's ``ConfiguredOptimizer`` style::

    import nevergrad as ng
    import hdbo_adapters.nevergrad  # registers the optimizers
    opt = ng.optimizers.registry["HDBO"](parametrization=50, budget=200)
    opt = ParametrizedMSUCB(d=10, alpha=1)(parametrization=50, budget=200, num_workers=4)
    opt = ParametrizedHDBO("gpucb")(parametrization=5, budget=50)   # any engine algorithm

All of them build one :class:`HDBOOptimizer`, a ``nevergrad.optimization.base.Optimizer``
subclass that is generic over the engine algorithms
(:func:`hdbo_engine.get_algorithm`; the name is resolved when the
optimizer is constructed, so a family can be registered before its engine
module is imported). The adapter contains no algorithm logic (``docs/ARCHITECTURE.md``).

Space mapping
-------------
The engine works in the unit cube ``[0, 1]^D`` with ``D`` the dimension of the
parametrization's *standardized data*. The map between the two is Nevergrad's
own :class:`nevergrad.p.helpers.Normalizer` (the helper Nevergrad's samplers and
its ``BO`` use):

* **bounded arrays** (``Array.set_bounds``, ``Scalar(lower=, upper=)``,
  ``Log(lower=, upper=)``) are mapped exactly: the cube coordinate is the
  array's normalized value, i.e. affine in the value (in log space for ``Log``);
* **unbounded arrays** go through a bounding transform of the standardized
  data, ``data = scale * F^-1(u)``: ``unbounded="gaussian"`` (default) is
  ``nevergrad.parametrization.transforms.CumulativeDensity`` (``F`` the
  standard normal cdf, clipped at ``1e-9``), so uniform cube points are
  Nevergrad's normal samples of the standardized space with standard
  deviation ``scale``, and the cube's faces sit at +-6.0 ``scale`` from the
  parametrization's initial value. ``unbounded="cauchy"`` uses the Cauchy cdf
  ``0.5 + arctan(x) / pi``, i.e. the ``ArctanBound(0, 1)`` map of Nevergrad's
  ``Normalizer`` default, with heavy tails (faces at about +-3e8 ``scale``).
  Told points outside that reach are clipped onto the cube's faces.
* ``unbounded_scale="auto"`` (default) takes ``scale`` from Nevergrad's
  ``MetaRecentering`` rule, ``(1 + log budget) / (4 log D)``
  (``oneshot.SamplingSearch(autorescale=True)``) capped at 1 (1.0 without a
  budget or for ``D = 1``): with a small budget in many dimensions the design is
  concentrated around the initial value. Measured reason for this default
  (``examples/nevergrad_benchmark.py``): with ``scale = 1`` the algorithms'
  model-based proposals put coordinates on the cube's faces, i.e. 6 standard
  deviations out, and MS-UCB lost to RandomSearch on rotated ArtificialFunctions
  with 30-150 variables at budget 100 (27% of cases won); with the rule it
  beats RandomSearch (89%) but only matches MetaRecentering, i.e. at that
  budget the gain comes from the recentered prior rather than from the model.
  A number fixes ``scale`` (1.0 = Nevergrad's prior).
* **mixed instrumentations** (``Instrumentation``, ``Dict``, ``Tuple``) are
  mapped block by block. Int-cast scalars (``set_integer_casting``) and
  ``Choice``/``TransitionChoice`` are handled by Nevergrad's own continuous
  relaxation: the engine optimizes the continuous standardized data and the
  parametrization's layers round it or pick the choice. A non-deterministic
  parametrization (the default ``Choice`` samples its value from softmax
  weights; noisy functions) gets an ``InefficientSettingsWarning`` advising
  ``Choice(..., deterministic=True)``, as Nevergrad's own ``BO`` does.

Ask/tell
--------
* Each ``ask`` is one engine ``ask(1)``; asked-but-not-told candidates stay
  pending in the engine, so ``num_workers > 1`` never receives duplicates
  (the algorithms' own parallel rule, e.g. kriging believer, applies).
* ``budget`` is passed to the engine algorithm (CobBO's ``tau``, GO-UCB's
  ``T`` and any other budget-dependent schedule use it).
* A told-but-not-asked candidate (``tell`` of a spawned child, or of a
  ``suggest``-ion) is mapped to the cube and added to the history; Nevergrad
  counts it in ``num_tell_not_asked``.
* Losses: Nevergrad's ``tell`` clips NaN and ``+inf`` to ``5e20`` (with a
  ``LossTooLargeWarning``) and its archive ranks them last. The adapter tells
  the engine any loss ``>= 5e20`` or non-finite as a *failed* evaluation, so
  the engine imputes the worst finite loss seen instead of fitting its model
  to ``5e20``. ``-inf`` (which Nevergrad passes through and its archive ranks
  first) is also a failure for the engine's model, whose values must be finite.
* Constraints (``docs/constraints.md``): ``tell(candidate, loss, constraint_violation=cv)``
  keeps Nevergrad's own handling (a penalised loss, an infeasible candidate kept out of the
  archive and so out of the recommendation), and the engine is told the unpenalised loss with
  ``constraints=cv``: Nevergrad's ``cv > 0`` is violated, the engine's ``c <= 0`` is
  feasible, the same numbers. Once a ``constraint_violation`` was told, every finite loss
  needs one of the same length (a ``ValueError`` naming ``constraint_violation`` otherwise,
  raised before Nevergrad records anything). A candidate that also breaks the
  parametrization's own cheap constraints is told with Nevergrad's penalised loss.
* ``provide_recommendation`` / ``recommend``: the engine's recommendation
  (``Optimizer.recommend``) where it is not the engine's best told point, which is Auto's
  pick under noise (the told point of lowest posterior 0.9 quantile, not the luckiest
  draw); otherwise the best told candidate from Nevergrad's archive (``minimum`` for
  deterministic parametrizations, ``pessimistic`` otherwise), the same rule as for
  Nevergrad's own model-based optimizers.
* ``n_init`` (initial design): None leaves it to the algorithm (its
  default, which may depend on the budget and dimension, e.g. the axis
  design's ``max(20, min(2 D + 1, budget // 4))`` for MS-UCB, or GO-UCB's
  paper preset's ``ceil(sqrt(T))``); a budget below it means the design only.
* Seeding: ``seed=None`` (default) draws the engine seed from
  ``optimizer.parametrization.random_state`` at the first ask or tell, so
  Nevergrad's usual ``optimizer.parametrization.random_state.seed(12)`` after
  construction makes runs reproducible; an explicit ``seed`` gives the same
  proposals as the native engine loop with that seed.
* Pickling (``dump`` / ``load``): the engine is stored as its history (seed,
  told points, values and metas in order, pending points) and rebuilt with
  ``Optimizer.from_history`` on load, the engine's contract for continuing in
  a new process (``docs/ARCHITECTURE.md``); this also covers engines holding unpicklable
  objects (e.g. torch modules). The next proposal after a load equals the one
  the original optimizer would make.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from nevergrad.common import errors as ng_errors
from nevergrad.common import typing as ng_typing
from nevergrad.optimization import base as ng_base
from nevergrad.parametrization import helpers as ng_helpers
from nevergrad.parametrization import parameter as ng_p
from nevergrad.parametrization import transforms as ng_transforms

from hdbo_engine import get_algorithm
from hdbo_engine.base import Optimizer as EngineOptimizer
from hdbo_engine.constraints import check_constraints
from hdbo_engine.registry import Entry, generate
from hdbo_engine.util import is_int

__all__ = [  # and Parametrized<Class> per public registered algorithm (families)
    "HDBOOptimizer",
    "ParametrizedHDBO",
    "families",
    "auto_scale",
    "register",
]

#: Nevergrad's ``tell`` replaces NaN and too-large losses by this value.
NEVERGRAD_LOSS_CLIP = 5.0e20
UNBOUNDED_TRANSFORMS = ("gaussian", "cauchy")
_CDF_EPS = 1e-9
_RESERVED = ("parametrization", "budget", "num_workers", "algorithm", "space")


def _check_adapter_args(seed: Any, n_init: Any, unbounded: Any, unbounded_scale: Any,
                        options: dict[str, Any]) -> None:
    if seed is not None and (not is_int(seed)
                             or seed < 0):
        raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
    if n_init is not None and (not is_int(n_init) or n_init < 1):
        raise ValueError(f"n_init: expected an int >= 1 or None, got {n_init!r}")
    if unbounded not in UNBOUNDED_TRANSFORMS:
        raise ValueError(f"unbounded: expected one of {UNBOUNDED_TRANSFORMS}, got {unbounded!r}")
    if unbounded_scale != "auto" and (
            isinstance(unbounded_scale, bool) or not isinstance(unbounded_scale, (int, float))
            or not np.isfinite(unbounded_scale) or unbounded_scale <= 0):
        raise ValueError(f"unbounded_scale: expected 'auto' or a finite number > 0, "
                         f"got {unbounded_scale!r}")
    for key in _RESERVED:
        if key in options:
            raise TypeError(f"{key}: set by Nevergrad or the adapter, not an algorithm option")


def auto_scale(budget: int | None, dimension: int) -> float:
    """Nevergrad's ``MetaRecentering`` rule ``(1 + log budget) / (4 log D)``, capped at 1.

    The rule of ``nevergrad.optimization.oneshot.SamplingSearch(autorescale=True)``
    (Cauwet et al., "Fully parallel hyperparameter search: reshaped space-filling",
    ICML 2020) for sampling an unbounded standardized space with a small budget.
    The cap (not in Nevergrad) keeps the cube within Nevergrad's standard prior
    when the budget is large for the dimension (e.g. 300 evaluations in 2-d
    would give 2.4, spreading a model's resolution over +-14 standard
    deviations). 1.0 without a budget or for ``D = 1``.
    """
    if budget is None or dimension < 2:
        return 1.0
    return float(min(1.0, (1.0 + np.log(budget)) / (4.0 * np.log(dimension))))


def _unbounded_transform(name: str, scale: float) -> ng_transforms.Transform:
    return ng_transforms.CumulativeDensity(eps=_CDF_EPS, scale=scale, density=name)


class HDBOOptimizer(ng_base.Optimizer):
    """Nevergrad optimizer running an hdbo engine algorithm (see the module docstring).

    Parameters
    ----------
    parametrization, budget, num_workers: as for every Nevergrad optimizer.
    algorithm: engine algorithm name (``hdbo_engine.available()``: auto, msucb,
        cobbo, goucb, bkb, gpucb, random) ["auto"].
    seed: engine seed; None draws it from the parametrization's random state
        at first use [None].
    n_init: initial uniform design; None = the algorithm's default [None].
    unbounded: bounding transform for unbounded arrays, "gaussian" or "cauchy"
        ["gaussian"].
    unbounded_scale: scale of that transform in standardized units, or "auto"
        for Nevergrad's MetaRecentering rule (:func:`auto_scale`) ["auto"].
    **options: keyword arguments of the engine algorithm (e.g. ``d``, ``alpha``
        for MS-UCB).
    """

    def __init__(
        self,
        parametrization: ng_base.IntOrParameter,
        budget: int | None = None,
        num_workers: int = 1,
        *,
        algorithm: str = "auto",
        seed: int | None = None,
        n_init: int | None = None,
        unbounded: str = "gaussian",
        unbounded_scale: float | str = "auto",
        **options: Any,
    ) -> None:
        super().__init__(parametrization, budget=budget, num_workers=num_workers)
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm: expected an engine algorithm name, got {algorithm!r}")
        _check_adapter_args(seed, n_init, unbounded, unbounded_scale, options)
        try:
            self._algorithm_cls: type[EngineOptimizer] = get_algorithm(algorithm)
        except ImportError as err:
            raise ImportError(
                f"algorithm: {algorithm!r} is registered but its engine module cannot be "
                f"imported in this installation ({err})"
            ) from err
        self.algorithm = self._algorithm_cls.name
        self.unbounded = unbounded
        self.unbounded_scale = (auto_scale(budget, self.dimension) if unbounded_scale == "auto"
                                else float(unbounded_scale))
        self._normalizer = ng_helpers.Normalizer(
            self.parametrization,
            unbounded_transform=_unbounded_transform(unbounded, self.unbounded_scale),
        )
        if not ng_helpers.analyze(self.parametrization).deterministic:
            warnings.warn(
                f"{type(self).__name__}: the parametrization is not deterministic (e.g. a "
                "Choice sampled from softmax weights, or a noisy function); the engine's model "
                "sees noisy values. Use ng.p.Choice(..., deterministic=True) for categorical "
                "choices.",
                ng_errors.InefficientSettingsWarning,
                stacklevel=2,
            )
        self._engine_kwargs: dict[str, Any] = dict(options, budget=budget)
        if n_init is not None:
            self._engine_kwargs["n_init"] = n_init
        # Validate the options now (engine constructors raise ValueError / TypeError).
        self._algorithm_cls(self.dimension, seed=0, **self._engine_kwargs)
        self._seed = None if seed is None else int(seed)
        self._engine: EngineOptimizer | None = None
        self._violation: np.ndarray | None = None  # the constraint_violation of a tell

    # ----------------------------------------------------------------- engine
    @property
    def engine(self) -> EngineOptimizer:
        """The engine optimizer (created at the first ask or tell)."""
        if self._engine is None:
            seed = self._seed
            if seed is None:
                seed = int(self._rng.randint(2**31 - 1))
            self._engine = self._algorithm_cls(self.dimension, seed=seed, **self._engine_kwargs)
        return self._engine

    def to_unit(self, data: ng_typing.ArrayLike) -> np.ndarray:
        """Standardized data (D,) -> unit-cube point (D,) (module docstring)."""
        return np.clip(self._normalizer.forward(np.asarray(data, dtype=float)), 0.0, 1.0)

    def from_unit(self, x: ng_typing.ArrayLike) -> np.ndarray:
        """Unit-cube point (D,) -> standardized data (D,) (module docstring)."""
        return self._normalizer.backward(np.clip(np.asarray(x, dtype=float), 0.0, 1.0))

    @staticmethod
    def engine_loss(loss: float) -> float:
        """The value told to the engine: NaN / inf / clipped losses become failures (inf)."""
        loss = float(loss)
        return loss if np.isfinite(loss) and loss < NEVERGRAD_LOSS_CLIP else float("inf")

    # --------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        engine = state.pop("_engine")
        state["_engine_history"] = None if engine is None else {
            "seed": engine.seed,
            "X": engine.X.copy(),
            "y": engine.y.copy(),
            "metas": [dict(m) for m in engine.metas],
            "constraints": None if engine.constraints is None else engine.constraints.copy(),
            "pending": [(p.x.copy(), dict(p.meta)) for p in engine._pending],
        }
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        history = state.pop("_engine_history", None)
        self.__dict__.update(state)
        self._engine = None
        if history is not None:
            engine = self._algorithm_cls.from_history(
                self.dimension, history["X"], history["y"], history["metas"],
                constraints=history.get("constraints"), seed=history["seed"],
                **self._engine_kwargs)
            for x, meta in history["pending"]:
                engine.add_pending(x, meta)
            self._engine = engine

    # ------------------------------------------------------------ constraints
    def tell(self, candidate: ng_p.Parameter, loss: ng_typing.Loss,
             constraint_violation: ng_typing.Loss | None = None,
             penalty_style: ng_typing.ArrayLike | None = None) -> None:
        """Nevergrad's ``tell``; ``constraint_violation`` also reaches the engine as its
        constraints (module docstring, "Ask/tell"), checked before anything is recorded."""
        self._violation = self._check_violation(constraint_violation, loss)
        try:
            super().tell(candidate, loss, constraint_violation, penalty_style)
        finally:
            self._violation = None

    def _check_violation(self, constraint_violation: Any, loss: Any) -> np.ndarray | None:
        """``constraint_violation`` as the engine's (1, m) constraints, or None; a
        ``ValueError``/``TypeError`` naming it where the engine would refuse the tell."""
        try:
            value = self.engine_loss(float(np.asarray(loss, dtype=float).ravel()[0]))
        except (TypeError, ValueError, IndexError):
            return None  # Nevergrad's own tell reports a bad loss
        try:
            C = None
            if constraint_violation is not None:
                told = self._engine.constraints if self._engine is not None else None
                C = check_constraints(constraint_violation, 1,
                                      None if told is None else told.shape[1])
            if self._engine is not None:
                self._engine._told_constraints(C, np.array([value]))
        except (TypeError, ValueError) as err:
            message = str(err).replace("constraints:", "constraint_violation:", 1)
            raise type(err)(message) from None
        return C

    def _engine_value(self, candidate: ng_p.Parameter, loss: ng_typing.FloatLoss) -> float:
        """The value told to the engine: the unpenalised loss where a constraint_violation
        came with it (module docstring), else the loss Nevergrad passes on."""
        if self._violation is None or (self.budget is not None
                                       and not candidate.satisfies_constraints(
                                           self.parametrization)):
            return self.engine_loss(loss)
        return self.engine_loss(candidate.loss)

    # ------------------------------------------------------ nevergrad hooks
    def _internal_ask_candidate(self) -> ng_p.Parameter:
        (proposal,) = self.engine.ask(1)
        candidate = self.parametrization.spawn_child().set_standardized_data(
            self.from_unit(proposal.x)
        )
        candidate._meta["hdbo_x"] = proposal.x.copy()
        return candidate

    def _internal_tell_candidate(self, candidate: ng_p.Parameter,
                                 loss: ng_typing.FloatLoss) -> None:
        x = candidate._meta.get("hdbo_x")
        if x is None:
            x = self.to_unit(candidate.get_standardized_data(reference=self.parametrization))
        self.engine.tell(x, self._engine_value(candidate, loss), constraints=self._violation)

    def _internal_tell_not_asked(self, candidate: ng_p.Parameter,
                                 loss: ng_typing.FloatLoss) -> None:
        data = candidate.get_standardized_data(reference=self.parametrization)
        self.engine.tell(self.to_unit(data), self._engine_value(candidate, loss),
                         constraints=self._violation)

    def _internal_provide_recommendation(self) -> np.ndarray | None:
        """The engine's recommendation as standardized data where it is not the engine's best
        told point; None otherwise, which leaves Nevergrad's own rule (module docstring)."""
        if self._engine is None or self._engine.best is None:
            return None
        x = self._engine.recommend()
        if x is None or np.array_equal(x, self._engine.best[0]):
            return None
        return self.from_unit(x)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"algorithm": self.algorithm}
        if self._engine is not None:
            info["engine_seed"] = self._engine.seed
        return info


# ------------------------------------------------------------------ families
class ParametrizedHDBO(ng_base.ConfiguredOptimizer):
    """Configured family over any engine algorithm, e.g. ``ParametrizedHDBO("gpucb")``.

    Keyword arguments are those of :class:`HDBOOptimizer` (``seed``, ``n_init``,
    ``unbounded``) and of the engine algorithm. The representation lists the
    non-default settings, as Nevergrad's families do. Options are validated
    here when given (this imports the algorithm's engine module); the registered
    default instances resolve their algorithm only when an optimizer is built.
    """

    algorithm: ClassVar[str | None] = None

    def __init__(self, algorithm: str = "auto", *, seed: int | None = None,
                 n_init: int | None = None, unbounded: str = "gaussian",
                 unbounded_scale: float | str = "auto", **options: Any) -> None:
        self._setup({"algorithm": algorithm}, seed, n_init, unbounded, unbounded_scale, options)

    def _setup(self, fixed: dict[str, Any], seed: int | None, n_init: int | None,
               unbounded: str, unbounded_scale: float | str,
               options: dict[str, Any]) -> None:
        _check_adapter_args(seed, n_init, unbounded, unbounded_scale, options)
        # ConfiguredOptimizer.__init__ reads defaults from the signature, which cannot
        # list the engine options; the attributes it sets are set here instead.
        self._OptimizerClass = HDBOOptimizer
        self._as_config = False
        self._config = {**fixed, "seed": seed, "n_init": n_init, "unbounded": unbounded,
                        "unbounded_scale": unbounded_scale, **options}
        defaults = {"algorithm": "auto", "seed": None, "n_init": None, "unbounded": "gaussian",
                    "unbounded_scale": "auto"}
        shown = {k: v for k, v in self._config.items() if k not in defaults or v != defaults[k]}
        params = ", ".join(f"{k}={v!r}" for k, v in sorted(shown.items()))
        self.name = f"{type(self).__name__}({params})"
        if options or "algorithm" in fixed:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=ng_errors.InefficientSettingsWarning)
                self(parametrization=4, budget=100)

    def config(self) -> dict[str, Any]:
        """Keyword arguments given to :class:`HDBOOptimizer` (algorithm included)."""
        out = dict(self._config)
        if self.algorithm is not None:
            out["algorithm"] = self.algorithm
        return out


class _FixedAlgorithmFamily(ParametrizedHDBO):
    def __init__(self, *, seed: int | None = None, n_init: int | None = None,
                 unbounded: str = "gaussian", unbounded_scale: float | str = "auto",
                 **options: Any) -> None:
        self._setup({}, seed, n_init, unbounded, unbounded_scale, options)


def _family(entry: Entry) -> type[_FixedAlgorithmFamily]:
    """``Parametrized<Class>``: the family with the registered algorithm fixed."""
    name = f"Parametrized{entry.class_name}"
    return type(name, (_FixedAlgorithmFamily,), {
        "__module__": __name__, "__qualname__": name, "algorithm": entry.name,
        "__doc__": f"{entry.class_name} (engine algorithm ``{entry.name}``); options as "
                   f"``{entry.module}``."})


_FAMILIES: dict[tuple[str, str], type[_FixedAlgorithmFamily]] = {}


def families() -> dict[str, type[_FixedAlgorithmFamily]]:
    """Nevergrad registry name -> family, one per public registered algorithm (``HDBO`` is
    Auto, ``MSUCB``, ``CobBO``, ``GOUCB``, ``BKB``, ...)."""
    return generate(_FAMILIES, lambda e: e.nevergrad_name, _family)


def register() -> dict[str, ParametrizedHDBO]:
    """Register (or re-register, e.g. after ``importlib.reload``) the default instances.

    A name already held by an object that is not one of these families is left
    alone with a ``RuntimeWarning``. Returns the registered instances.
    """
    registry = ng_base.registry
    out: dict[str, ParametrizedHDBO] = {}
    for name, family in families().items():
        existing = registry.get(name)
        if existing is not None:
            if type(existing).__module__ != __name__ or type(existing).__name__ != family.__name__:
                warnings.warn(f"nevergrad registry already holds {name!r} ({existing!r}); "
                              "not replacing it", RuntimeWarning, stacklevel=2)
                continue
            registry.unregister(name)
        instance = family().set_name(name)
        registry.register_name(name, instance)
        out[name] = instance
    return out


_instances = register()


def __getattr__(name: str) -> Any:
    """``Parametrized<Class>`` families and the registered instances (``HDBO``, ``MSUCB``,
    ...), generated from the engine registry on first access."""
    named = {f.__name__: f for f in families().values()}
    if name in named:
        return named[name]
    if name in families():
        return ng_base.registry[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
