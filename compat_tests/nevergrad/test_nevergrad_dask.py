"""The four optimizers under ``optimizer.minimize(f, executor=client)`` on a Dask cluster.

A ``dask.distributed.LocalCluster`` of 2 thread workers (one thread each; the
objective releases nothing, so threads keep the test quick and in-process) and
``num_workers=4``: Nevergrad keeps 4 evaluations in flight on 2 workers, so
tells arrive out of ask order. Every evaluation must be told exactly once and
the recommendation must be the best told point.
"""

from __future__ import annotations

from collections.abc import Iterator

import nevergrad as ng
import numpy as np
import pytest

import hdbo_adapters.nevergrad  # noqa: F401  (registers the optimizers)
from hdbo_engine import available
from hdbo_engine.registry import entries

distributed = pytest.importorskip("distributed", reason="pip install -e '.[dask]'")

NAMES = [pytest.param(n, marks=pytest.mark.skipif(a not in available(),
                                                  reason=f"engine module {a} not present"))
         for n, a in {e.nevergrad_name: e.name for e in entries(public=True)}.items()]


EVALUATED: list[np.ndarray] = []  # the thread workers share this process


def sphere(x: np.ndarray) -> float:
    """The objective; records each evaluated point (a module-level function, so Dask pickles
    it by reference)."""
    EVALUATED.append(np.array(x))  # list.append is atomic
    return float(np.sum((x - 0.7) ** 2))


@pytest.fixture(scope="module")
def client() -> Iterator[distributed.Client]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as dask_client:
        yield dask_client


@pytest.mark.parametrize("name", NAMES)
def test_minimize_with_a_dask_executor(name: str, client: distributed.Client) -> None:
    budget = 16
    EVALUATED.clear()
    opt = ng.optimizers.registry[name](
        parametrization=ng.p.Array(shape=(3,)).set_bounds(-2.0, 2.0), budget=budget,
        num_workers=4)
    opt.parametrization.random_state.seed(0)
    recommendation = opt.minimize(sphere, executor=client)
    evaluated = list(EVALUATED)
    assert opt.num_ask == opt.num_tell == len(evaluated) == budget
    engine = opt.engine
    assert engine.n_told == budget and len(engine.pending) == 0
    told = np.array([opt.parametrization.spawn_child().set_standardized_data(
        opt.from_unit(x)).value for x in engine.X])
    for point in evaluated:  # each evaluation told once, at the point evaluated
        assert np.isclose(told, point, rtol=0, atol=1e-9).all(axis=1).sum() == 1
    best = told[int(np.argmin(engine.y))]
    np.testing.assert_allclose(recommendation.value, best, rtol=0, atol=1e-9)
    assert float(np.min(engine.y)) == pytest.approx(np.sum((best - 0.7) ** 2))
