"""Registry of engine algorithms by name, loaded lazily (GO-UCB needs torch; the rest do not).

The lookup imports an algorithm's module only when its name is asked for, so
:mod:`hdbo_engine.base` (whose :func:`~hdbo_engine.base.minimize` accepts a
name) can use it without importing :mod:`hdbo_engine.algorithms`.
"""

from __future__ import annotations

import importlib.util
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Optimizer

ALGORITHMS_PACKAGE = "hdbo_engine.algorithms"

_REGISTRY: dict[str, str] = {
    "auto": "auto:Auto",
    "msucb": "msucb:MSUCB",
    "cobbo": "cobbo:CobBO",
    "goucb": "goucb:GOUCB",
    "bkb": "bkb:BKB",
    "gpucb": "baselines:GPUCB",
    "random": "baselines:RandomSearch",
}

#: Class name -> registered name, e.g. ``"CobBO" -> "cobbo"``.
CLASS_NAMES: dict[str, str] = {target.split(":")[1]: name for name, target in _REGISTRY.items()}


def available() -> list[str]:
    """Names of the algorithms whose modules are present in this installation."""
    return [name for name, target in _REGISTRY.items()
            if importlib.util.find_spec(f"{ALGORITHMS_PACKAGE}.{target.split(':')[0]}")
            is not None]


def get_algorithm(name: str) -> type[Optimizer]:
    """The optimizer class registered under ``name`` (case-insensitive)."""
    key = str(name).lower().replace("-", "").replace("_", "")
    if key not in _REGISTRY:
        raise ValueError(f"algorithm: unknown name {name!r}; expected one of {sorted(_REGISTRY)}")
    module, cls = _REGISTRY[key].split(":")
    return getattr(import_module(f"{ALGORITHMS_PACKAGE}.{module}"), cls)
