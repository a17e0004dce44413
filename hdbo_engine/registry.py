"""Registry of engine algorithms by name, loaded lazily (GO-UCB needs torch; the rest do not).

The lookup imports an algorithm's module only when its name is asked for, so
:func:`hdbo_engine.minimize` (which accepts a name) can use it without importing
:mod:`hdbo_engine.algorithms`.

Every *public* algorithm appears, under names derived from its entry, in each framework
(``<Class>Sampler`` in :mod:`hdbo_adapters.optuna`, ``<Class>Optimizer`` and
``<name>_minimize`` in :mod:`hdbo_adapters.skopt`, ``<nevergrad_name>`` in Nevergrad's
registry), in ``hdbo run --algo`` and among ``hdbo bench``'s methods: registering one
algorithm here is all it takes (``docs/ARCHITECTURE.md``, "The registry").
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .base import Optimizer

ALGORITHMS_PACKAGE = "hdbo_engine.algorithms"


@dataclass(frozen=True)
class Entry:
    """One registered algorithm.

    ``target`` is ``"module:Class"`` (a module of :data:`ALGORITHMS_PACKAGE`, or a dotted
    module path) or the class itself; ``public`` algorithms are the ones the adapters, the
    command line and the bench expose (the papers' baselines are not); ``nevergrad_name``
    is the name in Nevergrad's registry [the class name].
    """

    name: str
    target: str | type
    class_name: str
    public: bool = True
    nevergrad_name: str = ""

    @property
    def module(self) -> str:
        if not isinstance(self.target, str):
            return self.target.__module__
        module = self.target.split(":")[0]
        return module if "." in module else f"{ALGORITHMS_PACKAGE}.{module}"

    def load(self) -> type[Optimizer]:
        if not isinstance(self.target, str):
            return self.target
        return getattr(import_module(self.module), self.target.split(":")[1])


_ENTRIES: dict[str, Entry] = {}


def _key(name: str) -> str:
    return str(name).lower().replace("-", "").replace("_", "")


def register(name: str, target: str | type, *, class_name: str | None = None,
             public: bool = True, nevergrad_name: str | None = None) -> Entry:
    """Register an algorithm under ``name`` (see :class:`Entry`); returns its entry."""
    if not isinstance(name, str) or not name or _key(name) != name:
        raise ValueError(f"name: expected a lower-case name without '-' or '_', got {name!r}")
    if isinstance(target, str):
        if target.count(":") != 1:
            raise ValueError(f"target: expected 'module:Class' or a class, got {target!r}")
        cls_name = target.split(":")[1]
    elif isinstance(target, type):
        cls_name = target.__name__
    else:
        raise TypeError(f"target: expected 'module:Class' or a class, got {target!r}")
    cls_name = class_name or cls_name
    entry = Entry(name, target, cls_name, public, nevergrad_name or cls_name)
    _ENTRIES[name] = entry
    return entry


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (a test's temporary algorithm)."""
    _ENTRIES.pop(_key(name), None)


register("auto", "auto:Auto", nevergrad_name="HDBO")
register("msucb", "msucb:MSUCB")
register("cobbo", "cobbo:CobBO")
register("goucb", "goucb:GOUCB")
register("bkb", "bkb:BKB")
register("gpucb", "baselines:GPUCB", public=False)
register("random", "baselines:RandomSearch", public=False)


def entries(public: bool | None = None) -> list[Entry]:
    """Registered entries in registration order (only the public ones, or only the others)."""
    return [e for e in _ENTRIES.values() if public is None or e.public == public]


T = TypeVar("T")


def generate(cache: dict[tuple[str, str], Any], name_of: Callable[[Entry], str],
             make: Callable[[Entry], T]) -> dict[str, T]:
    """``{name_of(entry): make(entry)}`` for every public entry: the adapters' per-algorithm
    classes and functions. Each is made once per (name, algorithm) and kept in ``cache``, so
    it keeps its identity (pickling, ``isinstance``) across calls."""
    out: dict[str, T] = {}
    for entry in entries(public=True):
        key = (name_of(entry), entry.name)
        if key not in cache:
            cache[key] = make(entry)
        out[key[0]] = cache[key]
    return out


def class_names() -> dict[str, str]:
    """Class name -> registered name, e.g. ``"CobBO" -> "cobbo"``."""
    return {e.class_name: e.name for e in _ENTRIES.values()}


def available() -> list[str]:
    """Names of the algorithms whose modules are present in this installation."""
    return [e.name for e in _ENTRIES.values()
            if not isinstance(e.target, str) or importlib.util.find_spec(e.module) is not None]


def get_algorithm(name: str) -> type[Optimizer]:
    """The optimizer class registered under ``name`` (case-insensitive)."""
    key = _key(name)
    if key not in _ENTRIES:
        raise ValueError(f"algorithm: unknown name {name!r}; expected one of {sorted(_ENTRIES)}")
    return _ENTRIES[key].load()
