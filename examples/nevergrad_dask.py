"""Auto (``HDBO``) through Nevergrad on a Dask cluster: ``optimizer.minimize(f, executor=client)``.

A local Dask cluster (2 worker processes) evaluates a slow 20-d ellipsoid
(minimum 0 at x = 0.5) for Auto with 4 evaluations in flight (``num_workers=4``): the
engine keeps the asked-but-not-told points pending, so the 4 are distinct.
Point ``--scheduler`` at a running ``dask scheduler`` (``tcp://host:8786``)
to use a real cluster instead. Needs ``pip install -e ".[nevergrad,dask]"``.

    python examples/nevergrad_dask.py                 # 60 evaluations
    python examples/nevergrad_dask.py --budget 300 --sleep 1.0

It prints a line every 10 evaluations (count, best so far, seconds since the
start), then the value at Auto's recommendation (the minimum is 0) and the
total run time. Each evaluation sleeps ``--sleep`` seconds [0.2].
"""

from __future__ import annotations

import argparse
import time

import nevergrad as ng
import numpy as np
from distributed import Client, LocalCluster

import hdbo_adapters.nevergrad  # noqa: F401  (registers HDBO, MSUCB, CobBO, GOUCB, BKB)


def ellipsoid(x: np.ndarray, sleep: float) -> float:
    """The objective, ``sum_i i (x_i - 0.5)^2``, made "expensive" by a sleep; runs on a worker."""
    time.sleep(sleep)
    return float(np.sum(np.arange(1, len(x) + 1) * (x - 0.5) ** 2))


class Progress:
    """Prints the best loss every ``every`` tells (a Nevergrad tell callback)."""

    def __init__(self, every: int) -> None:
        self.every, self.start, self.count, self.best = every, time.perf_counter(), 0, np.inf

    def __call__(self, optimizer: ng.optimizers.base.Optimizer, candidate: ng.p.Parameter,
                 loss: float) -> None:
        self.count, self.best = self.count + 1, min(self.best, loss)
        if self.count % self.every == 0:
            print(f"{self.count:4d} evaluations, best {self.best:10.4g}, "
                  f"{time.perf_counter() - self.start:6.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--sleep", type=float, default=0.2, help="seconds per evaluation")
    parser.add_argument("--scheduler", default=None, help="address of a running scheduler")
    args = parser.parse_args()

    start = time.perf_counter()
    cluster = None if args.scheduler else LocalCluster(n_workers=2, threads_per_worker=1,
                                                       dashboard_address=None)
    with Client(args.scheduler or cluster) as client:
        opt = ng.optimizers.registry["HDBO"](
            parametrization=ng.p.Array(shape=(args.dim,)).set_bounds(-2.0, 2.0),
            budget=args.budget, num_workers=4)
        opt.parametrization.random_state.seed(0)
        opt.register_callback("tell", Progress(every=10))
        recommendation = opt.minimize(lambda x: ellipsoid(x, args.sleep), executor=client)
    if cluster is not None:
        cluster.close()
    best = ellipsoid(recommendation.value, 0.0)
    print(f"Auto, {args.budget} evaluations on Dask: best {best:.4g} (f_min 0) in "
          f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
