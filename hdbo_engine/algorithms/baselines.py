"""Reference points of the papers: uniform random search and full-space GP-UCB."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..base import Optimizer
from ..space import Space
from .msucb import MSUCB


class RandomSearch(Optimizer):
    """Uniform random search on the unit cube (every point is an initial-design point).

    It never starts at the centre (``init_centre=False``): the baseline stays purely uniform.
    """

    name = "random"
    default_n_init = 1
    default_init_centre = False

    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        return [(rng.random(self.dim), {}) for _ in range(n)]


class GPUCB(MSUCB):
    """Full-space GP-UCB (Srinivas et al. 2010), the MS-UCB paper's baseline.

    MS-UCB with ``d = D``: one subspace (the whole cube), batched multi-start
    L-BFGS-B from the best of ``n_candidates`` [512] points (incumbent,
    perturbations, uniform draws), ``restarts`` [10] starts, and MS-UCB's
    ``beta_t`` with ``d = D``, which is the GP-UCB rate for continuous
    domains (linear in D). Other parameters as in :class:`MSUCB`.
    """

    name = "gpucb"
    # The baseline keeps MS-UCB's former defaults in both presets (no trust region, UCB); its
    # paper preset is the theoretical beta_t with the paper's 20 uniform initial points.
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"N0": 10, "beta_scale": 0.1, "n_optimize": 20, "trust_region": False,
                      "failure_tol": None, "acquisition": "ucb", "n_perturb": None},
        "paper": {"N0": 1, "beta_scale": 1.0, "n_optimize": None, "trust_region": False,
                  "failure_tol": None, "acquisition": "ucb", "n_init": 20,
                  "init_centre": False, "n_perturb": None},
    }

    def __init__(self, space: Space | int, *, restarts: int = 10, **kwargs: Any) -> None:
        if "d" in kwargs:
            raise ValueError("d: GPUCB always uses the full space (d = D); use MSUCB for d < D")
        dim = space.n_columns if isinstance(space, Space) else int(space)
        super().__init__(space, d=dim, restarts=restarts, **kwargs)
