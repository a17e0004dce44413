"""Shared argument checks, failure imputation and the large-D warning.

Used by the algorithms, the contract in :mod:`hdbo_engine.base`, the models and the adapters
(one set of validators; ``docs/ARCHITECTURE.md``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def is_int(value: object) -> bool:
    """A Python or numpy integer, and not a bool (argument validation)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """A Python or numpy real number, and not a bool (argument validation)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def is_finite_number(value: object) -> bool:
    """A finite Python or numpy real number, and not a bool (argument validation)."""
    return is_number(value) and bool(np.isfinite(float(value)))  # type: ignore[arg-type]


def as_float_array(value: Any, arg: str, expected: str) -> np.ndarray:
    """``value`` as a float64 array, or TypeError/ValueError naming ``arg`` (validation).

    Numbers, numeric arrays and nested sequences of numbers are accepted;
    strings, None, complex numbers, ragged sequences and other objects raise
    ``TypeError`` (numpy would turn ``"0.5"`` into 0.5 and None into NaN), and
    a number too large for float64 raises ``ValueError``.
    """
    def bad_type() -> TypeError:
        return TypeError(f"{arg}: expected {expected}, got {type(value).__name__} {value!r:.80}")

    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested sequences
        raise bad_type() from None
    if raw.dtype.kind == "O":
        if any(v is None or isinstance(v, (str, bytes, complex)) for v in raw.ravel()):
            raise bad_type()
    elif raw.dtype.kind not in "biuf":
        raise bad_type()
    try:
        return raw.astype(float)
    except OverflowError:
        raise ValueError(f"{arg}: expected {expected}; a value is too large for float64") from None
    except (TypeError, ValueError):
        raise bad_type() from None


def impute_failures(y: np.ndarray) -> np.ndarray:
    """Replace each non-finite value by the worst (largest) finite value before it.

    Values with no finite value before them take the worst finite value of all
    of ``y`` (or 0 when nothing is finite). Prefix-consistent, so a model
    fitted on the first n points sees the same data in a rebuilt optimizer.
    """
    y = np.asarray(y, dtype=float).copy()
    bad = ~np.isfinite(y)
    if not bad.any():
        return y
    finite = y[~bad]
    fallback = float(finite.max()) if finite.size else 0.0
    running = np.maximum.accumulate(np.where(bad, -np.inf, y))
    y[bad] = np.where(np.isfinite(running[bad]), running[bad], fallback)
    return y


def check_int(arg: str, value: object, low: int, *, optional: bool = False) -> None:
    """``ValueError`` naming ``arg`` unless ``value`` is an int >= ``low`` (or None when
    ``optional``); option validation."""
    if optional and value is None:
        return
    if not is_int(value) or value < low:  # type: ignore[operator]
        none = " or None" if optional else ""
        raise ValueError(f"{arg}: expected an int >= {low}{none}, got {value!r}")


def check_bool(arg: str, value: object) -> None:
    """``TypeError`` naming ``arg`` unless ``value`` is a bool (option validation)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{arg}: expected a bool, got {value!r}")


#: The largest ``D x budget`` at which the engine algorithms were measured within the scale
#: targets (a run within 15 CPU minutes and 2 GiB on one core): 500 evaluations at D = 5000
#: (``hdbo_cli/suites/scale.toml``; each algorithm's page, "Large D"; GO-UCB has its own).
MEASURED_SCALE = 5000 * 500


def warn_beyond_measured_scale(name: str, page: str, dim: int, budget: int | None,
                               limit: int = MEASURED_SCALE,
                               max_budget: int | None = None) -> None:
    """A ``UserWarning`` naming ``dim`` and ``budget`` when ``dim * budget`` exceeds ``limit``
    or ``budget`` exceeds ``max_budget`` (no warning when the budget is unknown): the
    algorithm ``name``'s cost per ask grows with the history, and such a run may exceed 15
    CPU minutes or 2 GiB (``page``: its ``docs/algorithms`` page)."""
    if budget is None:
        return
    if dim * budget > limit or (max_budget is not None and budget > max_budget):
        measured = f"D x budget <= {limit:.3g}" + (
            "" if max_budget is None else f", budget <= {max_budget}")
        warnings.warn(
            f"{name}: D = {dim} with budget = {budget} is beyond the sizes measured to finish "
            f"within 15 CPU minutes and 2 GiB on one core ({measured}); its cost "
            f"per ask grows with the history (docs/algorithms/{page}.md, 'Large D')",
            UserWarning, stacklevel=3)
