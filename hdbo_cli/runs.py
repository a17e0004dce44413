"""Runs of the ``hdbo`` command: one optimisation in this process, its files and figures.

:func:`run_method` drives any ``hdbo bench`` method (engine algorithms and
baselines, Optuna, skopt and Nevergrad peers) on a benchmark problem;
:func:`write_run` writes ``trajectory.csv``, ``summary.json`` and
``convergence.png`` (the files of ``hdbo run``, whatever its frontend);
:func:`plot_comparison` draws the median and interquartile range of the
best value so far over seeds for several methods in one figure (``hdbo demo``).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from hdbo_cli.problems import make_problem
from hdbo_engine.loop import Step, drive

from .bench import make_runner


def run_method(method: str, problem: str, dim: int, budget: int, seed: int,
               bar: tqdm) -> dict[str, Any]:
    """Run ``method`` on ``make_problem(problem, dim, seed)`` for ``budget`` evaluations
    (``seed`` seeds the method and picks the problem's instance, as in ``hdbo bench``).

    Each evaluation advances ``bar`` by one and shows the best value so far. The
    loop uses one BLAS thread, as ``hdbo bench`` cells do: the models' matrices are
    small, and on a busy machine more threads only spin.
    Returns the run's description, its ``values`` and ``ask_times`` (wall
    seconds per ask), ``best``, ``f_min``, ``total_time`` (wall) and
    ``cpu_time`` (CPU seconds of this process, objective included); for a noisy
    problem also ``recommended_true_value``, the noise-free value of the point the method
    recommends at the end (``best`` is then its luckiest draw), as ``hdbo bench`` scores it.
    """
    prob = make_problem(problem, dim, seed)
    runner = make_runner(method, dim, budget, seed)
    values: list[float] = []
    ask_times: list[float] = []

    def on_step(step: Step) -> bool:
        ask_times.append(step.ask_s)
        values.append(step.y)
        bar.update(1)
        bar.set_postfix(best=f"{min(values):.5g}")
        return False

    start, cpu_start = time.perf_counter(), time.process_time()
    with threadpool_limits(1):  # after make_runner: the method's BLAS libraries are loaded
        drive(runner.ask, runner.tell, lambda x: float(prob.evaluate_unit(x)[0]), budget,
              on_step)
    result = {
        "algo": method, "problem": problem, "dim": dim, "budget": budget, "seed": seed,
        "values": values, "ask_times": ask_times, "f_min": prob.f_min,
        "best": float(np.min(values)), "total_time": time.perf_counter() - start,
        "cpu_time": time.process_time() - cpu_start,
    }
    if prob.noisy:
        x = runner.recommend()
        result["recommended_true_value"] = (None if x is None else
                                            float(prob.noise_free_unit(np.asarray(x))[0]))
    return result


def write_run(result: dict[str, Any], out: Path, plot: bool = True) -> None:
    """``out/trajectory.csv`` (value, best so far and ask seconds per evaluation),
    ``out/summary.json`` (everything else in ``result``) and, if ``plot`` and matplotlib
    is installed, ``out/convergence.png``."""
    out.mkdir(parents=True, exist_ok=True)
    values = np.asarray(result["values"], dtype=float)
    best = np.minimum.accumulate(values) if len(values) else values
    with open(out / "trajectory.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["evaluation", "value", "best_so_far", "ask_time_s"])
        for i, (v, b, t) in enumerate(zip(values, best, result["ask_times"], strict=True)):
            writer.writerow([i + 1, repr(float(v)), repr(float(b)), f"{t:.6f}"])
    summary = {k: v for k, v in result.items() if k not in ("values", "ask_times")}
    summary["median_ask_time_s"] = (float(np.nanmedian(result["ask_times"]))
                                    if len(values) else None)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if plot and len(values):
        title = f"{result['problem']} D={result['dim']} seed={result['seed']}"
        plot_comparison({result["algo"]: [values]}, result["f_min"], title,
                        out / "convergence.png")


def minimum_text(f_min: float | None) -> str:
    """`` (f_min <value>)`` for a run's one-line summary; empty where the minimum is unknown
    (the tasks)."""
    return "" if f_min is None else f" (f_min {f_min:.6g})"


def recommended_text(value: float | None) -> str:
    """``; the recommended point's noise-free value <value>`` for a noisy run's one-line
    summary; empty where the problem has no noise (``value`` None)."""
    return "" if value is None else f"; the recommended point's noise-free value {value:.6g}"


def value_axis(curves: list[np.ndarray], f_min: float | None) -> tuple[
        Callable[[np.ndarray], np.ndarray], str, str]:
    """How best-so-far curves are drawn: (transform, y label, y scale).

    The regret ``value - f_min`` on a log axis when it stays positive and spans
    more than two decades; otherwise, and where the minimum is unknown (``f_min`` None: the
    tasks), the value itself on a linear axis, where flat and slowly falling curves stay
    readable.
    """
    if f_min is None:
        return (lambda y: y), "best value so far", "linear"
    regret = np.concatenate([np.ravel(c) for c in curves]) - f_min
    if regret.min() > 0 and regret.max() / regret.min() > 100:
        return (lambda y: y - f_min), "best value so far − f_min", "log"
    return (lambda y: y), "best value so far", "linear"


def plot_comparison(values: dict[str, list[np.ndarray]], f_min: float | None, title: str,
                    path: Path) -> Path | None:
    """One figure: per method, the median (line) and interquartile range (band) over its
    runs of the best value so far against the evaluation number. ``values`` maps a
    method to the per-evaluation values of each of its runs. Returns ``path``, or None
    (and says so) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'hdbo[plot]'): no figure")
        return None
    curves = {m: np.array([np.minimum.accumulate(np.asarray(v, dtype=float)) for v in runs])
              for m, runs in values.items()}
    transform, ylabel, yscale = value_axis(list(curves.values()), f_min)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method, c in curves.items():
        x = np.arange(1, c.shape[1] + 1)
        q1, med, q3 = np.percentile(transform(c), [25, 50, 75], axis=0)
        label = method if len(c) == 1 else f"{method} (median, IQR of {len(c)} runs)"
        (line,) = ax.plot(x, med, lw=1.8, label=label)
        if len(c) > 1:
            ax.fill_between(x, q1, q3, color=line.get_color(), alpha=0.2)
    ax.set(yscale=yscale, xlabel="evaluation", ylabel=ylabel,
           title=f"{title} (minimisation"
                 + ("" if f_min is None else f", f_min = {f_min:.4g}") + ")")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
