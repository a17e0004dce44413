"""SciPy's COBYLA (Powell 1994; SciPy >= 1.16 runs the PRIMA implementation, Zhang 2023) as an
ask/tell solver on the unit cube.

SciPy's ``minimize`` is a single call that evaluates the objective itself. :class:`AskTellCobyla`
runs that call in a thread that waits on a queue for each value, so the solver keeps its state
between asks instead of being re-run over the told values at every ask. The thread holds no
reference to the solver object: when the object is collected, the thread is told to stop.

The solver is deterministic: the points it asks for are a function of ``x0``, ``rhobeg``,
``max_evals`` and the values told so far, so a solver fed the same values asks for the same
points (what makes an optimizer that uses it rebuildable from its history).
"""

from __future__ import annotations

import queue
import threading
import weakref

import numpy as np
from scipy.optimize import minimize

TOL = 1e-8  # the final trust-region radius: the run ends there, or at max_evals


class _Stop(Exception):
    """Raised inside the solver's thread to end a run that is no longer wanted."""


def _solve(x0: np.ndarray, rhobeg: float, max_evals: int, asks: queue.Queue,
           values: queue.Queue) -> None:
    """The thread's body: COBYLA on the unit cube, each value read from ``values`` after its
    point was put on ``asks``; None on ``asks`` when the run ends."""
    def objective(x: np.ndarray) -> float:
        asks.put(np.clip(x, 0.0, 1.0))
        value = values.get()
        if value is None:
            raise _Stop
        return value

    try:
        # COBYLA takes at least D + 2 evaluations and raises a smaller cap itself, warning
        minimize(objective, x0, method="COBYLA", bounds=[(0.0, 1.0)] * len(x0),
                 options={"rhobeg": rhobeg, "maxiter": max(max_evals, len(x0) + 2),
                          "tol": TOL})
    except _Stop:
        return
    except BaseException:
        asks.put(None)  # the run has ended: the asking side must not wait for ever
        raise
    asks.put(None)


class AskTellCobyla:
    """COBYLA from ``x0`` in the unit cube, asked one point at a time.

    ``point`` is the point the solver waits on (its first is ``x0``), None once the run has
    ended (trust-region radius at :data:`TOL`, or ``max(max_evals, D + 2)`` values told, COBYLA's
    least); :meth:`tell`
    gives that point's value and moves ``point`` on.
    """

    def __init__(self, x0: np.ndarray, *, rhobeg: float, max_evals: int) -> None:
        asks: queue.Queue = queue.Queue(maxsize=1)
        values: queue.Queue = queue.Queue(maxsize=1)
        self._asks, self._values = asks, values
        threading.Thread(target=_solve, args=(np.array(x0, dtype=float), float(rhobeg),
                                              int(max_evals), asks, values),
                         daemon=True).start()
        self.point: np.ndarray | None = asks.get()
        weakref.finalize(self, values.put, None)

    def tell(self, value: float) -> None:
        """The value at :attr:`point` (finite)."""
        if self.point is None:
            raise RuntimeError("AskTellCobyla.tell: the run has ended")
        if not np.isfinite(value):
            raise ValueError(f"value: expected a finite float, got {value!r}")
        self._values.put(float(value))
        self.point = self._asks.get()
