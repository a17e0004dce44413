"""``hdbo run --frontend optuna``: a benchmark problem as an Optuna study, N worker processes.

``run_optuna(args)`` optimises ``make_problem(args.problem, args.dim, args.seed)`` over
parameters ``x0 .. x{D-1}`` in ``[0, 1]`` (``Problem.evaluate_unit``) with
``HDBOSampler(args.algo, seed=args.seed, budget=args.budget)``:

* **Storage**: ``args.storage`` is any Optuna RDB URL (``sqlite:///file.db``,
  ``postgresql://user:password@host/dbname``, ``mysql://...``) or a path
  ending in ``.log`` / ``.jsonl`` / ``.journal`` for a ``JournalFileStorage``;
  the default is the SQLite file ``OUT/optuna.db``. SQLite connections wait up
  to 60 s for the write lock, so several local workers can share one file.
  ``postgresql://`` URLs use SQLAlchemy's default PostgreSQL driver, psycopg 3
  (the ``postgres`` extra), and give up connecting after 30 s unless the URL
  sets ``?connect_timeout=``. A storage that cannot be opened (unknown
  scheme, missing driver, unreachable server, unknown database) is a
  ValueError naming the URL with its password shown as ``***``
  (:func:`display_url`); messages and ``summary.json`` show URLs that way too.
* **Heartbeat**: on RDB storages every running trial records a heartbeat
  every ``args.heartbeat`` seconds [30; 0 disables], and each worker, before
  each trial, fails the RUNNING trials whose heartbeat is older than twice
  that (Optuna's ``RDBStorage(heartbeat_interval=...)`` and
  ``fail_stale_trials``). So a worker killed mid-trial leaves a trial that
  becomes FAIL after ``2 * heartbeat`` seconds; the samplers ignore FAIL
  trials, so it stops being a pending point and the next proposal may retry
  it. Journal files have no heartbeat: there, and with ``--heartbeat 0``, a
  dead worker's trial stays RUNNING (a pending point) until it is failed by
  hand (README, "Dead workers").
* **Study**: ``args.study_name`` (default ``ALGO-PROBLEM-dDIM-sSEED``), created
  or loaded (``load_if_exists``); its user attrs record algo, problem, dim and
  seed, and a re-run with different ones is refused. Re-running the same
  command resumes: COMPLETE trials count toward ``args.budget`` and only the
  rest is run. Once the dead trials of a killed run are failed (heartbeat),
  the re-run proposes exactly what an uninterrupted run would have.
* **Workers**: ``args.workers`` processes (spawned) share the storage; a
  shared counter hands out exactly the missing number of trials. The same
  command run on several machines at once shares the study: a worker also
  stops once the study holds ``args.budget`` COMPLETE trials, so the study
  ends with the budget plus at most the trials then in flight. Every worker
  uses the same engine seed (so any of them rebuilds the same optimizer from
  the storage); the first trials, before the engine has a search space, are
  uniform draws seeded by the trial number (the sampler's default
  ``TrialSeededRandomSampler``: distinct on every machine, reproducible on a
  re-run). Each worker runs each trial
  through ``study.optimize(..., n_trials=1)`` (which runs the heartbeat).
* **Progress**: unless ``args.quiet``, a progress bar counts the run's
  completed trials (resumed ones included) and shows the best value so far.
* **Output**: the files of the engine frontend (:func:`hdbo_cli.runs.write_run`):
  ``OUT/trajectory.csv`` (COMPLETE trials in number order: value, best so far,
  sampler time), ``OUT/summary.json`` and ``OUT/convergence.png``. On a noisy problem
  ``summary.json`` and the printed line also give ``recommended_true_value``, the
  noise-free value of the trial the sampler recommends (``best`` is the luckiest draw).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import re
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from hdbo_engine.util import is_int

from .runs import minimum_text, recommended_text, write_run

if TYPE_CHECKING:
    import optuna

    from .functions import Problem

_JOURNAL_SUFFIXES = (".log", ".jsonl", ".journal")
# ``scheme://user:PASSWORD@``: the password runs to the last "@" before any query string, so
# a password with an unescaped "@" or "/" is hidden whole; ``?password=`` in the query too.
_URL_PASSWORD = re.compile(r"^([\w+.-]+://[^:/]*:)[^?]*@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&]*")
_PG_CONNECT_TIMEOUT_S = 30
_LIBPQ_SCHEMES = ("postgresql", "postgresql+psycopg", "postgresql+psycopg2")  # connect_timeout


def param_names(dim: int) -> list[str]:
    """The study's parameter names, ``x0 .. x{dim-1}``, one per coordinate of the unit cube."""
    return [f"x{i}" for i in range(dim)]


def default_study_name(args: argparse.Namespace) -> str:
    return f"{args.algo}-{args.problem}-d{args.dim}-s{args.seed}"


def display_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages and ``summary.json``.

    ``postgresql://user:secret@host/db`` -> ``postgresql://user:***@host/db``;
    URLs without a password and journal file paths are returned unchanged.
    """
    return _QUERY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", url))


def _connect_failure(err: BaseException, url: str) -> str:
    """One line saying why the storage at ``url`` could not be opened."""
    if isinstance(err, ImportError):
        missing = err.__cause__ or err  # Optuna wraps the driver's ImportError
        hint = (" (the `postgres` extra installs it: pip install 'hdbo[postgres]')"
                if url.startswith("postgresql://") else "")
        return f"the database driver is not installed: {missing}{hint}"
    detail = str(getattr(err, "orig", None) or err)  # the driver's own message, if any
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    reason = lines[0] if lines else type(err).__name__
    if url.startswith(("postgres://", "postgres+")):
        reason += "; PostgreSQL URLs start with postgresql://"
    return reason


def make_storage(url: str, heartbeat: int = 0) -> Any:
    """An Optuna storage for an RDB URL or a journal file path (module docstring).

    ``heartbeat`` > 0 sets ``RDBStorage(heartbeat_interval=heartbeat)`` (grace
    period ``2 * heartbeat``) on RDB URLs; journal files ignore it. An RDB
    storage that cannot be opened raises ValueError
    ``storage: cannot connect to URL: REASON`` (password hidden).
    """
    import optuna
    from sqlalchemy.exc import SQLAlchemyError

    if "://" not in url:
        if not url.endswith(_JOURNAL_SUFFIXES):
            raise ValueError(f"storage: expected an RDB URL such as sqlite:///hdbo.db or a journal "
                             f"file path ending in {'/'.join(_JOURNAL_SUFFIXES)}, got {url!r}")
        from optuna.storages.journal import JournalFileBackend

        return optuna.storages.JournalStorage(JournalFileBackend(url))
    kwargs: dict[str, Any] = {}
    if url.startswith("sqlite"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 60}}
    elif url.split("://")[0] in _LIBPQ_SCHEMES and "connect_timeout=" not in url:
        kwargs["engine_kwargs"] = {"connect_args": {"connect_timeout": _PG_CONNECT_TIMEOUT_S}}
    if heartbeat > 0:
        kwargs["heartbeat_interval"] = heartbeat
    try:
        with warnings.catch_warnings():  # heartbeat_interval is an "experimental" argument
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(url, **kwargs)
    except (ImportError, SQLAlchemyError) as err:
        raise ValueError(f"storage: cannot connect to {display_url(url)}: "
                         f"{_connect_failure(err, url)}") from err


def _worker(url: str, heartbeat: int, study_name: str, algo: str, problem: str, dim: int,
            budget: int, seed: int, worker: int, claimed: Any, remaining: int, done: Any,
            best: Any) -> None:
    """One worker process: ask, evaluate, tell until the run's trials are handed out.

    ``done`` (shared int) counts the trials told, ``best`` (shared float) their lowest value.
    """
    import optuna

    from hdbo_adapters.optuna import HDBOSampler
    from hdbo_cli.problems import make_problem

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    prob = make_problem(problem, dim, seed)
    sampler = HDBOSampler(algo, seed=seed, budget=budget)
    study = optuna.load_study(study_name=study_name, storage=make_storage(url, heartbeat),
                              sampler=sampler)
    t0 = 0.0
    names = param_names(dim)

    def objective(trial: optuna.Trial) -> float:
        x = np.array([trial.suggest_float(name, 0.0, 1.0) for name in names])
        trial.set_user_attr("sampler_time_s", time.perf_counter() - t0)
        value = float(prob.evaluate_unit(x)[0])
        with done.get_lock():
            done.value += 1
            best.value = min(best.value, value)
        return value

    complete = (optuna.trial.TrialState.COMPLETE,)
    while True:
        # stop when this run's share is handed out, or when runs elsewhere completed the budget
        if len(study.get_trials(deepcopy=False, states=complete)) >= budget:
            return
        with claimed.get_lock():
            if claimed.value >= remaining:
                return
            claimed.value += 1
        t0 = time.perf_counter()  # ask time includes failing stale trials (heartbeat)
        study.optimize(objective, n_trials=1)


def recommended_true_value(study: optuna.Study, prob: Problem, args: argparse.Namespace
                           ) -> float | None:
    """The noise-free value of the trial the sampler recommends
    (``HDBOSampler.recommended_trial``, rebuilt here from the storage as every worker rebuilds
    it), or None before any trial has a finite value."""
    from hdbo_adapters.optuna import HDBOSampler

    trial = HDBOSampler(args.algo, seed=args.seed, budget=args.budget).recommended_trial(study)
    if trial is None:
        return None
    x = np.array([trial.params[name] for name in param_names(args.dim)])
    return float(prob.noise_free_unit(x)[0])


def run_optuna(args: argparse.Namespace) -> int:
    """Run (or resume) the study described by ``args``; print a summary.

    Returns 0, or 1 when a worker process failed. Bad arguments raise ValueError.
    """
    import optuna

    from hdbo_cli.problems import make_problem
    from hdbo_engine import get_algorithm

    get_algorithm(args.algo)  # unknown or missing algorithms fail here, before any worker
    prob = make_problem(args.problem, args.dim, args.seed)
    for name, low in (("budget", 1), ("workers", 1), ("heartbeat", 0)):
        value = getattr(args, name)
        if not is_int(value) or value < low:
            raise ValueError(f"{name}: expected an int >= {low}, got {value!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    url = args.storage or f"sqlite:///{(out / 'optuna.db').resolve()}"
    study_name = args.study_name or default_study_name(args)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=study_name, storage=make_storage(url, args.heartbeat),
                                direction="minimize", load_if_exists=True)
    config = {"algo": args.algo, "problem": args.problem, "dim": args.dim, "seed": args.seed}
    # a worker started at the same moment may be writing these: only a value that differs from
    # this run's is a mismatch, a missing one is not
    stored = {k: study.user_attrs[k] for k in config if k in study.user_attrs}
    if any(value != config[k] for k, value in stored.items()):
        raise ValueError(f"study_name: study {study_name!r} in {display_url(url)} was run "
                         f"with {stored}, not {config}; use another --study-name")
    for key, value in config.items():
        study.set_user_attr(key, value)

    def complete() -> list[optuna.trial.FrozenTrial]:
        return study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))

    resumed = [float(t.value) for t in complete()]
    remaining = args.budget - len(resumed)
    start = time.perf_counter()
    if remaining > 0:
        ctx = mp.get_context("spawn")
        claimed, done = ctx.Value("i", 0), ctx.Value("i", 0)
        best_value = ctx.Value("d", min(resumed, default=float("inf")))
        procs = [ctx.Process(target=_worker, args=(url, args.heartbeat, study_name, args.algo,
                                                   args.problem, args.dim, args.budget, args.seed,
                                                   w, claimed, remaining, done, best_value))
                 for w in range(min(args.workers, remaining))]
        for p in procs:
            p.start()
        with tqdm(total=args.budget, initial=len(resumed), disable=args.quiet,
                  desc=f"{args.algo} {args.problem}-{args.dim}D via optuna") as bar:
            while True:
                finished = not any(p.is_alive() for p in procs)  # then the count is final
                bar.update(len(resumed) + done.value - bar.n)
                if done.value or resumed:
                    bar.set_postfix(best=f"{best_value.value:.5g}")
                if finished:
                    break
                time.sleep(0.2)
        for p in procs:
            p.join()
        failed = [p.exitcode for p in procs if p.exitcode != 0]
        if failed:
            print(f"hdbo run --frontend optuna: {len(failed)} worker process(es) failed (exit "
                  f"codes {failed}); completed trials are kept in {display_url(url)}, "
                  f"re-run to resume", file=sys.stderr)
            return 1
    trials = complete()
    values = [float(t.value) for t in trials]
    result = {
        "algo": args.algo, "problem": args.problem, "dim": args.dim, "budget": args.budget,
        "seed": args.seed, "values": values,
        "ask_times": [float(t.user_attrs.get("sampler_time_s", float("nan"))) for t in trials],
        "frontend": "optuna", "storage": display_url(url), "study_name": study_name,
        "workers": args.workers, "n_complete": len(values), "f_min": prob.f_min,
        "best": min(values, default=None), "total_time": time.perf_counter() - start,
    }
    if prob.noisy:
        result["recommended_true_value"] = recommended_true_value(study, prob, args)
    write_run(result, out)
    print(f"{args.algo} on {args.problem}-{args.dim}D via optuna ({args.workers} workers, "
          f"study {study_name!r}): {len(values)} complete trials, best {result['best']}"
          f"{minimum_text(prob.f_min)}"
          f"{recommended_text(result.get('recommended_true_value'))} -> {out}")
    return 0
