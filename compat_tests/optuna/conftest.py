"""Storage fixtures: a throwaway PostgreSQL server (one per session), and RDB URLs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from _postgres import ThrowawayPostgres, missing_reason

_DATABASES = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of the session's throwaway PostgreSQL server (skips where none can start)."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with ThrowawayPostgres() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the session's server, as a SQLAlchemy URL."""
    import psycopg

    name = f"hdbo_test_{next(_DATABASES)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def rdb_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty RDB storage URL: a SQLite file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rdb.db'}"
    return request.getfixturevalue("postgres_url")
