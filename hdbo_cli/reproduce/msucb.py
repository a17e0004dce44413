"""MS-UCB, Tran-The et al. (AAAI 2020), Fig. 2 and 3: convergence against computation.

Fig. 2: D = 100, d = 5, ``N_t = N0 t^alpha`` subspaces per iteration (Algorithm 1
steps 4-5) for (N0, alpha) in (1, 0), (10, 0), (1, 1), (1, 2). Fig. 3: D = 100,
N0 = 1, alpha = 0, subspace dimension d in 1, 2, 5, 10, plus d = 0 (the
subspaces are the points z themselves, supplement's d = 0 case). Problems:
Ackley and the rotated Hyper-Ellipsoid (:mod:`hdbo_cli.problems`). Every
run is ``MSUCB(preset="paper")`` (20 uniform initial points, theoretical
beta_t, every subspace optimised) with the variant's N0, alpha, d. Reported:
``log10`` of the best-so-far regret (the paper plots the log distance to the
optimum) and the total ask CPU time, per variant (mean over seeds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hdbo_cli.problems import make_problem
from hdbo_engine import MSUCB

from . import band, figure, run_loop

DIM, N_INIT = 100, 20
PROBLEMS = ("ackley", "hyper_ellipsoid")
FIG2 = [(1, 0.0), (10, 0.0), (1, 1.0), (1, 2.0)]  # (N0, alpha), d = 5
FIG3 = [0, 1, 2, 5, 10]  # d, N0 = 1, alpha = 0


def tradeoff(quick: bool) -> tuple[dict[str, Any], Any]:
    """Run both sweeps on both problems; return the numbers and a 2x2-panel figure."""
    iterations, seeds = (5, [0]) if quick else (20, [0, 1])
    variants = ([("fig2", {"d": 5, "N0": n0, "alpha": a}) for n0, a in FIG2]
                + [("fig3", {"d": d, "N0": 1, "alpha": 0.0}) for d in FIG3])
    budget = N_INIT + iterations
    results: dict[str, Any] = {"setting": {"D": DIM, "n_init": N_INIT, "iterations": iterations,
                                           "seeds": seeds, "preset": "paper"}, "runs": []}
    fig, axes = figure(4)
    for p, problem in enumerate(PROBLEMS):
        prob = make_problem(problem, DIM)
        for sweep, options in variants:
            regrets, times = [], []
            for seed in seeds:
                opt = MSUCB(DIM, seed=seed, budget=budget, preset="paper", **options)
                values, ask_s = run_loop(opt, prob.evaluate_unit, budget)
                regrets.append(np.log10(np.minimum.accumulate(values) - prob.f_min))
                times.append(ask_s.sum())
            label = (f"N0={options['N0']}, alpha={options['alpha']:g}" if sweep == "fig2"
                     else f"d={options['d']}")
            log_regret = np.array(regrets)
            results["runs"].append({
                "problem": problem, "figure": sweep, **options, "label": label,
                "final_log10_regret_mean": float(log_regret[:, -1].mean()),
                "final_log10_regret_per_seed": log_regret[:, -1].tolist(),
                "ask_cpu_s_mean": float(np.mean(times)),
                "log10_regret_mean_curve": log_regret.mean(0).round(4).tolist()})
            ax = axes[2 * p + (sweep == "fig3")]
            band(ax, np.arange(1, budget + 1), log_regret, f"{label} ({np.mean(times):.0f} s)")
    for p, problem in enumerate(PROBLEMS):
        for k, what in enumerate(("Fig. 2: d=5, N0 and alpha", "Fig. 3: N0=1, alpha=0, d")):
            ax = axes[2 * p + k]
            ax.set(title=f"{problem} D={DIM}, {what}", xlabel="evaluation",
                   ylabel="log10 best regret")
            ax.legend(fontsize=7, title="variant (ask CPU s)", title_fontsize=7)
    return results, fig
