"""Reference points of the papers: uniform random search and full-space GP-UCB."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ..base import Optimizer
from ..options import Options
from ..space import Space
from .msucb import MSUCB, MSUCBOptions
from .msucb import PRESETS as MSUCB_PRESETS


class RandomSearch(Optimizer):
    """Uniform random search on the unit cube (every point is an initial-design point).

    It never starts at the centre (``init_centre=False``) and its proposals are not steered
    towards feasibility under constraints (``steer_proposals=False``): the baseline stays
    purely uniform.
    """

    name = "random"
    default_n_init = 1
    steer_proposals = False
    presets: ClassVar[dict[str, Options]] = {"practical": Options(init_centre=False),
                                             "paper": Options(init_centre=False)}

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
    # paper preset is MS-UCB's paper preset (the theoretical beta_t, 20 uniform points).
    presets: ClassVar[dict[str, Options]] = {
        "practical": MSUCBOptions(restarts=10, trust_region=False, failure_tol=None,
                                  n_perturb=None, init_design="uniform"),
        "paper": replace(MSUCB_PRESETS["paper"], restarts=10),
    }

    def __init__(self, space: Space | int, *, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: MSUCBOptions | None = None, **overrides: Any) -> None:
        if "d" in overrides:
            raise ValueError("d: GPUCB always uses the full space (d = D); use MSUCB for d < D")
        dim = space.n_columns if isinstance(space, Space) else int(space)
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         d=dim, **overrides)
