"""hdbo engine: high-dimensional Bayesian optimisation on the unit cube.

Standalone (numpy + scipy; torch only for GO-UCB). Frameworks live in
``hdbo_adapters``, the ``hdbo`` command in ``hdbo_cli``; every module and its role:
``docs/ARCHITECTURE.md``, "The floors".

The algorithm classes are attributes of this package, resolved on first
access (``from hdbo_engine import CobBO``), so ``import hdbo_engine`` imports
no algorithm module and works without torch; only ``GOUCB`` needs it.
"""

from typing import Any

from .base import Optimizer, Proposal
from .loop import OptimizeResult, minimize
from .options import Options
from .registry import available, class_names, get_algorithm
from .space import Categorical, Integer, Real, Space

__all__ = [
    "Space", "Real", "Integer", "Categorical",
    "Optimizer", "Options", "Proposal", "OptimizeResult", "minimize",
    "available", "get_algorithm",
    "Auto", "MSUCB", "CobBO", "GOUCB", "BKB", "GPUCB", "RandomSearch",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``hdbo_engine.CobBO`` etc.: the algorithm class, its module imported on first access."""
    names = class_names()
    if name in names:
        return get_algorithm(names[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(class_names()))
