"""hdbo engine: high-dimensional Bayesian optimisation on the unit cube.

Standalone (numpy + scipy; torch only for GO-UCB). Frameworks live in
``hdbo_adapters``.
"""

from .algorithms import available, get_algorithm
from .base import Optimizer, OptimizeResult, Proposal, minimize
from .space import Categorical, Integer, Real, Space

__all__ = [
    "Space", "Real", "Integer", "Categorical",
    "Optimizer", "Proposal", "OptimizeResult", "minimize",
    "available", "get_algorithm",
]
__version__ = "0.1.0"
