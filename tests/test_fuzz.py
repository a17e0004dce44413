"""Property tests (Hypothesis): random call sequences on the engine and the three adapters.

Each example builds an optimizer and runs a random sequence of ask / tell /
add_pending / from_history calls (the adapters' equivalents), mixing valid
arguments (new points, pending points, duplicates, NaN/inf/constant values)
with invalid ones (wrong shapes, NaN/inf or out-of-box points, wrong types).
Properties:

* an invalid call raises ``ValueError`` or ``TypeError`` whose message names
  the argument, and leaves the history (told points, values, metas, pending
  points) unchanged;
* no ``LinAlgError``, ``RuntimeWarning`` (warnings are errors here) or raw
  numpy message reaches the caller;
* a valid ask never proposes a told or pending point, and an optimizer rebuilt
  by ``from_history`` (plus the pending points) proposes what the original does.

Profiles: ``hdbo-default`` (the default suite: few, derandomized examples,
well under a minute in all) and ``hdbo-slow`` (the ``slow`` variants:
``python -m pytest -m slow tests/test_fuzz.py``).
"""

from __future__ import annotations

import copy
import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdbo_engine import get_algorithm
from hdbo_engine.base import Optimizer

settings.register_profile(
    "hdbo-default", max_examples=12, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "hdbo-slow", max_examples=200, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DEFAULT, SLOW = settings.get_profile("hdbo-default"), settings.get_profile("hdbo-slow")


def LONG(test: Callable[..., Any]) -> Any:  # noqa: N802 (a pair of pytest marks)
    """The ``slow`` marker, with an hour's timeout (200 examples on a busy machine)."""
    return pytest.mark.slow(pytest.mark.timeout(3600)(test))

# Cheap settings; GO-UCB only in large dimension, where its initial design is all it asks.
ALGORITHMS: dict[str, dict[str, Any]] = {
    "random": {},
    "msucb": {"n_optimize": 2, "restarts": 1, "n_candidates": 16, "screen_budget": 64},
    "gpucb": {"n_optimize": 2, "restarts": 1, "n_candidates": 16, "screen_budget": 64},
    "cobbo": {"n_candidates": 16, "restarts": 1, "fit_maxiter": 5},
    "bkb": {"n_candidates": 16, "n_refine": 1},
}
NUMPY_TEXT = ("broadcast", "setting an array element", "inhomogeneous", "could not convert",
              "invalid value encountered", "LinAlgError", "singular matrix", "float() argument")


def _raises_named(names: tuple[str, ...], call: Callable[..., Any], *args: Any) -> None:
    """``call(*args)`` raises ValueError/TypeError whose message starts with one of ``names``."""
    with pytest.raises((ValueError, TypeError)) as info:
        call(*args)
    message = str(info.value)
    assert message.split(":")[0] in names, f"{message!r} does not name one of {names}"
    assert not any(text in message for text in NUMPY_TEXT), message


def bad_points(D: int) -> st.SearchStrategy[Any]:
    """Invalid ``x`` for a D-dimensional cube: shapes, non-finite, out of box, types."""
    good = np.full(D, 0.5)

    def with_value(v: float) -> Callable[[int], np.ndarray]:
        return lambda i: np.concatenate([good[:i], [v], good[i + 1:]])

    coordinate = st.integers(0, D - 1)
    return st.one_of(
        st.sampled_from([np.zeros(D + 1), np.zeros((2, D + 1)), np.zeros((1, 1, D)), [],
                         [[0.5] * D, [0.5] * (D + 1)], "0.5", None, {"x": 0.5}, object(),
                         [None] * D, ["0.5"] * D, np.full(D, 0.5 + 1j), [2**2000] * D]),
        coordinate.map(with_value(math.nan)), coordinate.map(with_value(math.inf)),
        coordinate.map(with_value(1.5)), coordinate.map(with_value(-0.25)),
    )


BAD_SCALARS = st.sampled_from(["1.0", None, {"y": 1}, 1 + 2j, 2**2000, object(), -math.inf])
BAD_VALUES = st.one_of(BAD_SCALARS, st.sampled_from([[1.0, 2.0], [[1.0]]]))
BAD_METAS = st.sampled_from([5, "m", [{}, {}], [1], (1, 2)])
BAD_N = st.sampled_from([0, -1, 1.5, "1", True, None])
VALUES = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([math.nan, math.inf, 0.0]))
SKOPT_VALUES = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([math.inf, 0.0]))  # NaN raises


def _history(opt: Optimizer) -> tuple[Any, ...]:
    return (opt.X.copy(), opt.y.copy(), copy.deepcopy(opt.metas), opt.pending.copy(),
            [copy.deepcopy(p.meta) for p in opt._pending])


def _same_history(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1], equal_nan=True)
            and a[2] == b[2] and np.array_equal(a[3], b[3]) and a[4] == b[4])


def _seen(opt: Optimizer) -> np.ndarray:
    return np.vstack([opt.X, opt.pending])


def _run_engine_sequence(data: st.DataObject) -> None:
    D = data.draw(st.sampled_from([1, 2, 3, 2000]), label="D")
    name = data.draw(st.sampled_from([*ALGORITHMS, "goucb"] if D == 2000 else list(ALGORITHMS)),
                     label="algorithm")
    kwargs = {**ALGORITHMS.get(name, {}), "seed": data.draw(st.integers(0, 2**32), label="seed"),
              "n_init": 10**6 if D == 2000 else 2}  # large D: the initial design only
    opt = get_algorithm(name)(D, **kwargs)
    point = st.lists(st.floats(0.0, 1.0), min_size=D, max_size=D).map(np.array) if D < 2000 \
        else st.floats(0.0, 1.0).map(lambda v: np.full(D, v))
    for _ in range(data.draw(st.integers(1, 7), label="length")):
        kind = data.draw(st.sampled_from(["ask", "tell", "tell_pending", "tell_told",
                                          "add_pending", "from_history", "invalid"]))
        before = _history(opt)
        if kind == "ask":
            seen = _seen(opt)
            proposals = opt.ask(data.draw(st.integers(1, 2)))
            for p in proposals:
                assert p.x.shape == (D,) and ((p.x >= 0) & (p.x <= 1)).all()
                assert not any(np.array_equal(p.x, s) for s in seen), "proposed a seen point"
            assert len({p.x.tobytes() for p in proposals}) == len(proposals)
        elif kind == "tell":
            opt.tell(data.draw(point), data.draw(VALUES))
        elif kind == "tell_pending" and len(opt.pending):
            opt.tell(opt.pending[data.draw(st.integers(0, len(opt.pending) - 1))],
                     data.draw(VALUES))
        elif kind == "tell_told" and opt.n_told:  # a duplicate point, maybe a constant value
            i = data.draw(st.integers(0, opt.n_told - 1))
            opt.tell(opt.X[i], opt.y[i] if data.draw(st.booleans()) else data.draw(VALUES))
        elif kind == "add_pending":
            opt.add_pending(data.draw(point), {"worker": 1})
        elif kind == "from_history" and opt.n_told:
            rebuilt = type(opt).from_history(D, opt.X, opt.y, opt.metas, **kwargs)
            assert _same_history(_history(rebuilt), _history(opt)[:3] + ((np.empty((0, D)), [])))
            for pending in opt._pending:
                rebuilt.add_pending(pending.x, pending.meta)
            np.testing.assert_array_equal(rebuilt.ask()[0].x, opt.ask()[0].x)  # same state
        elif kind == "invalid":
            call = data.draw(st.sampled_from(["ask", "salt", "tell_x", "tell_y", "tell_meta",
                                              "pending_x", "pending_meta", "history"]))
            good = np.full(D, 0.5)
            if call == "ask":
                _raises_named(("n",), opt.ask, data.draw(BAD_N))
            elif call == "salt":
                salt = data.draw(BAD_N.filter(lambda v: v is not None and v != 0))
                _raises_named(("salt",), functools.partial(opt.ask, salt=salt))
            elif call == "tell_x":
                _raises_named(("x",), opt.tell, data.draw(bad_points(D)), 1.0)
            elif call == "tell_y":
                _raises_named(("y",), opt.tell, good, data.draw(BAD_VALUES))
            elif call == "tell_meta":
                _raises_named(("meta",), opt.tell, good, 1.0, data.draw(BAD_METAS))
            elif call == "pending_x":
                _raises_named(("x",), opt.add_pending, data.draw(bad_points(D)))
            elif call == "pending_meta":
                _raises_named(("meta",), opt.add_pending, good, data.draw(BAD_METAS))
            else:
                X, y = (opt.X, opt.y) if opt.n_told else (good[None], [1.0])
                which = data.draw(st.sampled_from(["x", "y", "meta"]))
                args = {"x": (data.draw(bad_points(D)), y, None),
                        "y": (X, data.draw(BAD_SCALARS), None),
                        "meta": (X, y, data.draw(st.sampled_from([[5] * len(y),
                                                                  [{}] * (len(y) + 1)])))}[which]
                _raises_named((which,), functools.partial(type(opt).from_history, **kwargs), D,
                              *args)
            assert _same_history(before, _history(opt)), "an invalid call changed the history"


def _strict(check: Callable[[st.DataObject], None],
            allowed: type[Warning] | None = None) -> Callable[[st.DataObject], None]:
    """Run ``check`` with RuntimeWarnings (numpy's among them) as errors, except ``allowed``
    (a framework's own warnings about the user's input)."""
    def run(data: st.DataObject) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            if allowed is not None:
                warnings.simplefilter("ignore", allowed)
            check(data)
    return run


test_engine_call_sequences = DEFAULT(given(st.data())(_strict(_run_engine_sequence)))
test_engine_call_sequences_slow = LONG(
    SLOW(given(st.data())(_strict(_run_engine_sequence))))


# ------------------------------------------------------------------- adapters
ADAPTER_ALGORITHMS = ["random", "msucb", "cobbo", "bkb"]
SKOPT_MESSAGES = ("x", "y", "Point", "Not all points", "Dimensions of point", "`func`",
                  "expected y", "Type of arguments", "n_points")


def _skopt_space(data: st.DataObject, D: int) -> list[Any]:
    from skopt.space import Categorical, Integer, Real

    kinds = data.draw(st.lists(st.sampled_from(["real", "log", "int", "cat"]), min_size=D - 1,
                               max_size=D - 1), label="kinds")
    make = {"real": lambda: Real(-2.0, 3.0), "log": lambda: Real(1e-3, 10.0, prior="log-uniform"),
            "int": lambda: Integer(-3, 4), "cat": lambda: Categorical(["a", "b", "c"])}
    return [Real(0.0, 1.0)] + [make[k]() for k in kinds]  # one real: never runs out of points


def _run_skopt_sequence(data: st.DataObject) -> None:
    from hdbo_adapters.skopt import HDBOOptimizer

    D = data.draw(st.sampled_from([1, 2, 4, 2000]), label="D")
    dims = _skopt_space(data, D) if D < 2000 else [(0.0, 1.0)] * D
    algo = "random" if D == 2000 else data.draw(st.sampled_from(ADAPTER_ALGORITHMS))
    opt = HDBOOptimizer(dims, algorithm=algo, n_initial_points=2,
                        random_state=data.draw(st.integers(0, 1000)),
                        **ALGORITHMS.get(algo, {}))
    for _ in range(data.draw(st.integers(1, 6), label="length")):
        kind = data.draw(st.sampled_from(["ask", "tell_asked", "tell_told", "invalid"]))
        before = (copy.deepcopy(opt.Xi), list(opt.yi), _history(opt.engine))
        if kind == "ask":
            points = opt.ask(n_points=data.draw(st.sampled_from([None, 1, 2])))
            points = [points] if not isinstance(points[0], list) else points
            told = opt.engine.X
            for p in opt.engine.pending:
                assert not any(np.array_equal(p, t) for t in told), "proposed a told point"
            assert len({repr(p) for p in points}) == len(points)
        elif kind == "tell_asked":
            opt.tell(opt.ask(), data.draw(SKOPT_VALUES))
        elif kind == "tell_told" and opt.Xi:
            i = data.draw(st.integers(0, len(opt.Xi) - 1))
            opt.tell(list(opt.Xi[i]), opt.yi[i] if data.draw(st.booleans()) else 1.0)
        elif kind == "invalid":
            x = opt.ask()
            which = data.draw(st.sampled_from(["x", "y"]))
            if which == "x":
                i = data.draw(st.integers(0, D - 1))
                bad = data.draw(st.sampled_from([math.nan, math.inf, 7.5, "zz", None, [0.5]]))
                x = [*x[:i], bad, *x[i + 1:]] if data.draw(st.booleans()) else [*x, 0.5]
                y: Any = 1.0
            else:
                y = data.draw(BAD_VALUES)
            before = (copy.deepcopy(opt.Xi), list(opt.yi), _history(opt.engine))
            with pytest.raises((ValueError, TypeError)) as info:
                opt.tell(x, y)
            message = str(info.value)
            assert message.startswith(SKOPT_MESSAGES), message
            assert not any(text in message for text in NUMPY_TEXT), message
            assert opt.Xi == before[0] and opt.yi == before[1]
            assert _same_history(before[2], _history(opt.engine))


def _run_nevergrad_sequence(data: st.DataObject) -> None:
    import nevergrad as ng

    import hdbo_adapters.nevergrad  # noqa: F401

    D = data.draw(st.sampled_from([1, 2, 3, 2000]), label="D")
    bounded = data.draw(st.booleans(), label="bounded")
    param = ng.p.Array(shape=(D,))
    if bounded:
        param.set_bounds(-1.0, 2.0)
    algo = "random" if D == 2000 else data.draw(st.sampled_from(ADAPTER_ALGORITHMS))
    opt = hdbo_adapters.nevergrad.ParametrizedHDBO(algo, n_init=2, seed=0,
                                                   **ALGORITHMS.get(algo, {}))(
        parametrization=param, budget=50, num_workers=4)
    asked: list[Any] = []
    for _ in range(data.draw(st.integers(1, 7), label="length")):
        kind = data.draw(st.sampled_from(["ask", "tell", "tell_not_asked", "invalid"]))
        if kind == "ask" and len(asked) < 4:
            seen = _seen(opt.engine)
            candidate = opt.ask()
            assert not any(np.array_equal(candidate._meta["hdbo_x"], s) for s in seen)
            asked.append(candidate)
        elif kind == "tell" and asked:
            loss = data.draw(st.one_of(VALUES, st.sampled_from([1e30, -1e30])))
            opt.tell(asked.pop(data.draw(st.integers(0, len(asked) - 1))), loss)
        elif kind == "tell_not_asked":
            value = data.draw(st.floats(-1.0, 2.0)) if bounded else data.draw(st.floats(-1e3, 1e3))
            opt.tell(opt.parametrization.spawn_child(new_value=np.full(D, value)),
                     data.draw(VALUES))
        elif kind == "invalid" and asked:
            before = _history(opt.engine)
            with pytest.raises((ValueError, TypeError)) as info:
                opt.tell(asked[0], data.draw(BAD_SCALARS.filter(  # Nevergrad takes -inf
                    lambda v: not isinstance(v, (int, float)))))
            assert "loss" in str(info.value).lower() or "float" in str(info.value), info.value
            assert _same_history(before, _history(opt.engine))


test_skopt_call_sequences = DEFAULT(given(st.data())(_strict(_run_skopt_sequence)))
test_skopt_call_sequences_slow = LONG(
    SLOW(given(st.data())(_strict(_run_skopt_sequence))))
def _nevergrad_check(data: st.DataObject) -> None:
    from nevergrad.common.errors import NevergradWarning

    _strict(_run_nevergrad_sequence, NevergradWarning)(data)


test_nevergrad_call_sequences = DEFAULT(given(st.data())(_nevergrad_check))
test_nevergrad_call_sequences_slow = LONG(SLOW(given(st.data())(_nevergrad_check)))


def _optuna_space(data: st.DataObject, D: int) -> dict[str, Any]:
    from optuna.distributions import CategoricalDistribution as C
    from optuna.distributions import FloatDistribution as F
    from optuna.distributions import IntDistribution as I  # noqa: E741

    pool = [F(-2.0, 3.0), F(1e-3, 10.0, log=True), F(0.0, 1.0, step=0.25), I(-3, 4),
            I(1, 64, log=True), I(0, 9, step=3), C(["a", "b", 3]), F(1.0, 1.0)]
    rest = data.draw(st.lists(st.sampled_from(pool), min_size=D - 1, max_size=D - 1),
                     label="distributions") if D < 2000 else [F(0.0, 1.0)] * (D - 1)
    return {f"p{i:04d}": d for i, d in enumerate([F(0.0, 1.0), *rest])}


def _run_optuna_sequence(data: st.DataObject) -> None:
    import optuna
    from optuna.trial import TrialState

    from hdbo_adapters.optuna import ATTR_PROPOSAL, HDBOSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    D = data.draw(st.sampled_from([1, 2, 4, 2000]), label="D")
    algo = "random" if D == 2000 else data.draw(st.sampled_from(ADAPTER_ALGORITHMS))
    space = _optuna_space(data, D)
    sampler = HDBOSampler(algo, seed=data.draw(st.integers(0, 1000)), n_startup_trials=2,
                          **ALGORITHMS.get(algo, {}))
    study = optuna.create_study(sampler=sampler,
                                direction=data.draw(st.sampled_from(["minimize", "maximize"])))
    running: list[optuna.Trial] = []
    for _ in range(data.draw(st.integers(1, 7), label="length")):
        kind = data.draw(st.sampled_from(["ask", "ask", "tell", "fail", "prune", "enqueue",
                                          "invalid"]))
        if kind == "ask":
            trial = study.ask(space)
            running.append(trial)
            frozen = study.trials[trial.number]
            if ATTR_PROPOSAL in frozen.system_attrs:  # a relative proposal: never seen before
                others = [tuple(t.params.values()) for t in study.trials
                          if t.number != trial.number and t.state != TrialState.FAIL]
                assert tuple(frozen.params.values()) not in others, "proposed a seen point"
        elif kind in ("tell", "fail", "prune") and running:
            trial = running.pop(data.draw(st.integers(0, len(running) - 1)))
            if kind == "tell":
                study.tell(trial, data.draw(VALUES))
            else:
                study.tell(trial, state=TrialState.FAIL if kind == "fail" else TrialState.PRUNED)
        elif kind == "enqueue" and study.trials:  # a user's repeat of an earlier point
            study.enqueue_trial(study.trials[data.draw(st.integers(0, len(study.trials) - 1))]
                                .params)
            running.append(study.ask(space))
        elif kind == "invalid":
            arg = data.draw(st.sampled_from(["seed", "n_startup_trials", "independent_sampler"]))
            bad = data.draw(st.sampled_from([-1, 1.5, "3", True] if arg != "independent_sampler"
                                            else ["random", 3, object()]))
            _raises_named((arg,), functools.partial(HDBOSampler, algo, **{arg: bad}))


test_optuna_call_sequences = DEFAULT(given(st.data())(_strict(_run_optuna_sequence)))
test_optuna_call_sequences_slow = LONG(
    SLOW(given(st.data())(_strict(_run_optuna_sequence))))
