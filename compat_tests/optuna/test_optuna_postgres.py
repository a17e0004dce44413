"""A real PostgreSQL server: four worker processes per sampler on one study, and the CLI.

The server is a throwaway one (``conftest.postgres_server``: ``initdb`` and
``pg_ctl`` of the Debian ``postgresql`` package on a free local port); the
tests skip, with the reason, where it is not installed. Every URL has the
form the README documents, ``postgresql://user:password@host/dbname`` (no
``+driver``), so the driver is the one the ``postgres`` extra installs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from multiprocessing.pool import Pool
from pathlib import Path

import optuna
import pytest
import sqlalchemy
from _optuna_samplers import check_no_duplicates, run_argv, sampler_params, study_worker
from _postgres import free_port
from optuna.trial import TrialState

from hdbo_adapters.optuna import ATTR_PROPOSAL
from hdbo_cli.cli import main
from hdbo_cli.optuna_run import display_url

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the `bench` extra installs tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
README_URL = "postgresql://user:password@dbhost/hdbo"  # the README's --storage example


def _storage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str) -> str:
    """``hdbo run --frontend optuna --storage url``: exit code 2 and one line, returned."""
    argv = run_argv(tmp_path, url, 1, 2, study_name="bad")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


def test_the_postgres_extra_installs_the_driver_sqlalchemy_uses_for_the_readme_url():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.match(r"[A-Za-z0-9_.-]+", req)[0].lower()
             for req in extras["optional-dependencies"]["postgres"]}
    engine = sqlalchemy.create_engine(README_URL)  # imports the driver, connects to nothing
    assert engine.dialect.driver in names


def test_the_readme_url_form_is_what_the_tests_use(postgres_url):
    url = sqlalchemy.engine.make_url(postgres_url)
    assert url.drivername == "postgresql" and postgres_url.startswith("postgresql://")


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://user:password@dbhost/hdbo", "postgresql://user:***@dbhost/hdbo"),
    ("postgresql://u:p@ss/w@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgresql://u@h/db?password=pw&sslmode=require",
     "postgresql://u@h/db?password=***&sslmode=require"),
    ("postgresql://hdbo@127.0.0.1:5432/postgres", "postgresql://hdbo@127.0.0.1:5432/postgres"),
    ("sqlite:///C:/runs/hdbo.db", "sqlite:///C:/runs/hdbo.db"),
    ("runs/journal.log", "runs/journal.log"),
])
def test_display_url_hides_the_password_only(url, shown):
    assert display_url(url) == shown


def test_an_unreachable_server_is_one_line_naming_the_storage(tmp_path, capsys):
    port = free_port()  # nothing listens there
    err = _storage_error(tmp_path, capsys, f"postgresql://hdbo:s3cret@127.0.0.1:{port}/hdbo")
    assert err.startswith(f"hdbo run: --storage: cannot connect to "
                          f"postgresql://hdbo:***@127.0.0.1:{port}/hdbo: ")
    assert "Connection refused" in err and "s3cret" not in err


def test_a_missing_driver_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    err = _storage_error(tmp_path, capsys, README_URL)
    assert err.startswith("hdbo run: --storage: cannot connect to "
                          "postgresql://user:***@dbhost/hdbo: the database driver is not "
                          "installed: ")
    assert "psycopg" in err and "password" not in err
    assert err.endswith("(the `postgres` extra installs it: pip install 'hdbo[postgres]')")


def test_an_unknown_database_is_one_line_naming_it(tmp_path, capsys, postgres_server):
    url = postgres_server.rsplit("/", 1)[0] + "/no_such_db"
    err = _storage_error(tmp_path, capsys, url)
    assert err.startswith(f"hdbo run: --storage: cannot connect to {url}: ")
    assert err.endswith('database "no_such_db" does not exist')


def _check_study(url: str, study_name: str, n: int) -> None:
    trials = optuna.load_study(study_name=study_name, storage=url).trials
    assert len(trials) == n and all(t.state == TrialState.COMPLETE for t in trials)
    check_no_duplicates(trials)


@pytest.fixture(scope="module")
def four_processes() -> Iterator[Pool]:
    """Four spawned worker processes, reused by the sampler tests (imports paid once)."""
    with mp.get_context("spawn").Pool(4) as pool:
        yield pool


@pytest.mark.parametrize("named", [  # Auto in the default suite, the others in the slow one
    p if p.values[0][0] == "auto" else pytest.param(*p.values, id=p.id,
                                                    marks=[*p.marks, pytest.mark.slow])
    for p in sampler_params()])
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
