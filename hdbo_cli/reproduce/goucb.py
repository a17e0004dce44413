"""GO-UCB, Liu & Wang, Sec. 6.1 and Fig. 2: cumulative regret on three 20-D functions.

The paper maximises on ``[-5, 5]^20``; here the functions are negated and minimised:

* ``f1`` (realizable): the paper's two-layer sigmoid model with every weight
  and bias 1, ``f1(x) = 25 sigmoid(sum(x) + 1) + 1``; n = 5, T = 25.
* ``f2`` Styblinski-Tang and ``f3`` Rastrigin (misspecified); n = 8, T = 64.

Each method gets ``n + T`` evaluations, the first ``n`` uniform (the same
seed gives GO-UCB and GP-UCB the same initial points): ``GOUCB(preset="paper")``
(Algorithm 1, Phase I = the n points) and ``GPUCB(preset="paper")``, each
with ``n_init = n``. Regret ``f(x_t) - f_min`` summed over the T Phase II
steps, mean and the paper's error bar ``1.96 sd / sqrt(seeds)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hdbo_cli.functions import rastrigin, styblinski_tang
from hdbo_engine import GOUCB, GPUCB

from . import Objective, figure, run_loop

LOW, HIGH, DIM = -5.0, 5.0, 20


def f1(X: np.ndarray) -> np.ndarray:
    """Minus the realizable f1: -(25 sigmoid(sum x + 1) + 1)."""
    return -(25.0 / (1.0 + np.exp(-(X.sum(1) + 1.0))) + 1.0)


# name: (function, minimum on [-5, 5]^20, n, T); f2 and f3 are minus the paper's
PROBLEMS: dict[str, tuple[Objective, float, int, int]] = {
    "f1 (realizable)": (f1, -(25.0 / (1.0 + np.exp(-(HIGH * DIM + 1.0))) + 1.0), 5, 25),
    "f2 Styblinski-Tang": (styblinski_tang, -39.16616570377142 * DIM, 8, 64),
    "f3 Rastrigin": (rastrigin, 0.0, 8, 64),
}


def regret(quick: bool) -> tuple[dict[str, Any], Any]:
    """Cumulative regret curves of GO-UCB and GP-UCB on f1, f2, f3 (Fig. 2)."""
    seeds = [0] if quick else [0, 1, 2]
    numbers: dict[str, Any] = {"setting": {"D": DIM, "domain": [LOW, HIGH], "seeds": seeds,
                                           "preset": "paper", "quick_T": 6 if quick else None},
                               "problems": {}}
    fig, axes = figure(len(PROBLEMS))
    for ax, (name, (f, f_min, n, T)) in zip(axes, PROBLEMS.items(), strict=True):
        T = 6 if quick else T
        unit: Objective = lambda U, f=f: f(LOW + (HIGH - LOW) * U)  # noqa: E731
        entry: dict[str, Any] = {"n": n, "T": T}
        for label, cls in (("GO-UCB", GOUCB), ("GP-UCB", GPUCB)):
            cum, ask = [], []
            for seed in seeds:
                opt = cls(DIM, seed=seed, budget=n + T, n_init=n, preset="paper")
                values, ask_s = run_loop(opt, unit, n + T)
                cum.append(np.cumsum(values[n:] - f_min))
                ask.append(ask_s.sum())
            cum_arr = np.array(cum)
            half = (1.96 * cum_arr.std(0, ddof=1) / np.sqrt(len(seeds)) if len(seeds) > 1
                    else np.zeros(T))
            entry[label] = {"cumulative_regret_mean": float(cum_arr[:, -1].mean()),
                            "cumulative_regret_ci95": float(half[-1]),
                            "per_seed": cum_arr[:, -1].tolist(),
                            "ask_cpu_s_mean": float(np.mean(ask))}
            t = np.arange(1, T + 1)
            (line,) = ax.plot(t, cum_arr.mean(0), label=label)
            ax.fill_between(t, cum_arr.mean(0) - half, cum_arr.mean(0) + half,
                            color=line.get_color(), alpha=0.2)
        numbers["problems"][name] = entry
        ax.set(title=f"{name}, D={DIM}, n={n}", xlabel="t (Phase II step)",
               ylabel="cumulative regret")
        ax.legend()
    return numbers, fig
