"""Several processes on one storage: no lost or duplicate trials; kill and resume the CLI run."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import optuna
from _optuna_samplers import journal_worker
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from hdbo_adapters.optuna import ATTR_PROPOSAL
from hdbo_adapters.optuna_run import run_optuna

ROOT = Path(__file__).resolve().parents[2]


def _check_no_duplicates(trials: list[optuna.trial.FrozenTrial]) -> None:
    points = [tuple(t.params.values()) for t in trials]
    assert len(set(points)) == len(points)
    assert [t.number for t in trials] == list(range(len(trials)))


def test_four_processes_share_a_journal_storage(tmp_path):
    path = str(tmp_path / "journal.log")
    storage = optuna.storages.JournalStorage(JournalFileBackend(path))
    optuna.create_study(study_name="mp", storage=storage)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=journal_worker, args=(path, "mp", w, 6)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    trials = optuna.load_study(study_name="mp", storage=storage).trials
    assert len(trials) == 24 and all(t.state == TrialState.COMPLETE for t in trials)
    _check_no_duplicates(trials)
    assert sum(ATTR_PROPOSAL in t.system_attrs for t in trials) >= 20  # the engine made the rest


def _args(out: Path, workers: int, budget: int) -> argparse.Namespace:
    return argparse.Namespace(algo="msucb", problem="ackley", dim=4, budget=budget, seed=3,
                              out=str(out), storage=None, study_name="resume", workers=workers,
                              quiet=True)


def test_cli_runner_killed_then_resumed(tmp_path):
    out, budget = tmp_path / "run", 24
    url = f"sqlite:///{(out / 'optuna.db').resolve()}"
    code = ("import argparse, sys; from hdbo_adapters.optuna_run import run_optuna; "
            f"sys.exit(run_optuna(argparse.Namespace(**{vars(_args(out, 2, budget))!r})))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)
    n_done, deadline = 0, time.time() + 240
    while time.time() < deadline and proc.poll() is None and n_done < 4:
        time.sleep(0.05)
        try:  # read-only peek; the runner creates the database and the study
            with sqlite3.connect(out / "optuna.db", timeout=30) as db:
                n_done = db.execute("SELECT COUNT(*) FROM trials WHERE state = 'COMPLETE'"
                                    ).fetchone()[0]
        except sqlite3.OperationalError:  # no database or tables yet
            continue
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and its workers, mid-run
    proc.wait()
    done = optuna.load_study(study_name="resume", storage=url).get_trials(
        states=(TrialState.COMPLETE,))
    assert 4 <= len(done) < budget
    before = {t.number: t.params for t in done}

    assert run_optuna(_args(out, 3, budget)) == 0
    study = optuna.load_study(study_name="resume", storage=url)
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == budget  # resumed: the completed trials counted toward the budget
    assert all(before[n] == study.trials[n].params for n in before)  # nothing lost
    points = [tuple(t.params.values()) for t in complete]
    assert len(set(points)) == len(points)
    assert (out / "summary.json").exists() and len((out / "trajectory.csv").read_text()
                                                   .splitlines()) == budget + 1
    assert run_optuna(_args(out, 2, budget)) == 0  # nothing left to do
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == budget
