"""Trainables and the restore test's Tune run, shared with the driver process that test kills.

``python _tune_runs.py ADDRESS STORAGE_URL RUNS_DIR NAME`` runs :func:`restorable_tuner` on
the Ray cluster at ADDRESS. Ray's workers cannot import this folder, so its functions travel
by value.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import optuna
import ray
from ray import tune

from hdbo_adapters.optuna import AutoSampler
from hdbo_adapters.ray import OptunaSearch

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

OPTIMUM = 0.3  # every coordinate's best value, inside the box [-1, 1]
RESTORE_DIM = 3
RESTORE_TRIALS = 10


def sphere(config: dict[str, float]) -> float:
    """Squared distance of ``config``'s coordinates from (0.3, ..., 0.3); minimum 0."""
    return float(sum((v - OPTIMUM) ** 2 for v in config.values()))


def box(dim: int) -> dict[str, tune.search.sample.Float]:
    """A Tune ``param_space`` of ``dim`` floats ``x0``, ``x1``, ... in [-1, 1]."""
    return {f"x{i}": tune.uniform(-1.0, 1.0) for i in range(dim)}


def one_result(config: dict[str, float]) -> None:
    """One evaluation of :func:`sphere`; the short sleep keeps several trials running at once."""
    time.sleep(0.2)
    tune.report({"loss": sphere(config)})


def learning_curve(config: dict[str, float]) -> None:
    """Four results, ``sphere + 1 / iteration``: every trial improves with training, and its
    final value (at iteration 4) is its configuration's ``sphere + 0.25``."""
    value = sphere(config)
    for iteration in range(1, 5):
        time.sleep(0.05)
        tune.report({"loss": value + 1.0 / iteration})


def restorable_tuner(url: str, runs: str, name: str) -> tune.Tuner:
    """A sequential run of :data:`RESTORE_TRIALS` trials with Auto behind an RDB storage."""
    search = OptunaSearch(sampler=AutoSampler(seed=0, budget=RESTORE_TRIALS),
                          storage=optuna.storages.RDBStorage(url), study_name="restore")
    return tune.Tuner(
        one_result, param_space=box(RESTORE_DIM),
        tune_config=tune.TuneConfig(search_alg=search, num_samples=RESTORE_TRIALS,
                                    max_concurrent_trials=1, metric="loss", mode="min",
                                    reuse_actors=True),
        run_config=tune.RunConfig(storage_path=runs, name=name, verbose=0))


def restored_tuner(runs: str, name: str) -> tune.Tuner:
    """The run ``name`` under ``runs``, restored from its experiment checkpoint."""
    return tune.Tuner.restore(str(Path(runs) / name), trainable=one_result)


if __name__ == "__main__":
    address, url, runs, name = sys.argv[1:5]
    ray.init(address=address, log_to_driver=False)
    restorable_tuner(url, runs, name).fit()
