"""Registry of engine algorithms, loaded lazily (GO-UCB needs torch; the rest do not)."""

from __future__ import annotations

from importlib import import_module

from ..base import Optimizer

_REGISTRY: dict[str, str] = {
    "msucb": "msucb:MSUCB",
    "cobbo": "cobbo:CobBO",
    "goucb": "goucb:GOUCB",
    "bkb": "bkb:BKB",
    "gpucb": "baselines:GPUCB",
    "random": "baselines:RandomSearch",
}


def available() -> list[str]:
    """Names of the algorithms whose modules are present in this installation."""
    import importlib.util

    return [name for name, target in _REGISTRY.items()
            if importlib.util.find_spec(f"{__name__}.{target.split(':')[0]}") is not None]


def get_algorithm(name: str) -> type[Optimizer]:
    """The optimizer class registered under ``name`` (case-insensitive)."""
    key = str(name).lower().replace("-", "").replace("_", "")
    if key not in _REGISTRY:
        raise ValueError(f"algorithm: unknown name {name!r}; expected one of {sorted(_REGISTRY)}")
    module, cls = _REGISTRY[key].split(":")
    return getattr(import_module(f"{__name__}.{module}"), cls)
