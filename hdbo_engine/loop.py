"""``minimize``: the sequential ask/evaluate/tell loop over any engine algorithm."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Optimizer
from .registry import get_algorithm
from .space import Space
from .util import is_int


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
