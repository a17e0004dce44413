"""skopt's standard benchmarks (skopt.benchmarks) with thresholds like skopt's GP tests.

skopt/tests/test_gp_opt.py runs ``gp_minimize(func, bounds, n_initial_points=10,
n_calls=20, random_state=1)`` and asserts ``r.fun < y_opt + margin``: bench1
(0, 0.05), bench2 (-5, 0.05), bench3 (-0.9, 0.05), bench4 (0, 1.05). The same
protocol runs here through ``hdbo_minimize`` for every algorithm of the engine
registry. bench5, Branin and Hartmann-6 have no GP threshold in skopt's suite;
they get a margin of 0.1 (bench5, Branin) and 0.5 (Hartmann-6) with larger
budgets. Budgets above
skopt's 20 calls are noted per case. bench3 and Hartmann-6, and every case for
GO-UCB (about 10 s per 20-call run on one core), run behind ``slow``.
"""

from __future__ import annotations

import pytest
from _skopt_algorithms import algorithm_params
from skopt.benchmarks import bench1, bench2, bench3, bench4, bench5, branin, hart6

from hdbo_adapters import skopt as adapter

# name, function, dimensions, optimum, margin, n_calls
CASES = [
    ("bench1", bench1, [(-2.0, 2.0)], 0.0, 0.05, 20),
    ("bench2", bench2, [(-6.0, 6.0)], -5.0, 0.05, 20),
    ("bench4", bench4, [("-2", "-1", "0", "1", "2")], 0.0, 1.05, 20),
    ("bench5", bench5, [("-2", "-1", "0", "1", "2"), (-2.0, 2.0)], 0.0, 0.1, 30),
    ("branin", branin, [(-5.0, 10.0), (0.0, 15.0)], 0.397887, 0.1, 60),
]
SLOW_CASES = [
    ("bench3", bench3, [(-2.0, 2.0)], -0.9, 0.05, 20),
    ("hart6", hart6, [(0.0, 1.0)] * 6, -3.32237, 0.5, 100),
]


def _check(algorithm, func, dims, y_opt, margin, n_calls):
    res = adapter.hdbo_minimize(func, dims, algorithm=algorithm, n_calls=n_calls,
                                n_initial_points=10, random_state=1)
    assert len(res.x_iters) == n_calls
    assert res.fun < y_opt + margin, f"best {res.fun:.4f}, threshold {y_opt + margin:.4f}"


@pytest.mark.filterwarnings("ignore:The objective has been evaluated")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("algorithm", algorithm_params(slow={"goucb"}))
def test_skopt_benchmark(algorithm, case):
    _check(algorithm, *case[1:])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The objective has been evaluated")
@pytest.mark.parametrize("case", SLOW_CASES, ids=[c[0] for c in SLOW_CASES])
def test_skopt_benchmark_slow(algorithm, case):
    _check(algorithm, *case[1:])
