"""The four named samplers, with pytest params that skip algorithms not present yet."""

from __future__ import annotations

from typing import Any

import pytest

from hdbo_adapters.optuna import BKBSampler, CobBOSampler, GOUCBSampler, HDBOSampler, MSUCBSampler
from hdbo_engine.algorithms import get_algorithm

NAMED: dict[str, type[HDBOSampler]] = {
    "msucb": MSUCBSampler,
    "cobbo": CobBOSampler,
    "goucb": GOUCBSampler,
    "bkb": BKBSampler,
}

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


def journal_worker(path: str, study_name: str, worker: int, n_trials: int) -> None:
    """One process of the multi-process test: MS-UCB on a shared JournalFileStorage."""
    import optuna
    from optuna.samplers import RandomSampler
    from optuna.storages.journal import JournalFileBackend

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.JournalStorage(JournalFileBackend(path))
    sampler = MSUCBSampler(seed=0, n_startup_trials=4, independent_sampler=RandomSampler(worker),
                           **FAST_KWARGS["msucb"])
    study = optuna.load_study(study_name=study_name, storage=storage, sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        return sum((trial.suggest_float(f"x{i}", -1.0, 1.0) - 0.3) ** 2 for i in range(4))

    study.optimize(objective, n_trials=n_trials)
