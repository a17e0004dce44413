"""Several processes on one storage: no lost or duplicate trials; kill and resume the CLI run."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

import optuna
import pytest
from _optuna_samplers import (
    check_no_duplicates,
    run_argv,
    same_seed_worker,
    sampler_params,
    study_worker,
)
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from hdbo_adapters.optuna import ATTR_PROPOSAL
from hdbo_cli.cli import main
from hdbo_cli.optuna_run import make_storage

ROOT = Path(__file__).resolve().parents[2]


def test_four_processes_share_a_journal_storage(tmp_path):
    path = str(tmp_path / "journal.log")
    storage = optuna.storages.JournalStorage(JournalFileBackend(path))
    optuna.create_study(study_name="mp", storage=storage)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=study_worker, args=(path, "mp", "msucb", w, 6))
             for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    trials = optuna.load_study(study_name="mp", storage=storage).trials
    assert len(trials) == 24 and all(t.state == TrialState.COMPLETE for t in trials)
    check_no_duplicates(trials)
    assert [t.number for t in trials] == list(range(len(trials)))
    assert sum(ATTR_PROPOSAL in t.system_attrs for t in trials) >= 20  # the engine made the rest


@pytest.fixture(scope="module")
def four_processes() -> Iterator[tuple[Pool, object]]:
    """Four spawned worker processes (imports paid once) and a barrier for them."""
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(4) as pool:
        yield pool, manager.Barrier(4)


def _storage_params() -> list[Any]:
    """Every sampler on a journal file; on SQLite (whose locks make four writers slow: 16-60
    s a sampler), Auto in the default suite and the others in the slow one."""
    out = []
    for param in sampler_params():
        name = param.values[0][0]
        for kind in ("sqlite", "journal"):
            slow = [pytest.mark.slow] if kind == "sqlite" and name != "auto" else []
            out.append(pytest.param(param.values[0], kind, id=f"{name}-{kind}",
                                    marks=[*param.marks, *slow]))
    return out


@pytest.mark.parametrize(("named", "storage_kind"), _storage_params())
def test_four_workers_with_one_seed_never_duplicate(named, storage_kind, four_processes,
                                                    tmp_path):
    """Four processes, every sampler built with ``seed=0`` and its defaults (the
    README's promise), starting together: 40 distinct parameter vectors, the first trials
    (independent sampler) included."""
    name, _ = named
    pool, barrier = four_processes
    url = (f"sqlite:///{tmp_path / 'same.db'}" if storage_kind == "sqlite"
           else str(tmp_path / "same.log"))
    optuna.create_study(study_name="same", storage=make_storage(url))
    pool.starmap(same_seed_worker, [(url, "same", name, 10, barrier)] * 4, chunksize=1)
    trials = optuna.load_study(study_name="same", storage=make_storage(url)).trials
    assert len(trials) == 40 and all(t.state == TrialState.COMPLETE for t in trials)
    check_no_duplicates(trials)


def _n_complete(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def _proposed(study: optuna.Study, number: int) -> bool:
    """Whether trial ``number`` exists and has stored the sampler's proposal."""
    trials = study.get_trials(deepcopy=False)
    return len(trials) > number and ATTR_PROPOSAL in trials[number].system_attrs


def _run_and_kill(argv: list[str], storage: str | optuna.storages.BaseStorage, study_name: str,
                  n_done: int, in_next_trial: bool = False) -> optuna.Study:
    """Run ``hdbo`` with ``argv`` in a new process group; kill -9 it all after ``n_done``
    COMPLETE trials (``in_next_trial``: once the next trial has its proposal too, so that
    it has a heartbeat). The study is created first, so that the runner does not race the
    test's reads to create the schema. Returns the study."""
    study = optuna.create_study(study_name=study_name, storage=storage)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "hdbo_cli", *argv], env=env,
                            start_new_session=True)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None and (
            _n_complete(study) < n_done or (in_next_trial and not _proposed(study, n_done))):
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and its workers, mid-run
    proc.wait()
    return study


def test_cli_runner_killed_then_resumed(tmp_path):
    out, budget = tmp_path / "run", 24
    url = f"sqlite:///{(out / 'optuna.db').resolve()}"
    out.mkdir()
    study = _run_and_kill(run_argv(out, None, 2, budget), url, "resume", 4)
    done = study.get_trials(states=(TrialState.COMPLETE,))
    assert 4 <= len(done) < budget
    before = {t.number: t.params for t in done}

    assert main(run_argv(out, None, 3, budget)) == 0
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == budget  # resumed: the completed trials counted toward the budget
    assert all(before[n] == study.trials[n].params for n in before)  # nothing lost
    check_no_duplicates(complete)
    assert (out / "summary.json").exists() and len((out / "trajectory.csv").read_text()
                                                   .splitlines()) == budget + 1
    assert main(run_argv(out, None, 2, budget)) == 0  # nothing left to do
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == budget


def test_cli_rerun_after_a_kill_proposes_what_an_uninterrupted_run_does(rdb_url, tmp_path):
    budget = 24
    storage = optuna.storages.RDBStorage(rdb_url)  # one connection pool for the test's reads

    def params(study_name: str) -> list[dict]:
        study = optuna.load_study(study_name=study_name, storage=storage)
        complete = study.get_trials(states=(TrialState.COMPLETE,))
        return [t.params for t in sorted(complete, key=lambda t: t.datetime_complete)]

    assert main(run_argv(tmp_path / "a", rdb_url, 1, budget, 1, "whole")) == 0
    # Killed inside trial 3, after its heartbeat started: a kill in the instant between a
    # trial's creation and its first heartbeat leaves a trial Optuna never fails (module
    # docstring of hdbo_adapters.optuna), and the rerun is then only equivalent, not equal.
    killed = _run_and_kill(run_argv(tmp_path / "b", rdb_url, 1, budget, 1, "killed"), storage,
                           "killed", 3, in_next_trial=True)
    assert 3 <= _n_complete(killed) < budget
    for t in killed.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if ATTR_PROPOSAL not in t.system_attrs:  # the rare kill just after a trial's creation
            killed.tell(t.number, state=TrialState.FAIL)  # what the docstring tells users to do
    time.sleep(3.5)  # past the grace period (2 heartbeats) of the trial the kill left RUNNING
    assert main(run_argv(tmp_path / "b", rdb_url, 1, budget, 1, "killed")) == 0
    assert params("killed") == params("whole")


def _kill_in_trial(url: str, study_name: str, hang_at: int, heartbeat: int, tmp_path: Path
                   ) -> None:
    """One MS-UCB worker process on the study; ``kill -9`` it inside trial ``hang_at``."""
    marker = tmp_path / "in-trial"
    proc = mp.get_context("spawn").Process(
        target=study_worker,
        args=(url, study_name, "msucb", 0, 100, 0.0, heartbeat, hang_at, str(marker)))
    proc.start()
    deadline = time.time() + 120
    while not marker.exists() and proc.is_alive() and time.time() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.join()
    assert marker.exists(), "the worker never reached the trial to be killed in"


def test_dead_worker_trial_fails_by_heartbeat_and_is_retried(rdb_url, tmp_path):
    study = optuna.create_study(study_name="dead", storage=make_storage(rdb_url, heartbeat=1))
    _kill_in_trial(rdb_url, "dead", 6, 1, tmp_path)
    dead = study.trials[6]
    assert dead.state == TrialState.RUNNING and len(study.trials) == 7
    time.sleep(3.5)  # the grace period is 2 s; SQLite's clock has whole seconds
    study_worker(rdb_url, "dead", "msucb", 0, 6, heartbeat=1)  # the restarted worker
    trials = study.trials
    assert trials[6].state == TrialState.FAIL  # failed by the restarted worker's optimize
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == 12 and len(trials) == 13
    check_no_duplicates(complete)
    # no longer pending: the same history proposes the dead trial's point again
    assert trials[7].params == dead.params


def test_without_heartbeat_a_dead_trial_stays_running_until_failed_by_hand(tmp_path):
    url = f"sqlite:///{tmp_path / 'nohb.db'}"
    study = optuna.create_study(study_name="dead", storage=url)
    _kill_in_trial(url, "dead", 6, 0, tmp_path)
    dead = study.trials[6]
    study_worker(url, "dead", "msucb", 0, 1)
    assert study.trials[6].state == TrialState.RUNNING  # Optuna never fails it
    assert study.trials[7].params != dead.params  # a pending point
    study.tell(6, state=TrialState.FAIL)  # the README's recovery by hand
    assert study.trials[6].state == TrialState.FAIL
    study_worker(url, "dead", "msucb", 0, 2)
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == 9
    check_no_duplicates(complete)
