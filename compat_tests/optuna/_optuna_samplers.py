"""The four named samplers, with pytest params that skip algorithms not present yet, and
the worker, objective and checks shared by the multi-process tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.samplers import RandomSampler
from optuna.trial import FrozenTrial

from hdbo_adapters.optuna import HDBOSampler, named_samplers
from hdbo_cli.optuna_run import make_storage
from hdbo_engine import get_algorithm

NAMED: dict[str, type[HDBOSampler]] = {
    cls.algorithm_name: cls for cls in named_samplers().values()}

# Small settings that keep the big parametrised suites quick; other algorithms
# run with their defaults (the engine validates every keyword).
FAST_KWARGS: dict[str, dict[str, Any]] = {
    "msucb": {"n_optimize": 4, "restarts": 1, "n_candidates": 16},
}


def missing_reason(name: str) -> str | None:
    """Why the engine algorithm ``name`` cannot be used here, or None."""
    try:
        get_algorithm(name)
    except ImportError as err:
        return f"engine algorithm {name!r} is not importable: {err}"
    return None


def sampler_params() -> list[Any]:
    """One pytest param per named sampler class, skipped when its algorithm is absent."""
    out = []
    for name, cls in NAMED.items():
        reason = missing_reason(name)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        out.append(pytest.param((name, cls), id=name, marks=marks))
    return out


def quadratic(trial: optuna.Trial, dim: int = 4) -> float:
    """The multi-process tests' objective: a shifted sphere over ``x0 .. x{dim-1}`` in [-1, 1]."""
    return sum((trial.suggest_float(f"x{i}", -1.0, 1.0) - 0.3) ** 2 for i in range(dim))


def study_worker(storage: str, study_name: str, name: str, worker: int, n_trials: int,
                 sleep_s: float = 0.0, heartbeat: int = 0, hang_at: int = -1,
                 marker: str = "") -> None:
    """One worker process of the multi-process tests: sampler ``name`` on a shared study.

    ``storage`` is an RDB URL or a journal file path (``make_storage``, with
    ``heartbeat``). Every worker uses engine seed 0 and n_startup_trials 4;
    the objective is :func:`quadratic` after ``sleep_s`` seconds. The trial
    numbered ``hang_at`` writes ``marker`` (a file path) and sleeps forever,
    for a test to kill the process in the middle of that trial.
    """
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = NAMED[name](seed=0, n_startup_trials=4, independent_sampler=RandomSampler(worker),
                          **FAST_KWARGS.get(name, {}))
    study = optuna.load_study(study_name=study_name, storage=make_storage(storage, heartbeat),
                              sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        value = quadratic(trial)
        if trial.number == hang_at:
            Path(marker).write_text(str(trial.number))
            time.sleep(3600)
        time.sleep(sleep_s)
        return value

    study.optimize(objective, n_trials=n_trials)


def same_seed_worker(storage: str, study_name: str, name: str, n_trials: int,
                     barrier: Any, dim: int = 20) -> None:
    """A worker as a new user writes it: sampler ``name`` with ``seed=0`` and every other
    argument at its default (the independent sampler included), :func:`quadratic` over
    ``dim`` parameters after 0.05 s; it starts optimising when ``barrier`` lets every
    worker through at once."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=study_name, storage=make_storage(storage),
                              sampler=NAMED[name](seed=0, **FAST_KWARGS.get(name, {})))
    barrier.wait()

    def objective(trial: optuna.Trial) -> float:
        value = quadratic(trial, dim)
        time.sleep(0.05)
        return value

    study.optimize(objective, n_trials=n_trials)


def check_no_duplicates(trials: list[FrozenTrial]) -> None:
    """The trials' parameter vectors are pairwise different."""
    points = [tuple(t.params.values()) for t in trials]
    assert len(set(points)) == len(points), "duplicate parameter vectors"


def run_argv(out: Path, storage: str | None, workers: int, budget: int, heartbeat: int = 30,
             study_name: str = "resume") -> list[str]:
    """Arguments of ``hdbo run --frontend optuna`` (MS-UCB on Ackley-4D, seed 3)."""
    argv = ["run", "--frontend", "optuna", "--algo", "msucb", "--problem", "ackley", "--dim", "4",
            "--budget", str(budget), "--seed", "3", "--out", str(out), "--study-name",
            study_name, "--workers", str(workers), "--heartbeat", str(heartbeat), "--quiet"]
    return argv if storage is None else [*argv, "--storage", storage]
