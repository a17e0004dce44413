"""Auto's members: the engine's algorithms as arms, each on Auto's one history.

* **Members** [``("goucb", "msucb", "bkb", "cobbo")``; GO-UCB is left out where torch is
  missing]: practical presets. Above :data:`LARGE_D` [2000] columns, CobBO alone: at
  D = 5000 the four ended behind random search and passed 2 GiB [auto.md#large-d]. Every
  member is built with Auto's ``seed``, ``budget`` and ``n_init``, so each agrees that the
  design is over.
* **What a member is told** (:meth:`MemberArm.sync`), lazily, when it is next chosen: its own
  proposals with their metas, the design's points with theirs, the points of an arm that is
  a shared start (:attr:`.arm.Arm.shared_start`: COBYLA's phase) as design points
  (``{"init": True}``), the other arms' points with a meta naming their arm alone (proposed
  by an ask, so a member's model takes them in as it would its own:
  ``hdbo_engine.gp.run_end``), each with its constraints when there are any; Auto's
  replicate is left out. Its pending points are Auto's, the replicate left out. So every
  member models every point, but searches around its own incumbent, the best of the design,
  the shared start and its own proposals, with a trust region that counts its own proposals
  only; under constraints, around the best feasible point anyone found
  (``hdbo_engine.base``, "Points of other proposers") [auto.md#own-incumbents].
* **Proposals**: a member's own ask (its proposal step, its acceptance), its metas with
  ``"algorithm"`` set to its name.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ...base import Optimizer, Proposal
from ...registry import get_algorithm
from .arm import KEY, Arm
from .noise import REPLICATE

MEMBERS = ("goucb", "msucb", "bkb", "cobbo")
LARGE_D = 2000  # above this many columns, CobBO alone (auto.md#large-d)
LARGE_D_MEMBERS = ("cobbo",)


def default_members(dim: int | None = None) -> tuple[str, ...]:
    """:data:`MEMBERS`, without GO-UCB where torch is not installed; above :data:`LARGE_D`
    columns (``dim``), :data:`LARGE_D_MEMBERS`."""
    if dim is not None and dim > LARGE_D:
        return LARGE_D_MEMBERS
    has_torch = importlib.util.find_spec("torch") is not None
    return tuple(m for m in MEMBERS if m != "goucb" or has_torch)


class MemberArm(Arm):
    """The registered algorithm ``name`` as an arm (module docstring)."""

    def __init__(self, name: str, auto: Optimizer) -> None:
        self.name = name
        self.optimizer = get_algorithm(name)(auto.space, seed=auto.seed, budget=auto.budget,
                                             n_init=auto.n_init)

    def sync(self, auto: Optimizer) -> Optimizer:
        """Tell the member the history it has not seen and give it Auto's pending points
        (module docstring)."""
        member, name = self.optimizer, self.name
        rows = np.flatnonzero([REPLICATE not in m for m in auto._metas])[member.n_told:]
        if len(rows):
            metas = [self._told_meta(auto, auto._metas[i]) for i in rows]
            C = None if auto._c is None else auto._c[rows]
            member.tell(auto._X[rows], auto._y[rows], metas, constraints=C)
        member.clear_pending()
        for p in auto._pending:
            if REPLICATE not in p.meta:
                member.add_pending(p.x, p.meta if p.meta.get(KEY, name) == name else {})
        return member

    def _told_meta(self, auto: Optimizer, meta: dict) -> dict:
        """The meta the member is told with a point of ``auto``'s history (module
        docstring): its own or the design's as they are, a shared start's as a design
        point's, another arm's naming that arm alone."""
        proposer = meta.get(KEY, self.name)
        if proposer == self.name:
            return meta
        arm = auto.arms.get(proposer)
        return {"init": True} if arm is not None and arm.shared_start else {KEY: proposer}

    def ask(self, auto: Optimizer, n: int, rng: np.random.Generator,
            salt: int | None) -> list[Proposal]:
        made = [Proposal(p.x, {**p.meta, KEY: self.name})
                for p in self.sync(auto).ask(n, salt=salt)]
        auto._pending.extend(made)
        return made

