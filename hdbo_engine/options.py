"""The options every engine algorithm shares (its initial design); each algorithm's options
dataclass extends :class:`Options`, and its presets are instances of that class.

Overrides go through :meth:`Options.with_overrides` (``dataclasses.replace``), so an
algorithm built with ``preset="paper", N0=4`` holds the paper's options with ``N0`` changed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

import numpy as np

from .design import INIT_DESIGNS
from .util import check_bool, check_int

OptionsT = TypeVar("OptionsT", bound="Options")


@dataclass(frozen=True)
class Options:
    """The options every engine algorithm shares: its initial design (base module
    docstring, "Initial design"). Each algorithm's options class extends this one.

    n_init: size of the initial design; None is the design-size rule,
        :func:`~hdbo_engine.design.design_size` of ``init_design``, the algorithm's uniform
        design size and the budget. An axis design longer than 21 points ends after 21 when
        its first point and its first ten coordinates' probes all return one value
        (:meth:`~hdbo_engine.design.InitialDesign._design_length`).
    init_centre: whether the initial design starts at the centre of the cube.
    init_design: ``"uniform"`` or ``"axis"``.
    line_search: whether the axis design ends with a line search along its finite-difference
        slopes (:mod:`hdbo_engine.design`); None: True exactly when ``init_design`` is
        ``"axis"``.
    """

    n_init: int | None = None
    init_centre: bool = True
    init_design: str = "uniform"
    line_search: bool | None = None

    def __post_init__(self) -> None:
        if self.init_design not in INIT_DESIGNS:
            raise ValueError(f"init_design: expected one of {list(INIT_DESIGNS)}, "
                             f"got {self.init_design!r}")
        check_int("n_init", self.n_init, 1, optional=True)
        check_bool("init_centre", self.init_centre)
        if self.line_search is not None and not isinstance(self.line_search, (bool, np.bool_)):
            raise TypeError(f"line_search: expected a bool or None, got {self.line_search!r}")

    @classmethod
    def names(cls) -> list[str]:
        """The option names, sorted."""
        return sorted(f.name for f in fields(cls))

    def with_overrides(self: OptionsT, owner: str, overrides: dict[str, Any]) -> OptionsT:
        """A copy with ``overrides`` applied (``dataclasses.replace``); an unknown name is a
        ``TypeError`` naming it and the valid options of ``owner``."""
        unknown = sorted(set(overrides) - set(self.names()))
        if unknown:
            raise TypeError(f"{owner}: unexpected keyword argument(s) {unknown}; valid options: "
                            f"{self.names()}")
        return replace(self, **overrides) if overrides else self
