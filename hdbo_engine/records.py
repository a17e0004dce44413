"""State records: an optimizer's fitted state kept in its proposals' metas.

An optimizer's state is a function of its told history (``docs/ARCHITECTURE.md``,
"Conventions"), so a rebuild could replay every fit. To skip them, the first proposal of an
ask records the state it was made from under the algorithm's meta key, once, and a rebuild
continues from the latest record of its own history instead of replaying the fits before
it, with the same result.

A record is a dict of plain JSON types with ``"n"`` (the state depends on the first ``n``
told points only) and ``"fp"``, the :func:`history_fingerprint` of the algorithm's
settings and those ``n`` points; the algorithm's own fields lie between them
(:func:`make_record`). A record is used only where its fingerprint matches, so a record of
another history or configuration, or a user's value under the same key, is skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np

from .util import is_int

__all__ = ["has_record", "history_fingerprint", "latest_record", "make_record", "meta_records"]

T = TypeVar("T")


def history_fingerprint(settings: str, X: np.ndarray, y: np.ndarray) -> str:
    """Short hash of an algorithm's ``settings`` (a repr of what shapes its state) and a
    told history prefix ``(X, y)``: a record's ``"fp"``."""
    h = hashlib.sha1(settings.encode())
    h.update(np.ascontiguousarray(X, dtype=float).tobytes())
    h.update(np.ascontiguousarray(y, dtype=float).tobytes())
    return h.hexdigest()[:20]


def make_record(n: int, fp: str, **fields: Any) -> dict[str, Any]:
    """The record ``{"n": n, **fields, "fp": fp}`` of a state made on the first ``n`` told
    points; ``fields`` are plain JSON types."""
    return {"n": n, **fields, "fp": fp}


def meta_records(metas: Iterable[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
    """The records (dicts) under ``key`` in proposal metas, in order; anything else under
    that key is skipped."""
    return [m[key] for m in metas if isinstance(m.get(key), dict)]


def has_record(records: Iterable[Mapping[str, Any]], fp: str) -> bool:
    """Whether one of ``records`` carries the fingerprint ``fp``: the state is recorded
    already, and an ask does not record it again."""
    return any(r.get("fp") == fp for r in records)


def latest_record(records: Iterable[object], after: int, upto: int,
                  fingerprint: Callable[[int], str], read: Callable[[dict[str, Any]], T | None],
                  at: Callable[[int], bool] | None = None) -> tuple[int, str, T] | None:
    """The latest usable record: ``(n, fp, read(record))`` for the largest integer ``n``
    with ``after < n <= upto`` (and ``at(n)`` when given) among the ``records`` whose
    ``"fp"`` is ``fingerprint(n)`` (the fingerprint of this history's first ``n`` points)
    and which ``read`` accepts; the first of several with the same ``n``. None when there
    is none.

    ``read`` turns a record's fields into the state; it returns None or raises
    ``KeyError``, ``TypeError`` or ``ValueError`` for a malformed record, which is skipped,
    as are records that are not dicts, lack an integer ``"n"`` or carry another fingerprint.
    Each ``fingerprint(n)`` is computed once.
    """
    usable = [r for r in records if isinstance(r, dict) and is_int(r.get("n"))
              and after < r["n"] <= upto and (at is None or at(int(r["n"])))]
    fps: dict[int, str] = {}
    for record in sorted(usable, key=lambda r: -r["n"]):
        n = int(record["n"])
        if n not in fps:
            fps[n] = fingerprint(n)
        try:
            state = read(record) if record.get("fp") == fps[n] else None
        except (KeyError, TypeError, ValueError):
            continue
        if state is not None:
            return n, fps[n], state
    return None
