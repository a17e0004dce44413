"""Benchmark problems by name: the synthetic functions of :mod:`hdbo_cli.functions`, the
constrained problems of :mod:`hdbo_cli.constrained` and the real tasks of
:mod:`hdbo_cli.tasks` (``hdbo bench``, ``hdbo run``, the examples)."""

from __future__ import annotations

from .constrained import CONSTRAINED, make_constrained
from .functions import Problem, function_names, make_function
from .tasks import TASKS, make_task

__all__ = ["Problem", "make_problem", "problem_names"]


def problem_names() -> list[str]:
    """The unconstrained problem names accepted by :func:`make_problem` (``hdbo run``'s
    choices); the constrained ones, which only ``hdbo bench`` runs, are the keys of
    :data:`~hdbo_cli.constrained.CONSTRAINED`."""
    return sorted([*function_names(), *TASKS])


def make_problem(name: str, dim: int, seed: int = 0) -> Problem:
    """Build a benchmark problem by name at dimension ``dim``; ``seed`` picks the instance of
    a random-instance family (``shifted_``, ``rotated_``, ``scattered_``), a task, or
    ``scbo_ackley``'s active coordinates."""
    key = name.lower().replace("-", "_")
    if key in TASKS:
        return make_task(key, dim, seed)
    if key in CONSTRAINED:
        return make_constrained(key, dim, seed)
    problem = make_function(key, dim, seed)
    if problem is None:
        raise ValueError(f"problem: unknown name {name!r}; expected one of "
                         f"{sorted([*problem_names(), *CONSTRAINED])}")
    return problem
