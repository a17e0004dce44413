"""Benchmark problems by name: the synthetic functions of :mod:`hdbo_cli.functions` and the
real tasks of :mod:`hdbo_cli.tasks` (``hdbo bench``, ``hdbo run``, the examples)."""

from __future__ import annotations

from .functions import Problem, function_names, make_function
from .tasks import TASKS, make_task

__all__ = ["Problem", "make_problem", "problem_names"]


def problem_names() -> list[str]:
    """All problem names accepted by :func:`make_problem`."""
    return sorted([*function_names(), *TASKS])


def make_problem(name: str, dim: int, seed: int = 0) -> Problem:
    """Build a benchmark problem by name at dimension ``dim``; ``seed`` picks the instance of
    a random-instance family (``shifted_``, ``rotated_``, ``scattered_``) or a task."""
    key = name.lower().replace("-", "_")
    if key in TASKS:
        return make_task(key, dim, seed)
    problem = make_function(key, dim, seed)
    if problem is None:
        raise ValueError(f"problem: unknown name {name!r}; expected one of {problem_names()}")
    return problem
