"""What an arm of Auto's portfolio is, and how its told proposals are credited.

An arm proposes points for Auto. Every arm's proposals carry ``{"algorithm": name}`` in their
metas (:data:`KEY`), and that is all the portfolio needs to credit them: a told proposal is a
**success** when its value is feasible and below every finite feasible value told before it
(NaN and +inf never succeed) (:func:`outcomes`). Each arm reads whatever state it keeps from
the told history and metas, so Auto rebuilt from its history proposes what it would have.

An arm implements :meth:`Arm.eligible` (whether it takes part in the choice now) and
:meth:`Arm.ask` (``n`` points, accepted as pending), and may :meth:`Arm.claim` an ask before
the choice. :class:`OwnArm` derives its ask from one proposal rule for the arms that are
Auto's own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ...base import PROPOSER, Optimizer, Proposal

KEY = PROPOSER  # meta key naming the arm that proposed a point


def outcomes(opt: Optimizer) -> dict[str, list[bool]]:
    """Per name in the told metas' ``"algorithm"``, whether each of its told proposals, in
    told order, was a success (module docstring)."""
    found: dict[str, list[bool]] = {}
    best = np.inf
    for y, ok, meta in zip(opt._y, opt.feasible, opt._metas, strict=True):
        if KEY in meta:
            found.setdefault(meta[KEY], []).append(bool(ok and y < best))
        if ok and np.isfinite(y):
            best = min(best, float(y))
    return found


class Arm(ABC):
    """One proposer of Auto's portfolio (module docstring).

    ``shared_start``: whether the members take this arm's told points as a start they share,
    like the design's: the points move each member's incumbent but not its trust region's
    counts (:mod:`.members`) [False].
    """

    name: str
    shared_start: bool = False

    def eligible(self, auto: Optimizer) -> bool:
        """Whether the arm takes part in the choice at this point of the history."""
        return True

    def claim(self, auto: Optimizer, rng: np.random.Generator) -> Proposal | None:
        """A one-point ask this arm takes before the choice, accepted and pending in ``auto``,
        or None (the default)."""
        return None

    @abstractmethod
    def ask(self, auto: Optimizer, n: int, rng: np.random.Generator,
            salt: int | None) -> list[Proposal]:
        """``n`` proposals, accepted and pending in ``auto``."""


class OwnArm(Arm):
    """An arm whose proposals are made by Auto itself from one rule, :meth:`make`."""

    @abstractmethod
    def make(self, auto: Optimizer, n: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, dict]]:
        """``n`` points with metas, through the shared proposal step."""

    def ask(self, auto: Optimizer, n: int, rng: np.random.Generator,
            salt: int | None) -> list[Proposal]:
        return [auto._accept(x, meta, rng) for x, meta in self.make(auto, n, rng)]
