"""Search-space codec: user values <-> unit cube ``[0, 1]^D``.

This is the one codec every adapter uses (docs/ARCHITECTURE.md, "The floors").

Encoding rules
--------------
* ``Real(low, high)`` maps linearly to one column; ``log=True`` maps
  ``log(value)`` linearly (``low`` must then be > 0).
* ``Integer(low, high)`` is relaxed to one column split into ``high - low + 1``
  equal bins (edges at ``low - 0.5`` and ``high + 0.5``), so uniform points in
  the cube give every integer the same probability. Decoding rounds to the
  bin's integer. ``log=True`` places the same edges in log space.
* ``Categorical(choices)`` is one-hot over ``len(choices)`` columns; decoding
  takes the argmax. A one-choice categorical is allowed (one constant column).

``Space.snap`` (decode, then encode) maps any cube point to the encoding of
the value that will actually be evaluated; that encoding is what is told back.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from .util import is_number

__all__ = ["Real", "Integer", "Categorical", "Dimension", "Space"]


def _bound(kind: str, arg: str, value: object) -> float:
    """``value`` as a float, or TypeError naming ``kind``'s argument ``arg``."""
    if not is_number(value):
        raise TypeError(f"{kind}: {arg} must be a real number, got {value!r:.80}")
    return float(value)  # type: ignore[arg-type]


def _check_bounds(kind: str, low: float, high: float, log: bool) -> None:
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{kind}: low and high must be finite numbers, got low={low}, high={high}")
    if not low < high:
        raise ValueError(
            f"{kind}: expected low < high, got low={low}, high={high} "
            "(a parameter with a single value is a constant; leave it out of the space)"
        )
    if log and low <= 0:
        raise ValueError(f"{kind}: log=True needs low > 0, got low={low}")


class Dimension(ABC):
    """One user-facing parameter, occupying ``n_columns`` columns of the cube."""

    n_columns: int = 1

    @abstractmethod
    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """Values (length n) -> array (n, n_columns) in [0, 1]."""

    @abstractmethod
    def decode(self, columns: np.ndarray) -> list[Any]:
        """Array (n, n_columns) in [0, 1] -> n plain Python values."""


class _Scalar(Dimension):
    """Shared affine (or log-affine) map between ``[lo, hi]`` and ``[0, 1]``."""

    def __init__(self, lo: float, hi: float, log: bool) -> None:
        self._log = log
        self._lo = math.log(lo) if log else float(lo)
        self._hi = math.log(hi) if log else float(hi)
        # Halves keep huge ranges such as (-1e308, 1e308) from overflowing.
        self._half_width = self._hi / 2 - self._lo / 2

    def _to_unit(self, v: np.ndarray) -> np.ndarray:
        t = np.log(v) if self._log else v
        return (t / 2 - self._lo / 2) / self._half_width

    def _from_unit(self, u: np.ndarray) -> np.ndarray:
        step = u * self._half_width
        t = (self._lo + step) + step
        return np.exp(t) if self._log else t


class Real(_Scalar):
    """Continuous parameter in ``[low, high]`` (log-uniform scale if ``log``)."""

    def __init__(self, low: float, high: float, log: bool = False) -> None:
        low, high = _bound("Real", "low", low), _bound("Real", "high", high)
        _check_bounds("Real", low, high, log)
        self.low, self.high, self.log = low, high, log
        super().__init__(low, high, log)

    def __repr__(self) -> str:
        return f"Real({self.low}, {self.high}, log={self.log})"

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        v = np.asarray(values, dtype=float).reshape(-1)
        tol = 1e-9 * max(1.0, abs(self.low), abs(self.high))
        bad = ~np.isfinite(v) | (v < self.low - tol) | (v > self.high + tol)
        if bad.any():
            raise ValueError(f"{self!r}: value {v[bad][0]!r} is outside [{self.low}, {self.high}]")
        return np.clip(self._to_unit(np.clip(v, self.low, self.high)), 0.0, 1.0)[:, None]

    def decode(self, columns: np.ndarray) -> list[float]:
        v = self._from_unit(np.clip(columns[:, 0], 0.0, 1.0))
        return [float(x) for x in np.clip(v, self.low, self.high)]


class Integer(_Scalar):
    """Integer parameter in ``[low, high]``, relaxed to equal-width bins."""

    def __init__(self, low: int, high: int, log: bool = False) -> None:
        _bound("Integer", "low", low), _bound("Integer", "high", high)
        if not (math.isfinite(low) and math.isfinite(high)) or int(low) != low or \
                int(high) != high:
            raise ValueError(f"Integer: low and high must be whole numbers, got {low}, {high}")
        low, high = int(low), int(high)
        _check_bounds("Integer", low, high, log)
        self.low, self.high, self.log = low, high, log
        super().__init__(low - 0.5, high + 0.5, log)  # low >= 1 when log, so low - 0.5 > 0

    def __repr__(self) -> str:
        return f"Integer({self.low}, {self.high}, log={self.log})"

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        v = np.asarray(values, dtype=float).reshape(-1)
        bad = ~np.isfinite(v) | (v < self.low) | (v > self.high) | (np.round(v) != v)
        if bad.any():
            raise ValueError(
                f"{self!r}: value {v[bad][0]!r} is not an integer in [{self.low}, {self.high}]"
            )
        return np.clip(self._to_unit(v), 0.0, 1.0)[:, None]

    def decode(self, columns: np.ndarray) -> list[int]:
        v = np.round(self._from_unit(np.clip(columns[:, 0], 0.0, 1.0)))
        return [int(x) for x in np.clip(v, self.low, self.high)]


class Categorical(Dimension):
    """Unordered choice, one-hot encoded; decoded by argmax."""

    def __init__(self, choices: Sequence[Any]) -> None:
        choices = list(choices)
        if not choices:
            raise ValueError("Categorical: choices must be a non-empty sequence")
        self.choices = choices
        self.n_columns = len(choices)

    def __repr__(self) -> str:
        return f"Categorical({self.choices!r})"

    def index(self, value: Any) -> int:
        """Position of ``value`` in ``choices`` (ValueError if absent)."""
        for i, c in enumerate(self.choices):
            if c is value or (type(c) is type(value) and c == value):
                return i
        for i, c in enumerate(self.choices):
            if c == value:
                return i
        raise ValueError(f"{self!r}: value {value!r} is not one of the choices")

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        out = np.zeros((len(values), self.n_columns))
        for row, value in enumerate(values):
            out[row, self.index(value)] = 1.0
        return out

    def decode(self, columns: np.ndarray) -> list[Any]:
        return [self.choices[i] for i in np.argmax(columns, axis=1)]


class Space:
    """An ordered list of dimensions and its unit-cube encoding.

    ``Space(4)`` is shorthand for four ``Real(0, 1)`` dimensions (the cube
    itself). ``names`` are used only in error messages and by adapters.
    """

    def __init__(self, dimensions: Sequence[Dimension] | int, names: Sequence[str] | None = None):
        if isinstance(dimensions, (int, np.integer)):
            if dimensions < 1:
                raise ValueError(f"Space: dimension count must be >= 1, got {dimensions}")
            dimensions = [Real(0.0, 1.0) for _ in range(int(dimensions))]
        dimensions = list(dimensions)
        if not dimensions:
            raise ValueError("Space: expected at least one dimension")
        for i, dim in enumerate(dimensions):
            if not isinstance(dim, Dimension):
                raise TypeError(
                    f"Space: dimension {i} is {dim!r}; expected Real, Integer or Categorical"
                )
        if names is not None and len(names) != len(dimensions):
            raise ValueError(f"Space: got {len(names)} names for {len(dimensions)} dimensions")
        self.dimensions = dimensions
        self.names = list(names) if names is not None else [f"x{i}" for i in range(len(dimensions))]
        widths = [d.n_columns for d in dimensions]
        self._offsets = np.concatenate([[0], np.cumsum(widths)]).astype(int)
        self.n_columns = int(self._offsets[-1])
        self.is_unit_cube = all(
            type(d) is Real and d.low == 0.0 and d.high == 1.0 and not d.log for d in dimensions
        )

    def __len__(self) -> int:
        return len(self.dimensions)

    def __repr__(self) -> str:
        return f"Space({self.dimensions!r})"

    def columns_of(self, i: int) -> slice:
        """The cube columns of dimension ``i``."""
        return slice(self._offsets[i], self._offsets[i + 1])

    def encode(self, rows: Sequence[Sequence[Any]]) -> np.ndarray:
        """Rows of user values (n rows of ``len(self)``) -> array (n, n_columns)."""
        rows = [list(r) for r in rows]
        for k, r in enumerate(rows):
            if len(r) != len(self):
                raise ValueError(f"Space.encode: row {k} has {len(r)} values, expected {len(self)}")
        out = np.empty((len(rows), self.n_columns))
        for i, dim in enumerate(self.dimensions):
            try:
                out[:, self.columns_of(i)] = dim.encode([r[i] for r in rows])
            except (ValueError, TypeError) as err:
                raise ValueError(f"parameter {self.names[i]!r}: {err}") from None
        return out

    def decode(self, cube: np.ndarray) -> list[list[Any]]:
        """Array (n, n_columns) in the cube -> n rows of plain Python values."""
        cube = np.atleast_2d(np.asarray(cube, dtype=float))
        if cube.shape[1] != self.n_columns:
            raise ValueError(
                f"Space.decode: expected points with {self.n_columns} columns, got {cube.shape[1]}"
            )
        if not np.isfinite(cube).all():
            raise ValueError("Space.decode: points must be finite")
        cols = [dim.decode(cube[:, self.columns_of(i)]) for i, dim in enumerate(self.dimensions)]
        return [list(r) for r in zip(*cols, strict=True)]

    @property
    def n_points(self) -> int | None:
        """How many distinct points the space has, or None when a dimension is Real."""
        count = 1
        for dim in self.dimensions:
            if isinstance(dim, Integer):
                count *= dim.high - dim.low + 1
            elif isinstance(dim, Categorical):
                count *= len(dim.choices)
            else:
                return None
        return count

    def grid(self) -> np.ndarray:
        """Encodings of every point of a space without Real dimensions, shape (n_points, D)."""
        if self.n_points is None:
            raise ValueError("Space.grid: a space with a Real dimension has no finite grid")
        axes = [[[v] for v in range(d.low, d.high + 1)] if isinstance(d, Integer)
                else [[c] for c in d.choices] for d in self.dimensions]
        rows: list[list[Any]] = [[]]
        for axis in axes:
            rows = [r + v for r in rows for v in axis]
        return self.encode(rows)

    def snap(self, cube: np.ndarray) -> np.ndarray:
        """Encoding of the values that ``cube`` decodes to (identity on pure Real spaces)."""
        cube = np.clip(np.atleast_2d(np.asarray(cube, dtype=float)), 0.0, 1.0)
        if all(type(d) is Real for d in self.dimensions):
            return cube
        return self.encode(self.decode(cube))
