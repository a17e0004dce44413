"""A real PostgreSQL server: four worker processes per sampler on one study, and the CLI.

The server is a throwaway one (``conftest.postgres_server``: ``initdb`` and
``pg_ctl`` of the Debian ``postgresql`` package on a free local port); the
tests skip, with the reason, where it is not installed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
from collections.abc import Iterator
from multiprocessing.pool import Pool
from pathlib import Path

import optuna
import pytest
from _optuna_samplers import check_no_duplicates, run_argv, sampler_params, study_worker
from optuna.trial import TrialState

from hdbo_adapters.optuna import ATTR_PROPOSAL
from hdbo_cli.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _check_study(url: str, study_name: str, n: int) -> None:
    trials = optuna.load_study(study_name=study_name, storage=url).trials
    assert len(trials) == n and all(t.state == TrialState.COMPLETE for t in trials)
    check_no_duplicates(trials)


@pytest.fixture(scope="module")
def four_processes() -> Iterator[Pool]:
    """Four spawned worker processes, reused by the sampler tests (imports paid once)."""
    with mp.get_context("spawn").Pool(4) as pool:
        yield pool


@pytest.mark.parametrize("named", sampler_params())
def test_four_processes_share_a_postgres_study(named, postgres_url, four_processes):
    name, _ = named
    optuna.create_study(study_name="pg", storage=postgres_url)
    # one task per process; an exception in any worker is raised here
    four_processes.starmap(study_worker, [(postgres_url, "pg", name, w, 10, 0.05)
                                          for w in range(4)], chunksize=1)
    _check_study(postgres_url, "pg", 40)
    trials = optuna.load_study(study_name="pg", storage=postgres_url).trials
    assert sum(ATTR_PROPOSAL in t.system_attrs for t in trials) >= 36  # all but the first


def test_cli_four_workers_on_postgres(tmp_path, postgres_url):
    assert main(run_argv(tmp_path, postgres_url, 4, 40, study_name="cli")) == 0
    _check_study(postgres_url, "cli", 40)


def test_the_same_command_on_two_machines_shares_the_budget(tmp_path, postgres_url):
    """Two ``hdbo run`` processes at once (two "machines") on one study, budget 16."""
    optuna.create_study(study_name="two", storage=postgres_url)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "hdbo_cli",
                               *run_argv(tmp_path / f"m{m}", postgres_url, 2, 16,
                                         study_name="two")], env=env)
             for m in range(2)]
    assert [p.wait(timeout=600) for p in procs] == [0, 0]
    trials = optuna.load_study(study_name="two", storage=postgres_url).trials
    assert all(t.state == TrialState.COMPLETE for t in trials)
    assert 16 <= len(trials) <= 16 + 3  # the budget, plus at most the other workers' trials
    check_no_duplicates(trials)
