"""The ask/evaluate/tell loop (``hdbo_engine.loop``): ``drive`` and ``minimize``.

``drive`` is checked with hand-written ask, tell and objective callables that record their
calls, so the expected order, count and timings follow from its docstring alone.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from hdbo_engine import Categorical, Integer, Real, Space, get_algorithm, minimize
from hdbo_engine.loop import Step, drive


def _recording_loop(stop_at: int | None = None):
    """ask, tell, evaluate and on_step callables that append what they see to one log."""
    log: list[tuple] = []
    count = {"ask": 0}

    def ask():
        count["ask"] += 1
        k = count["ask"]
        log.append(("ask", k))
        return float(k), f"token{k}"

    def tell(token, x, y):
        log.append(("tell", token, x, y))

    def evaluate(x):
        log.append(("evaluate", x))
        return 10.0 * x

    def on_step(step: Step):
        log.append(("step", step.evaluation, step.x, step.y))
        return stop_at is not None and step.evaluation == stop_at

    return log, ask, tell, evaluate, on_step


def test_drive_asks_evaluates_tells_and_reports_each_step_in_order():
    log, ask, tell, evaluate, on_step = _recording_loop()
    assert drive(ask, tell, evaluate, 3, on_step) == 3
    expected = []
    for k in (1, 2, 3):  # x = k, y = 10 k, the token handed back to tell
        expected += [("ask", k), ("evaluate", float(k)), ("tell", f"token{k}", float(k), 10.0 * k),
                     ("step", k, float(k), 10.0 * k)]
    assert log == expected


def test_drive_stops_after_the_step_whose_callback_returns_true():
    log, ask, tell, evaluate, on_step = _recording_loop(stop_at=2)
    assert drive(ask, tell, evaluate, 5, on_step) == 2
    assert [entry[0] for entry in log].count("ask") == 2
    assert log[-1] == ("step", 2, 2.0, 20.0)
    log, ask, tell, evaluate, on_step = _recording_loop()
    assert drive(ask, tell, evaluate, 0, on_step) == 0 and log == []


def test_drive_times_ask_and_tell_in_wall_and_cpu_seconds_without_the_objective():
    """ask sleeps 0.05 s (wall time, almost no CPU), tell spins 0.05 CPU seconds, the
    objective sleeps 0.5 s: the objective's time is in neither timing. Each timing is
    compared with the wall time ask and tell measure themselves, so a loaded machine, which
    stretches the spin, cannot fail it; the objective would add 0.5 s."""
    steps: list[Step] = []
    ask_walls: list[float] = []
    tell_walls: list[float] = []

    def ask():
        start = time.perf_counter()
        time.sleep(0.05)
        ask_walls.append(time.perf_counter() - start)
        return 0.5, None

    def tell(token, x, y):
        start, cpu_start = time.perf_counter(), time.process_time()
        while time.process_time() - cpu_start < 0.05:
            pass
        tell_walls.append(time.perf_counter() - start)

    def evaluate(x):
        time.sleep(0.5)
        return 1.0

    drive(ask, tell, evaluate, 2, steps.append)
    for step, ask_wall, tell_wall in zip(steps, ask_walls, tell_walls, strict=True):
        assert ask_wall <= step.ask_s < ask_wall + 0.25 and step.ask_cpu_s < 0.04
        assert step.tell_cpu_s >= 0.05 and tell_wall <= step.tell_s < tell_wall + 0.25


def test_minimize_decodes_values_and_honours_callback():
    space = Space([Real(-2, 2), Integer(0, 10), Categorical(["u", "v"])])
    seen = []

    def f(params):
        x, k, c = params
        assert isinstance(k, int) and c in ("u", "v")
        seen.append(params)
        return x**2 + (k - 3) ** 2 + (c == "v")

    res = minimize(f, space, algorithm="random", budget=30, seed=0, progress=False)
    assert res.n_evals == 30 and res.x_iters == seen
    assert res.fun == min(res.func_vals) and math.isfinite(res.fun)
    stopped = minimize(f, space, algorithm="random", budget=30, seed=0, progress=False,
                       callback=lambda r: r.n_evals >= 5)
    assert stopped.n_evals == 5
    with pytest.raises(ValueError, match="budget"):
        minimize(f, space, budget=0)


def test_an_objective_returning_no_number_is_an_error_naming_func():
    with pytest.raises(TypeError, match=r"func: expected the objective to return a real number, "
                                        r"got None at \["):
        minimize(lambda p: None, Space([Real(0.0, 1.0)] * 2), algorithm="random", budget=3,
                 seed=0)



def test_minimize_returns_the_best_point_and_refuses_a_constraints_that_is_not_callable():
    space = Space([Real(0.0, 1.0)] * 2)
    res = minimize(lambda v: (v[0] - 0.3) ** 2 + v[1], space, algorithm="random", budget=8,
                   seed=1, progress=False)
    k = int(np.argmin(res.func_vals))
    assert res.fun == res.func_vals[k] and res.x == res.x_iters[k]
    assert res.X_unit.shape == (8, 2) and len(res.ask_times) == 8 and res.algorithm == "random"
    assert res.constraints is None
    with pytest.raises(TypeError, match="constraints: expected a callable or None"):
        minimize(lambda v: 0.0, space, algorithm="random", budget=3, constraints=[1.0])


def _noisy_sphere(budget: int) -> tuple[object, np.ndarray]:
    """A sphere around 0.3 plus the i-th of ``budget`` fixed N(0, 0.3^2) draws at call i."""
    noise = np.random.default_rng(1).normal(0.0, 0.3, budget)
    calls = iter(range(budget))

    def f(x: list[float]) -> float:
        return float(np.sum((np.round(np.asarray(x), 12) - 0.3) ** 2) + noise[next(calls)])
    return f, noise


def test_minimize_result_recommends_autos_pick_under_noise_and_x_is_the_luckiest_draw():
    f, noise = _noisy_sphere(30)
    seen: list[object] = []
    res = minimize(f, 3, "auto", budget=30, seed=8, noisy=True, progress=False,
                   callback=lambda r: seen.append(r.x_recommended))
    native = get_algorithm("auto")(3, seed=8, budget=30, noisy=True)
    for i in range(30):
        (p,) = native.ask(1)
        native.tell(p.x, float(np.sum((np.round(p.x, 12) - 0.3) ** 2) + noise[i]))
    np.testing.assert_array_equal(res.X_unit, native.X)
    assert res.x == list(native.X[int(np.argmin(native.y))])
    assert res.x_recommended == list(native.recommend())
    assert res.x_recommended != res.x  # the case this test is about
    assert seen == [None] * 30  # not computed for the callback's results


def test_minimize_result_recommends_x_without_noise():
    res = minimize(lambda x: float(np.sum((np.asarray(x) - 0.3) ** 2)), 3, "msucb", budget=12,
                   seed=0, progress=False)
    assert res.x_recommended == res.x
