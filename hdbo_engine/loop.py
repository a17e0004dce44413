"""The sequential ask/evaluate/tell loop (:func:`drive`), and ``minimize`` built on it.

:func:`drive` times every ask and tell in wall and CPU seconds and hands each step to a
callback, which may stop the run. ``minimize`` runs an engine algorithm with it; ``hdbo
run`` and ``hdbo bench`` run every method, ours and the peers', through it (``hdbo bench``'s
groups with several workers through its batched variant, ``hdbo_cli.bench.drive_batches``;
the papers' reproductions keep a loop of their own, ``hdbo_cli.reproduce.run_loop``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Optimizer
from .registry import get_algorithm
from .space import Space
from .util import is_int


@dataclass(frozen=True)
class Step:
    """One evaluation of :func:`drive`: its number (from 1), point, value and the wall and CPU
    seconds of its ask and of its tell."""

    evaluation: int
    x: Any
    y: float
    ask_s: float
    tell_s: float
    ask_cpu_s: float
    tell_cpu_s: float


def drive(
    ask: Callable[[], tuple[Any, Any]],
    tell: Callable[[Any, Any, float], None],
    evaluate: Callable[[Any], float],
    budget: int,
    on_step: Callable[[Step], bool | None],
) -> int:
    """Run ``budget`` evaluations: ``x, token = ask()``, ``y = evaluate(x)``,
    ``tell(token, x, y)``, then ``on_step(step)``, which stops the run by returning True.
    Returns the number of evaluations made. The objective is never inside the timings."""
    for i in range(budget):
        c0, t0 = time.process_time(), time.perf_counter()
        x, token = ask()
        t1, c1 = time.perf_counter(), time.process_time()
        y = evaluate(x)
        c2, t2 = time.process_time(), time.perf_counter()
        tell(token, x, y)
        t3, c3 = time.perf_counter(), time.process_time()
        if on_step(Step(i + 1, x, y, t1 - t0, t3 - t2, c1 - c0, c3 - c2)):
            return i + 1
    return budget


@dataclass
class OptimizeResult:
    """Outcome of :func:`minimize` (field names follow scikit-optimize); ``constraints`` holds
    the constraint values (n, m) of every evaluation when :func:`minimize` had constraints,
    and ``x``/``fun`` are then the best feasible point (:attr:`Optimizer.best`'s rule).

    ``x_recommended`` is the told point :meth:`Optimizer.recommend` returns at the end of the
    run, decoded: ``x`` unless Auto judged the objective noisy, where it is the point of
    lowest posterior 0.9 quantile rather than the luckiest draw. It is None in the results
    passed to ``callback`` (Auto's pick fits a GP, up to a second at D = 100) and where no
    value is finite.
    """

    x: list[Any]
    fun: float
    x_iters: list[list[Any]]
    func_vals: np.ndarray
    X_unit: np.ndarray
    ask_times: np.ndarray
    algorithm: str
    space: Space
    constraints: np.ndarray | None = None
    x_recommended: list[Any] | None = None

    @property
    def n_evals(self) -> int:
        return len(self.func_vals)


def minimize(
    func: Callable[[list[Any]], float],
    space: Space | int,
    algorithm: str | type[Optimizer] = "auto",
    budget: int = 100,
    seed: int | None = None,
    callback: Callable[[OptimizeResult], bool | None] | None = None,
    progress: bool = True,
    constraints: Callable[[list[Any]], Sequence[float]] | None = None,
    **algorithm_kwargs: Any,
) -> OptimizeResult:
    """Minimise ``func`` over ``space`` with ``budget`` sequential evaluations.

    ``func`` receives one list of parameter values (decoded by the space) and
    returns a float. ``algorithm`` is a registered name (see
    :func:`hdbo_engine.available`) or an :class:`Optimizer`
    subclass; extra keyword arguments go to its constructor. ``callback``
    is called with the result so far after each evaluation and stops the run
    by returning True. ``progress`` shows a progress bar with the best value.

    ``constraints`` (optional) receives the same list of values and returns a sequence of
    floats, feasible iff every one is ``<= 0`` (NaN counts as violated); they are told with
    each value (:mod:`hdbo_engine.base`, "Constraints"), and the result's ``x`` and ``fun``
    are then the best feasible point, or before any the least violating one. With a noisy
    objective deploy the result's ``x_recommended``, not ``x`` (:class:`OptimizeResult`).
    """
    from tqdm.auto import tqdm

    if not is_int(budget) or budget < 1:
        raise ValueError(f"budget: expected a positive int, got {budget!r}")
    if constraints is not None and not callable(constraints):
        raise TypeError(f"constraints: expected a callable or None, got {constraints!r:.80}")
    cls = get_algorithm(algorithm) if isinstance(algorithm, str) else algorithm
    opt = cls(space, seed=seed, budget=budget, **algorithm_kwargs)
    times: list[float] = []
    told: dict[str, Any] = {}

    def evaluate(x: np.ndarray) -> float:
        values = opt.space.decode(x)[0]
        if constraints is not None:
            told["constraints"] = constraints(values)
        value = func(values)
        try:
            return float(value)
        except (TypeError, ValueError) as err:
            raise TypeError(f"func: expected the objective to return a real number, got "
                            f"{value!r:.80} at {values!r:.200}") from err

    def ask() -> tuple[np.ndarray, Any]:
        (proposal,) = opt.ask()
        return proposal.x, proposal

    def on_step(step: Step) -> bool:
        times.append(step.ask_s)
        bar.update(1)
        if opt.best is not None:
            bar.set_postfix(best=f"{opt.best[1]:.6g}")
        return callback is not None and bool(callback(_result(opt, times)))

    with tqdm(total=budget, disable=not progress, desc=cls.name) as bar:
        drive(ask, lambda proposal, x, y: opt.tell(x, y, constraints=told.get("constraints")),
              evaluate, budget, on_step)
    result = _result(opt, times)
    if opt.best is not None:
        result.x_recommended = opt.space.decode(opt.recommend())[0]
    return result


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
        constraints=None if opt.constraints is None else opt.constraints.copy(),
    )
