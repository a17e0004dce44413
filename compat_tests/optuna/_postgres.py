"""A throwaway PostgreSQL server for tests and benchmarks (Debian ``postgresql`` package).

``with ThrowawayPostgres() as url:`` runs ``initdb`` in a new temporary
directory, starts the server with ``pg_ctl`` on a free port of 127.0.0.1
(trust authentication, no fsync: a test server), yields its URL in the form
the README documents, ``postgresql://user@host:port/dbname`` (no ``+driver``:
SQLAlchemy's default driver, psycopg 3, from the ``postgres`` extra), for
Optuna's ``RDBStorage`` and ``psycopg.connect`` alike, and removes everything
on exit. PostgreSQL refuses to
run as root, so under root the server runs as the ``postgres`` system user
(created by the Debian package), or ``nobody``, owning the directory.

:func:`missing_reason` says why no server can be started here (no server
binaries, no ``psycopg``), for a clear pytest skip.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

_INSTALL_HINT = ("install the Debian package `postgresql` (apt-get install -y postgresql; "
                 ".ci/run does it when run as root) and `pip install -e '.[postgres]'`")


def server_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (PATH first, then Debian's layout)."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(candidates[-1]).parent if candidates else None


def missing_reason() -> str | None:
    """Why :class:`ThrowawayPostgres` cannot run on this machine, or None."""
    if server_bin() is None:
        return f"PostgreSQL server binaries (initdb, pg_ctl) not found: {_INSTALL_HINT}"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return f"psycopg (3) is not installed: {_INSTALL_HINT}"
    return None


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on (at the time of the call)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayPostgres:
    """Start a PostgreSQL server in a temporary directory; stop and delete it on exit.

    ``max_connections`` [100] is the server's connection limit (each Optuna
    worker process holds a few).
    """

    def __init__(self, max_connections: int = 100) -> None:
        reason = missing_reason()
        if reason is not None:
            raise RuntimeError(reason)
        self._bin = server_bin()
        self._max_connections = max_connections
        self._user: str | None = None
        if os.geteuid() == 0:
            self._user = next(u for u in ("postgres", "nobody") if _has_user(u))
        self.root = Path(tempfile.mkdtemp(prefix="hdbo-pg-"))
        self.port = free_port()
        self.url = f"postgresql://hdbo@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        kwargs = {} if self._user is None else {"user": self._user}
        proc = subprocess.run([str(self._bin / args[0]), *args[1:]], capture_output=True,
                              text=True, check=False, **kwargs)
        if proc.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr.strip()}\n"
                               f"{tail}")

    def __enter__(self) -> str:
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        data = self.root / "data"
        try:
            self._run("initdb", "-D", str(data), "-U", "hdbo", "--auth=trust", "-E", "UTF8",
                      "--no-sync")
            options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                       f"-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                       f"-c max_connections={self._max_connections}")
            self._run("pg_ctl", "-D", str(data), "-o", options, "-l",
                      str(self.root / "server.log"), "-w", "-t", "60", "start")
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        return self.url

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
