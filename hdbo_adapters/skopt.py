"""scikit-optimize adapter: drop-in ``skopt.Optimizer`` objects for every engine algorithm.

``HDBOOptimizer(dimensions, algorithm="auto", ...)`` runs any registered engine
algorithm (:func:`hdbo_engine.get_algorithm`) behind skopt's ask/tell API. For each
public algorithm of :mod:`hdbo_engine.registry` this module also offers, generated from
the registry (:func:`named_objects`), ``<Class>Optimizer`` with the algorithm fixed
(``AutoOptimizer``, ``MSUCBOptimizer``, ...) and ``<name>_minimize`` mirroring
``skopt.gp_minimize`` (``auto_minimize``, ``msucb_minimize``, ...). The algorithm module
is imported when an optimizer is built, not when this module is imported.

Data flow (``docs/ARCHITECTURE.md``): skopt dimensions -> ``skopt.space.Space`` (parsing,
validation, ``normalize`` transform as in ``gp_minimize``) -> the engine's
``Space`` codec -> unit cube -> engine algorithm -> cube -> codec -> skopt
values. No algorithm logic lives here.

Choices, where skopt's own behaviour does not carry over:

* **Priors.** ``log-uniform`` Real/Integer dimensions become log-scaled
  engine dimensions (the initial design is then log-uniform, as in skopt);
  the base of the logarithm does not change the map. Categorical priors are
  ignored (the initial design is uniform over categories).
* **n_initial_points** (default: the algorithm's own initial design size
  for this space and ``budget``, e.g. 125 for MS-UCB at D = 100 with a
  budget of 500, 20 for its paper preset; ``*_minimize`` takes ``n_calls``
  as the budget) counts told points, as in skopt; 0 is accepted and
  means the first point of an empty optimizer is still random (the engine
  needs one observation).
* **random_state**: an int is the engine seed, so the adapter proposes
  exactly the points of a native engine loop with that seed; a
  ``RandomState`` or None yields a seed drawn from it.
* **ask caching.** Repeated asks without a tell return the same points,
  also during the initial design (skopt draws a fresh random point there).
  Asked points stay *pending* in the engine until told, so an
  ``ask(n_points=k)`` batch holds ``k`` distinct points that also differ from
  other untold ones; :meth:`HDBOOptimizer.update_next` forgets them.
  ``strategy`` ("cl_min", "cl_mean", "cl_max") is validated as in skopt, but
  batches follow the algorithm's own rule for pending points, not a
  constant liar.
* **tell** validates exactly as skopt (same ``ValueError`` messages for
  out-of-bounds points and wrong dimensions) and additionally rejects a
  batch whose number of values differs from its number of points. A point
  that was asked is told to the engine with its exact cube coordinates and
  metadata; other points are encoded (integer values rounded). NaN raises
  ``ValueError`` before anything is recorded, as in skopt (whose message,
  "Input y contains NaN", comes from its model fit, after the point was
  appended); so does ``-inf`` (the engine refuses it). ``+inf`` differs from
  skopt, which raises "Input y contains infinity" at its next model fit: here
  it is recorded as a failed evaluation (engine contract), the way to report
  an evaluation that crashed.
* **constraints** (an extension; skopt has none; ``docs/constraints.md``):
  ``tell(x, y, constraints=c)`` gives constraint values, ``c`` (m,) for one point or (n, m)
  for a batch, feasible iff every value is ``<= 0`` (NaN counts as violated), under the
  engine's rules (:mod:`hdbo_engine.base`, "Constraints": the same m every time, with every
  finite value once given). ``*_minimize(..., constraints=g)`` calls ``g(x)`` (the same list
  of values ``func`` receives, ``x0`` included) for each evaluated point. With constraints
  the result's ``x`` and ``fun`` are the best feasible point, or the least violating one
  before any is feasible, and ``result.constraints`` holds every point's values (n, m).
* **recommendation** (an extension): :meth:`HDBOOptimizer.recommend`, and ``x_recommended``
  in the result of ``*_minimize``, is the told point the engine recommends
  (``Optimizer.recommend``): the result's ``x`` unless Auto judged the objective noisy, where
  ``x`` is the luckiest draw and the recommendation the point of lowest posterior 0.9
  quantile. It is not in the result each ``tell`` returns (it fits a GP: up to a second at
  D = 100).
* **models** are surrogates for skopt's tools (``plot_objective``,
  ``expected_minimum``): :class:`GPSurrogate`, the engine's Matern-5/2 ARD
  GP on skopt's transformed (normalised, one-hot) inputs. As in skopt one is
  added per tell once ``n_initial_points`` points are told. They are fitted
  lazily on the first ``predict`` (the algorithm keeps its own model on the
  engine cube), share one copy of the told data, and pickle without their
  factorisation, so tells stay cheap and ``skopt.dump`` files small.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import OptimizeResult
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from skopt.callbacks import VerboseCallback, check_callback
from skopt.space import Categorical as SkCategorical
from skopt.space import Integer as SkInteger
from skopt.space import Real as SkReal
from skopt.space import Space as SkSpace
from skopt.utils import check_x_in_space, eval_callbacks, normalize_dimensions

from hdbo_engine import get_algorithm
from hdbo_engine.base import Optimizer as EngineOptimizer
from hdbo_engine.base import Proposal
from hdbo_engine.constraints import best_index
from hdbo_engine.gp import GP
from hdbo_engine.registry import Entry, generate
from hdbo_engine.space import Categorical, Dimension, Integer, Real, Space
from hdbo_engine.util import impute_failures, is_int

__all__ = [  # and <Class>Optimizer, <name>_minimize per public registered algorithm
    "HDBOOptimizer", "hdbo_minimize", "named_objects", "GPSurrogate", "engine_space",
]

_STRATEGIES = ("cl_min", "cl_mean", "cl_max")


# ----------------------------------------------------------------- space codec
def engine_space(space: SkSpace) -> Space:
    """The engine :class:`~hdbo_engine.space.Space` encoding a skopt ``Space``.

    Real/Integer keep their bounds (``log`` when the prior is log-uniform);
    Categorical keeps its categories; names are carried over.
    """
    dims: list[Dimension] = []
    names: list[str] = []
    for i, dim in enumerate(space.dimensions):
        if isinstance(dim, SkCategorical):
            dims.append(Categorical(list(dim.categories)))
        elif isinstance(dim, SkInteger):
            dims.append(Integer(int(dim.low), int(dim.high), log=dim.prior == "log-uniform"))
        elif isinstance(dim, SkReal):
            dims.append(Real(float(dim.low), float(dim.high), log=dim.prior == "log-uniform"))
        else:
            raise TypeError(f"dimensions: dimension {i} is {dim!r}; expected skopt Real, "
                            "Integer or Categorical")
        names.append(dim.name if dim.name is not None else f"x{i}")
    return Space(dims, names=names)


# ------------------------------------------------------------------- surrogate
class _TransformedHistory:
    """Append-only told data in skopt's transformed space, shared by all models."""

    def __init__(self, n_columns: int) -> None:
        self.X = np.empty((0, n_columns))
        self.y = np.empty(0)

    def append(self, X: np.ndarray, y: np.ndarray) -> None:
        self.X = np.vstack([self.X, X])
        self.y = np.concatenate([self.y, y])


class GPSurrogate(RegressorMixin, BaseEstimator):
    """sklearn-style regressor over :class:`hdbo_engine.gp.GP` (Matern-5/2 ARD, MAP fit).

    ``fit(X, y)`` records the data; hyperparameters are fitted (and the
    kernel factorised) on the first :meth:`predict`, then cached. Non-finite
    ``y`` are imputed as in the engine (``impute_failures``). Inputs are
    expected in a unit-scaled space such as skopt's transformed space.

    Parameters
    ----------
    fit_maxiter: L-BFGS-B iterations of the hyperparameter fit [60].
    restarts: hyperparameter fit starts [1].
    """

    def __init__(self, fit_maxiter: int = 60, restarts: int = 1) -> None:
        self.fit_maxiter = fit_maxiter
        self.restarts = restarts

    def fit(self, X: Any, y: Any) -> GPSurrogate:
        """Record training data (n, d) and targets (n,); returns self."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        y = np.asarray(y, dtype=float).reshape(-1)
        if len(X) != len(y) or not len(y):
            raise ValueError(f"X, y: expected n >= 1 rows and n values, got {X.shape}, {y.shape}")
        history = _TransformedHistory(X.shape[1])
        history.append(X, y)
        return self._bind(history, len(y))

    def _bind(self, history: _TransformedHistory, n: int) -> GPSurrogate:
        self._history, self._n, self._gp = history, n, None
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "_history")

    @property
    def X_train_(self) -> np.ndarray:
        """Training inputs (n, d)."""
        self._check_fitted()
        return self._history.X[: self._n]

    @property
    def y_train_(self) -> np.ndarray:
        """Training targets (n,)."""
        self._check_fitted()
        return self._history.y[: self._n]

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("GPSurrogate: call fit(X, y) before predict")

    def _model(self) -> GP:
        if self._gp is None:
            X, y = self.X_train_, impute_failures(self.y_train_)
            self._gp = GP(X.shape[1], fit_maxiter=self.fit_maxiter).fit(
                X, y, restarts=self.restarts)
        return self._gp

    def predict(self, X: Any, return_std: bool = False) -> np.ndarray | tuple[np.ndarray, ...]:
        """Posterior mean at X (m, d); with ``return_std`` also the posterior std of f."""
        self._check_fitted()
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self._history.X.shape[1]:
            raise ValueError(f"X: expected {self._history.X.shape[1]} columns, got {X.shape[1]}")
        mean, var = self._model().predict(X)
        return (mean, np.sqrt(var)) if return_std else mean

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state["_gp"] = None  # refitted deterministically after loading
        return state


# ------------------------------------------------------------------- optimizer
def _is_listlike(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def _is_2d_listlike(x: Any) -> bool:
    return _is_listlike(x) and all(_is_listlike(p) for p in x)


def _told_value(v: Any) -> float:
    """A told objective value as a float; complex or too large numbers raise naming ``y``."""
    if not isinstance(v, numbers.Real):
        raise ValueError(f"y: expected real numbers, got {v!r}")
    try:
        value = float(v)
    except OverflowError:
        raise ValueError(f"y: expected real numbers, got one too large for float64: "
                         f"{v!r:.40}") from None
    if math.isnan(value):
        raise ValueError("y: Input y contains NaN (as skopt.Optimizer raises); report a failed "
                         "evaluation as inf")
    if value == -math.inf:
        raise ValueError("y: -inf cannot be told to a minimiser; clip a value that is "
                         "unbounded below")
    return value


def _plain(v: Any) -> Any:
    """numpy arrays -> Python lists (skopt's checks expect lists or tuples)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


class HDBOOptimizer:
    """skopt ``Optimizer`` (ask/tell) running a registered hdbo engine algorithm.

    Parameters
    ----------
    dimensions: as for ``skopt.Optimizer``: ``(low, high)`` or
        ``(low, high, prior)`` tuples, lists of categories, skopt
        ``Real``/``Integer``/``Categorical`` objects, or a skopt ``Space``.
    algorithm: engine algorithm name ("auto", "msucb", "cobbo", "goucb", "bkb",
        "gpucb", "random") ["auto"].
    n_initial_points: told points before the algorithm's model takes over
        [None: the algorithm's design size for this space and ``budget``,
        ``preset_n_init``].
    random_state: int seed, ``numpy.random.RandomState`` or None [None].
    model_queue_size: keep only this many surrogates in ``models`` [None: all].
    **algorithm_kwargs: the algorithm's own parameters (and ``budget``).

    Attributes (as in skopt)
    ------------------------
    Xi, yi: told points (lists of values) and values, in told order.
    models: :class:`GPSurrogate` per tell once ``n_initial_points`` are told.
    space: the normalised ``skopt.space.Space``.
    rng: the ``RandomState`` reported as ``random_state`` in results.
    specs: ``{"args": ..., "function": ...}``.
    """

    def __init__(
        self,
        dimensions: Any,
        algorithm: str = "auto",
        n_initial_points: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        model_queue_size: int | None = None,
        **algorithm_kwargs: Any,
    ) -> None:
        self._init_args = {"dimensions": dimensions, "algorithm": algorithm,
                           "n_initial_points": n_initial_points,
                           "random_state": random_state,
                           "model_queue_size": model_queue_size, **algorithm_kwargs}
        self.specs = {"args": dict(self._init_args), "function": type(self).__name__}
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm: expected an algorithm name, got {algorithm!r}")
        try:
            engine_cls = get_algorithm(algorithm)
        except ModuleNotFoundError as err:
            raise ImportError(f"algorithm {algorithm!r} is not available in this "
                              f"installation ({err})") from err
        if n_initial_points is None:
            n_initial_points = engine_cls.preset_n_init(
                algorithm_kwargs.get("preset", "practical"),
                dim=engine_space(normalize_dimensions(dimensions)).n_columns,
                budget=algorithm_kwargs.get("budget"))
        if not is_int(n_initial_points) or n_initial_points < 0:
            raise ValueError(f"Expected `n_initial_points` >= 0, got {n_initial_points!r}")
        if model_queue_size is not None and (
                not is_int(model_queue_size) or model_queue_size < 1):
            raise TypeError(f"model_queue_size should be an int >= 1 or None, "
                            f"got {model_queue_size!r}")
        self.rng = check_random_state(random_state)
        if is_int(random_state):
            seed = int(random_state)
        else:
            seed = int(self.rng.randint(0, np.iinfo(np.int32).max))
        self.space = normalize_dimensions(dimensions)
        self.engine_space = engine_space(self.space)
        self.n_initial_points_ = int(n_initial_points)
        self.max_model_queue_size = model_queue_size
        self.algorithm = engine_cls.name
        self.engine: EngineOptimizer = engine_cls(
            self.engine_space, seed=seed, n_init=max(1, self.n_initial_points_),
            **algorithm_kwargs)
        self.Xi: list[list[Any]] = []
        self.yi: list[float] = []
        self.models: list[GPSurrogate] = []
        self._history = _TransformedHistory(self.space.transformed_n_dims)
        self._integer_dims = [i for i, d in enumerate(self.space.dimensions)
                              if isinstance(d, SkInteger)]
        self.cache_: dict[int, list[list[Any]]] = {}
        self._asked: list[tuple[list[Any], Proposal]] = []

    # ------------------------------------------------------------------ ask
    def ask(self, n_points: int | None = None, strategy: str = "cl_min") -> Any:
        """A point to evaluate (list), or ``n_points`` distinct points (list of lists).

        Repeated calls without a tell return the same points (module docstring).
        """
        if n_points is not None and (not is_int(n_points)
                                     or n_points < 1):
            raise ValueError("n_points should be int > 0, got " + str(n_points))
        if strategy not in _STRATEGIES:
            raise ValueError(f"Expected parallel_strategy to be one of {list(_STRATEGIES)}, "
                             f"got {strategy}")
        k = 1 if n_points is None else int(n_points)
        if k not in self.cache_:
            proposals = self.engine.ask(k)
            points = []
            for p in proposals:
                values = self.engine_space.decode(p.x)[0]
                self._warn_if_seen(p.x, values)
                self._asked.append((values, p))
                points.append(values)
            self.cache_[k] = points
        points = [list(v) for v in self.cache_[k]]
        return points[0] if n_points is None else points

    def _warn_if_seen(self, x: np.ndarray, values: list[Any]) -> None:
        told = self.engine.X
        if len(told) and np.min(np.abs(told - x).max(axis=1)) <= 1e-12:
            warnings.warn(f"The objective has been evaluated at point {values} before "
                          "(no unseen point was found)", UserWarning, stacklevel=3)

    # ----------------------------------------------------------------- tell
    def tell(self, x: Any, y: Any, fit: bool = True, constraints: Any = None) -> OptimizeResult:
        """Record ``f(x) = y``, or a batch (list of points, list of values); returns the result.

        ``fit=False`` records without adding a surrogate to ``models``. ``constraints``: the
        points' constraint values, (m,) or (n, m) (module docstring) [None].
        """
        x, y = _plain(x), _plain(y)
        try:
            check_x_in_space(x, self.space)
        except TypeError:  # skopt compares a value of the wrong type with the bounds
            raise TypeError(f"x: expected a point (or a list of points) with a number for each "
                            f"Real/Integer dimension, got {x!r:.200}") from None
        if _is_listlike(y) and _is_2d_listlike(x):
            if not all(isinstance(v, numbers.Number) for v in y):
                raise ValueError("expected y to be a list of scalars")
            if len(y) != len(x):
                raise ValueError(f"y: expected {len(x)} values for {len(x)} points, "
                                 f"got {len(y)}")
            if not len(x):
                raise ValueError("x: expected at least one point")
            rows, values = [list(p) for p in x], [_told_value(v) for v in y]
        elif _is_listlike(x):
            if _is_2d_listlike(x) and len(x):
                raise ValueError(f"y: expected a list of {len(x)} values for {len(x)} "
                                 f"points, got {y!r}")
            if not isinstance(y, numbers.Number):
                raise ValueError("`func` should return a scalar")
            rows, values = [list(x)], [_told_value(y)]
        else:
            raise ValueError(f"Type of arguments `x` ({type(x)}) and `y` ({type(y)}) "
                             "not compatible.")
        for row in rows:
            for dim, value in zip(self.space.dimensions, row, strict=True):
                if not isinstance(dim, SkCategorical) and not isinstance(value, numbers.Real):
                    raise TypeError(f"x: expected a number for dimension {dim}, got {value!r}")
        cube, metas, matched = self._encode_told(rows)
        self._record(rows, values, cube, metas, fit, constraints)
        self._asked = [e for e in self._asked if not any(e is m for m in matched)]
        return self.get_result()

    def _encode_told(
        self, rows: list[list[Any]]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None], list[tuple[list[Any], Proposal]]]:
        """Cube points and metas of told rows: asked ones exactly, others encoded."""
        cube = np.empty((len(rows), self.engine_space.n_columns))
        metas: list[dict[str, Any] | None] = []
        matched: list[tuple[list[Any], Proposal]] = []
        for k, row in enumerate(rows):
            hit = next((e for e in self._asked
                        if not any(e is m for m in matched) and e[0] == row), None)
            if hit is not None:
                matched.append(hit)
                cube[k], m = hit[1].x, hit[1].meta
                metas.append(m)
                continue
            snapped = list(row)
            for i in self._integer_dims:
                snapped[i] = int(np.round(snapped[i]))
            cube[k] = self.engine_space.encode([snapped])[0]
            metas.append(None)
        return cube, metas, matched

    def _record(self, rows: list[list[Any]], values: list[float], cube: np.ndarray,
                metas: Sequence[dict[str, Any] | None], fit: bool,
                constraints: Any = None) -> None:
        """Tell the engine, extend Xi/yi and the surrogate data, add a model."""
        transformed = np.asarray(self.space.transform(rows), dtype=float)
        self.engine.tell(cube, np.asarray(values), list(metas), constraints=constraints)
        self.Xi.extend(rows)
        self.yi.extend(values)
        self._history.append(transformed, np.asarray(values))
        self.cache_ = {}
        if fit and len(self.yi) >= self.n_initial_points_:
            self.models.append(GPSurrogate()._bind(self._history, len(self.yi)))
            if self.max_model_queue_size is not None:
                del self.models[: max(0, len(self.models) - self.max_model_queue_size)]

    # ---------------------------------------------------------------- other
    def get_result(self) -> OptimizeResult:
        """The ``OptimizeResult`` a tell would return, without telling."""
        yi = np.asarray(self.yi, dtype=float)
        res = OptimizeResult()
        best = best_index(yi, self.engine.constraints)
        if best is not None:
            res.x, res.fun = list(self.Xi[best]), float(yi[best])
        else:
            res.x = list(self.Xi[-1]) if self.Xi else None
            res.fun = float("nan")
        res.func_vals = yi
        res.x_iters = [list(p) for p in self.Xi]
        res.models = list(self.models)
        res.space = self.space
        res.random_state = self.rng
        res.specs = self.specs
        if self.engine.constraints is not None:
            res.constraints = self.engine.constraints.copy()
        return res

    def recommend(self) -> list[Any] | None:
        """The told point the engine recommends (``Optimizer.recommend``), as told: the
        result's ``x`` unless Auto judged the objective noisy, where it is the point of lowest
        posterior 0.9 quantile rather than the luckiest draw; None before a finite value."""
        if self.engine.best is None:
            return None
        x = self.engine.recommend()
        return list(self.Xi[int(np.flatnonzero((self.engine.X == x).all(axis=1))[0])])

    def run(self, func: Callable[[list[Any]], float], n_iter: int = 1) -> OptimizeResult:
        """Execute ask() + tell() ``n_iter`` times; returns the result."""
        for _ in range(n_iter):
            x = self.ask()
            self.tell(x, func(x))
        return self.get_result()

    def update_next(self) -> None:
        """Forget cached asks and pending points; the next ask proposes afresh."""
        self.cache_ = {}
        self._asked.clear()
        self.engine.clear_pending()

    def copy(self, random_state: int | np.random.RandomState | None = None) -> HDBOOptimizer:
        """A new optimizer with the same settings and told history.

        ``random_state=None`` keeps this optimizer's engine seed, so the copy
        proposes what this one would (skopt's copy draws a fresh state).
        """
        args = dict(self._init_args)
        args["dimensions"] = self.space.dimensions
        args["random_state"] = self.engine.seed if random_state is None else random_state
        new = type(self)(**args)
        if self.Xi:
            new._record([list(p) for p in self.Xi], list(self.yi), self.engine.X.copy(),
                        [dict(m) for m in self.engine.metas], fit=True,
                        constraints=self.engine.constraints)
        return new


class _NamedOptimizer(HDBOOptimizer):
    """An :class:`HDBOOptimizer` with its algorithm fixed by the subclass."""

    algorithm_name: ClassVar[str] = ""

    def __init__(
        self,
        dimensions: Any,
        n_initial_points: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        model_queue_size: int | None = None,
        **algorithm_kwargs: Any,
    ) -> None:
        super().__init__(dimensions, self.algorithm_name, n_initial_points, random_state,
                         model_queue_size, **algorithm_kwargs)
        del self._init_args["algorithm"]
        self.specs["args"].pop("algorithm")


# --------------------------------------------------------------------- minimize
def _specs(args: dict[str, Any], function: str) -> dict[str, Any]:
    """skopt-style ``specs``, with the algorithm's keyword arguments flattened into ``args``."""
    args = dict(args)
    args.update(args.pop("algorithm_kwargs"))
    return {"args": args, "function": function}


def _minimize(
    func: Callable[[list[Any]], Any],
    dimensions: Any,
    algorithm: str,
    n_calls: int,
    n_initial_points: int | None,
    x0: Any,
    y0: Any,
    random_state: int | np.random.RandomState | None,
    verbose: bool,
    callback: Any,
    model_queue_size: int | None,
    algorithm_kwargs: dict[str, Any],
    specs: dict[str, Any],
    constraints: Callable[[list[Any]], Sequence[float]] | None = None,
) -> OptimizeResult:
    """Shared body of the ``*_minimize`` functions (skopt ``base_minimize`` semantics)."""
    if constraints is not None and not callable(constraints):
        raise TypeError(f"constraints: expected a callable or None, got {constraints!r:.80}")

    def constraint_values(points: list[Any]) -> list[Sequence[float]] | None:
        return None if constraints is None else [constraints(p) for p in points]

    if x0 is None:
        x0 = []
    elif _is_listlike(x0) and len(x0) and not _is_listlike(x0[0]):
        x0 = [x0]
    if not isinstance(x0, list):
        raise ValueError(f"`x0` should be a list, but got {type(x0)}")
    if isinstance(y0, Iterable):
        y0 = list(y0)
    elif isinstance(y0, numbers.Number):
        y0 = [y0]
    if not is_int(n_calls) or n_calls < 0:
        raise ValueError(f"n_calls: expected an int >= 0, got {n_calls!r}")
    n_unevaluated = len(x0) if not y0 else 0
    if n_initial_points is None:
        default = get_algorithm(algorithm).preset_n_init(
            algorithm_kwargs.get("preset", "practical"),
            dim=engine_space(normalize_dimensions(dimensions)).n_columns,
            budget=algorithm_kwargs.get("budget", n_calls))
        n_initial_points = max(0, min(default, n_calls - n_unevaluated))
    if not is_int(n_initial_points) or n_initial_points < 0:
        raise ValueError(f"Expected `n_initial_points` >= 0, got {n_initial_points!r}")
    if n_initial_points <= 0 and not x0:
        raise ValueError("Either set `n_initial_points` > 0, or provide `x0`")
    required = n_initial_points + n_unevaluated
    if n_calls < required or (n_calls < 1 and not x0):
        raise ValueError(f"Expected `n_calls` >= {max(required, 1)}, got {n_calls}")
    kwargs = dict(algorithm_kwargs)
    kwargs.setdefault("budget", max(1, n_calls + (len(y0) if y0 else 0)))
    opt = HDBOOptimizer(dimensions, algorithm, n_initial_points=n_initial_points + len(x0),
                        random_state=random_state, model_queue_size=model_queue_size, **kwargs)
    if not all(_is_listlike(p) and len(p) == len(opt.space.dimensions) for p in x0):
        raise RuntimeError(f"Optimization space ({opt.space}) and initial points in x0 "
                           "use inconsistent dimensions.")
    callbacks = check_callback(callback)
    if verbose:
        callbacks.append(VerboseCallback(n_init=n_unevaluated, n_random=n_initial_points,
                                         n_total=n_calls))
    opt.specs = specs
    result = None
    if x0:
        if y0 is None:
            y0 = [func(p) for p in x0]
            n_calls -= len(y0)
        elif not isinstance(y0, list):
            raise ValueError(f"`y0` should be an iterable or a scalar, got {type(y0)}")
        if len(x0) != len(y0):
            raise ValueError("`x0` and `y0` should have the same length")
        result = opt.tell(x0, y0, constraints=constraint_values(x0))
        if eval_callbacks(callbacks, result):
            n_calls = 0
    for _ in range(n_calls):
        x = opt.ask()
        y = func(x)
        c = constraint_values([x])
        result = opt.tell(x, y, constraints=None if c is None else c[0])
        if eval_callbacks(callbacks, result):
            break
    result.x_recommended = opt.recommend()
    return result


def hdbo_minimize(
    func: Callable[[list[Any]], Any],
    dimensions: Any,
    algorithm: str = "auto",
    n_calls: int = 100,
    n_initial_points: int | None = None,
    x0: Any = None,
    y0: Any = None,
    random_state: int | np.random.RandomState | None = None,
    verbose: bool = False,
    callback: Any = None,
    model_queue_size: int | None = None,
    constraints: Callable[[list[Any]], Sequence[float]] | None = None,
    **algorithm_kwargs: Any,
) -> OptimizeResult:
    """Minimise ``func`` over ``dimensions`` like ``skopt.gp_minimize``, with an engine algorithm.

    ``n_calls`` evaluations of ``func`` in total [100], of which
    ``n_initial_points`` are random [None: the algorithm's initial design
    size, capped to fit ``n_calls``]; ``x0`` points (evaluated unless
    ``y0`` gives their values, in which case they do not count toward
    ``n_calls``) come first. ``callback`` (a callable or list, e.g.
    ``skopt.callbacks.DeltaYStopper``/``DeadlineStopper``) receives the
    result after each tell and stops the run by returning True. ``budget``
    passed to the engine defaults to the total number of evaluations. ``constraints``
    (optional) receives each evaluated point like ``func`` and returns its constraint
    values, feasible iff all ``<= 0`` (module docstring).
    Returns skopt's ``OptimizeResult`` (see :class:`HDBOOptimizer`) with ``x_recommended``,
    :meth:`HDBOOptimizer.recommend` at the end: with a noisy objective, the point to deploy.
    """
    specs = _specs(locals(), "hdbo_minimize")
    return _minimize(func, dimensions, algorithm, n_calls, n_initial_points, x0, y0,
                     random_state, verbose, callback, model_queue_size, algorithm_kwargs, specs,
                     constraints)


def _named_optimizer(entry: Entry) -> type[HDBOOptimizer]:
    """``<Class>Optimizer``: :class:`HDBOOptimizer` with the registered algorithm fixed."""
    name = f"{entry.class_name}Optimizer"
    return type(name, (_NamedOptimizer,), {
        "__module__": __name__, "__qualname__": name, "algorithm_name": entry.name,
        "__doc__": f"skopt ``Optimizer`` running {entry.class_name} (engine algorithm "
                   f"``{entry.name}``, ``{entry.module}``). Parameters as "
                   ":class:`HDBOOptimizer` without ``algorithm``; the algorithm's own "
                   "options go to the engine."})


def _named_minimize(entry: Entry) -> Callable[..., OptimizeResult]:
    """``<name>_minimize``: :func:`hdbo_minimize` with the registered algorithm fixed."""
    function = f"{entry.name}_minimize"

    def named_minimize(
        func: Callable[[list[Any]], Any],
        dimensions: Any,
        n_calls: int = 100,
        n_initial_points: int | None = None,
        x0: Any = None,
        y0: Any = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: bool = False,
        callback: Any = None,
        model_queue_size: int | None = None,
        constraints: Callable[[list[Any]], Sequence[float]] | None = None,
        **algorithm_kwargs: Any,
    ) -> OptimizeResult:
        args = {"func": func, "dimensions": dimensions, "n_calls": n_calls,
                "n_initial_points": n_initial_points, "x0": x0, "y0": y0,
                "random_state": random_state, "verbose": verbose, "callback": callback,
                "model_queue_size": model_queue_size, "constraints": constraints,
                "algorithm_kwargs": algorithm_kwargs}
        return _minimize(func, dimensions, entry.name, n_calls, n_initial_points, x0, y0,
                         random_state, verbose, callback, model_queue_size, algorithm_kwargs,
                         _specs(args, function), constraints)

    named_minimize.__name__ = named_minimize.__qualname__ = function
    named_minimize.__module__ = __name__
    named_minimize.__doc__ = (f":func:`hdbo_minimize` with {entry.class_name} (engine "
                              f"algorithm ``{entry.name}``).")
    return named_minimize


_GENERATED: dict[tuple[str, str], Any] = {}


def named_objects() -> dict[str, Any]:
    """``<Class>Optimizer`` and ``<name>_minimize`` for every public registered algorithm."""
    return {**generate(_GENERATED, lambda e: f"{e.class_name}Optimizer", _named_optimizer),
            **generate(_GENERATED, lambda e: f"{e.name}_minimize", _named_minimize)}


def __getattr__(name: str) -> Any:
    """The registry's optimizers and functions, generated on first access."""
    objects = named_objects()
    if name in objects:
        return objects[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(named_objects()))
