"""Auto's portfolio: the shared design once, then a choice among arms on one history.

Why a portfolio: after the shared design no single algorithm of the four is best on every
problem (``docs/algorithms/auto.md``), and every one's state is a function of the told
history, so all can work on one history at the cost of one.

* **Design** (base module: centre, axis pass, line search; ``n_init`` by
  :func:`~hdbo_engine.design.design_size` with a uniform size of 20): run once, by Auto.
* **Arms** (:attr:`Auto.arms`, in this order): the members (:mod:`.members`), constrained EI
  (:mod:`.constrained_ei`), the evolution strategy (:mod:`.evolution`) and COBYLA
  (:mod:`.cobyla`). Each says when it is eligible; COBYLA claims single asks in its phase.
* **Each model ask**: Auto's replicate when the noise judgement calls for it
  (:mod:`.noise`); else, for one point, an arm that claims it; else the choice.
* **Choice** (:meth:`Auto.records`, :meth:`Auto.allocate`): an eligible arm's record is its
  last ``window`` [10] told proposals, each a success or not (:func:`.arm.outcomes`: a
  feasible value below every finite feasible value told before it). Auto draws
  ``s_k ~ Beta(1 + successes_k, 1 + failures_k)`` for each eligible arm from the ask's
  generator and asks the arm with the largest draw (Thompson sampling for Bernoulli bandits;
  Thompson, Biometrika 1933; the sliding window follows Garivier & Moulines, ALT 2011, for
  rewards that drift as the search narrows). The generator is keyed as if no replicate had
  been told or were pending, so a run's choices are those it would make without it.
* **Batches**: the model points of an ask draw the choice once per point, and each chosen arm
  is asked for as many points as it drew, in :attr:`Auto.arms` order, seeing the points asked
  before it as pending (Thompson sampling's batch rule: each point goes to the arm a fresh
  posterior draw favours; Kandasamy, Krishnamurthy, Schneider & Poczos, AISTATS 2018). An
  ask that spans the design's end holds the design's points first, then a model part like
  any other, the replicate included. One point is one draw.
* **Metas**: each proposal's meta names the arm that made it (``"algorithm"``), on top of the
  arm's own; design points carry the base design's metas.

Proposals are a pure function of the constructor arguments, the told history with metas and
the pending points, so :meth:`Optimizer.from_history` rebuilds Auto exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ...base import Optimizer, Proposal
from ...options import Options
from ...space import Space
from ...util import is_int
from .arm import Arm, outcomes
from .cobyla import COBYLA, CobylaArm
from .constrained_ei import CEI, ConstrainedEIArm
from .evolution import ES, EvolutionArm
from .members import MemberArm, default_members
from .noise import REPLICATE, noise_observed, recommend, replicate

WINDOW = 10


@dataclass(frozen=True)
class AutoOptions(Options):
    """Options of :class:`Auto` (the practical preset's values in brackets).

    members: registered names of the algorithms that take turns, None =
        ``default_members(D)`` [None].
    arms: the names of the arms that take part (members' names, ``"cei"``, ``"es"``,
        ``"cobyla"``), None = all [None]. ``("cobyla",)`` runs the design and then COBYLA
        alone, restarted from the incumbent each time its run ends (Auto's COBYLA part
        on its own, :mod:`.cobyla`).
    window: how many of an arm's latest told proposals its record keeps [10].
    noisy: whether the objective is noisy (True), deterministic (False), or unknown and
        judged from one replicate when the design's values look noisy [None]
        (:mod:`hdbo_engine.algorithms.auto.noise`).
    n_init, init_centre, init_design, line_search: :class:`~hdbo_engine.options.Options` [the
        design-size rule from 20 points, the centre, the axis design].
    """

    init_design: str = "axis"
    members: Sequence[str] | None = None
    arms: Sequence[str] | None = None
    window: int = WINDOW
    noisy: bool | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        noisy, members, window = self.noisy, self.members, self.window
        if self.arms is not None and (isinstance(self.arms, str) or not tuple(self.arms)):
            raise ValueError(f"arms: expected a non-empty sequence of arm names, "
                             f"got {self.arms!r}")
        if noisy is not None and not isinstance(noisy, (bool, np.bool_)):
            raise TypeError(f"noisy: expected True, False or None, got {noisy!r}")
        if members is not None:
            names = tuple(members)
            if not names or isinstance(members, str):
                raise ValueError(f"members: expected a non-empty sequence of algorithm "
                                 f"names, got {members!r}")
            if "auto" in names or len(set(names)) != len(names):
                raise ValueError(f"members: expected distinct algorithm names other than "
                                 f"'auto', got {members!r}")
        if not is_int(window) or window < 1:
            raise ValueError(f"window: expected an int >= 1, got {window!r}")


class Auto(Optimizer):
    """The recommended optimizer: the shared design, then a portfolio of arms on one history
    (module docstring).

    Options: :class:`AutoOptions` (by name, or ``options=``); only the ``"practical"``
    preset exists.
    """

    name = "auto"
    default_n_init = 20
    options_class = AutoOptions
    presets: ClassVar[dict[str, Options]] = {"practical": AutoOptions()}

    def __init__(self, space: Space | int, *, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: AutoOptions | None = None, **overrides: Any) -> None:
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         **overrides)
        o = self.options
        names = default_members(self.dim) if o.members is None else tuple(o.members)
        own = (CEI, ES, COBYLA)
        kept = (*names, *own) if o.arms is None else tuple(o.arms)
        unknown = [a for a in kept if a not in (*names, *own)]
        if unknown:
            raise ValueError(f"arms: unknown arm {unknown[0]!r}; expected names among "
                             f"{[*names, *own]}")
        alone = kept == (COBYLA,)
        arms: list[Arm] = [MemberArm(n, self) for n in names if n in kept]
        arms += [ConstrainedEIArm(), EvolutionArm(), CobylaArm(o.noisy, alone=alone)]
        self.arms: dict[str, Arm] = {arm.name: arm for arm in arms if arm.name in kept}

    @property
    def members(self) -> dict[str, Optimizer]:
        """The member algorithms by name (:mod:`.members`)."""
        return {n: a.optimizer for n, a in self.arms.items() if isinstance(a, MemberArm)}

    def recommend(self) -> np.ndarray | None:
        """The told point to report as the answer (:func:`.noise.recommend`)."""
        return recommend(self, self.options.noisy)

    def noise_observed(self) -> bool | None:
        """Whether a told replicate's value differs from its original's
        (:func:`.noise.noise_observed`)."""
        return noise_observed(self)

    # ---------------------------------------------------------------- choice
    def records(self) -> dict[str, tuple[int, int]]:
        """``(successes, failures)`` among each eligible arm's last ``window`` told
        proposals (module docstring, "Choice")."""
        found = outcomes(self)
        window = self.options.window
        recent = {n: found.get(n, [])[-window:] for n, a in self.arms.items()
                  if a.eligible(self)}
        return {n: (sum(r), len(r) - sum(r)) for n, r in recent.items()}

    def allocate(self, n: int, rng: np.random.Generator) -> dict[str, int]:
        """How many of ``n`` points each arm proposes: one Thompson draw per point from the
        same records, arms in :attr:`arms` order (module docstring, "Batches")."""
        self._eligible()
        records = self.records()
        chosen = []
        for _ in range(n):
            draws = {name: rng.beta(1 + s, 1 + f) for name, (s, f) in records.items()}
            chosen.append(max(draws, key=lambda name: draws[name]))
        return {name: chosen.count(name) for name in self.arms if name in chosen}

    def _choice_rng(self, salt: int | None) -> np.random.Generator:
        """The ask's generator keyed as if no replicate had been told or were pending."""
        told = sum(REPLICATE in m for m in self._metas)
        pending = sum(REPLICATE in p.meta for p in self._pending)
        return self._keyed_rng(self.n_told - told, len(self._pending) - pending, salt)

    # ---------------------------------------------------------------- ask
    def ask(self, n: int = 1, *, salt: int | None = None) -> list[Proposal]:
        self._check_ask(n, salt)
        # the design's points of this ask (its line point needs nothing pending)
        n_design = self._n_random(n) or int(salt is None and self._line_point() is not None)
        if 0 < n_design < n:
            self._eligible()  # refused before the design's points are made pending
        out = super().ask(n_design, salt=salt) if n_design else []
        if n_design == n:
            return out
        probe = replicate(self, self.options.noisy)
        if probe is not None:
            self._pending.append(probe)
            out.append(probe)
        rng = self._choice_rng(salt)  # an arm that declines a claim draws nothing from it
        if n == 1 and probe is None:
            for arm in self.arms.values():
                claimed = arm.claim(self, rng)
                if claimed is not None:
                    return [claimed]
        if n > len(out):
            for name, count in self.allocate(n - len(out), rng).items():
                out += self.arms[name].ask(self, count, rng, salt)
        return out

    def _eligible(self) -> None:
        if not any(a.eligible(self) for a in self.arms.values()):
            raise ValueError(f"ask: none of the arms {list(self.arms)} can make this "
                             "proposal (COBYLA alone proposes one point at a time, "
                             "unconstrained)")

    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        """Never reached: :meth:`ask` hands the base design only design points and makes every
        model point through an arm's ask."""
        raise NotImplementedError("Auto makes its model points in ask(), through its arms")
