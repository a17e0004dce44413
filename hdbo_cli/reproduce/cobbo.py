"""CobBO, Tan et al.: Fig. 1 left (speed), Fig. 4 right (backoff rule), Fig. 5 (preference).

Every run minimises Rastrigin on ``[-5, 10]^50`` (:mod:`hdbo_cli.problems`)
from 20 uniform initial points with ``CobBO(preset="paper")`` (Algorithm 2
as written) or, for vanilla BO, ``GPUCB(preset="paper")``: a Matern-5/2 ARD
GP on all 50 coordinates, refitted and maximised at every iteration.

* ``speed`` (Fig. 1 left): CPU seconds of each ask (GP fit + acquisition
  maximisation; CobBO's also includes its RBF stage) per iteration.
* ``ablation`` (Fig. 4 right): the Sec. 3.2 backoff stopping rule against a
  fixed number of queries per subspace, and (Sec. 3.1, eq. (2)) against
  uniform coordinate choice (no preference weights); best value per
  iteration. Fig. 5: Rastrigin of the first 25 coordinates only, the other
  25 ignored; the preference mass ``sum_{i <= 25} pi_t,i`` on the active ones.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdbo_cli.problems import make_problem
from hdbo_engine import GPUCB, CobBO

from . import Objective, band, figure, run_loop

DIM, N_INIT, ACTIVE = 50, 20, 25


class FixedQueriesCobBO(CobBO):
    """CobBO whose subspace changes after a fixed number of queries instead of the Sec. 3.2
    backoff rule (Fig. 4 right's alternative); escapes (App. B.1) unchanged."""

    def __init__(self, *args: Any, queries: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queries = queries
        self.tau = math.inf  # the backoff rule never fires

    def _update(self, i: int, y: float, meta: dict[str, Any]) -> None:
        super()._update(i, y, meta)
        if self.N >= self.queries:
            self._new_round()


class UniformCobBO(CobBO):
    """CobBO without the eq. (2) preference weights: coordinates drawn uniformly."""

    @property
    def preference(self) -> np.ndarray:
        return np.full(self.dim, 1.0 / self.dim)


def speed(quick: bool) -> tuple[dict[str, Any], Any]:
    """Per-iteration ask time of CobBO and full-space GP-UCB (Fig. 1 left)."""
    iterations = 25 if quick else 100
    budget = N_INIT + iterations
    f = make_problem("rastrigin", DIM).evaluate_unit
    runs = {name: run_loop(cls(DIM, seed=0, budget=budget, preset="paper"), f, budget)
            for name, cls in (("cobbo", CobBO), ("gpucb", GPUCB))}
    model = slice(N_INIT, None)  # the iterations after the initial design
    times = {name: ask_s[model] for name, (_, ask_s) in runs.items()}
    last = slice(-max(1, iterations // 5), None)
    numbers = {
        "setting": {"problem": "rastrigin", "D": DIM, "domain": [-5, 10], "n_init": N_INIT,
                    "iterations": iterations, "seed": 0, "preset": "paper"},
        "ask_cpu_s_total": {n: float(t.sum()) for n, t in times.items()},
        "ask_cpu_s_median": {n: float(np.median(t)) for n, t in times.items()},
        "ask_cpu_s_mean_last_fifth": {n: float(t[last].mean()) for n, t in times.items()},
        "speedup_total": float(times["gpucb"].sum() / times["cobbo"].sum()),
        "speedup_last_fifth": float(times["gpucb"][last].mean() / times["cobbo"][last].mean()),
        "best": {n: float(v.min()) for n, (v, _) in runs.items()},
        "ask_cpu_s_per_iteration": {n: t.round(4).tolist() for n, t in times.items()},
    }
    fig, (ax_t, ax_v) = figure(2)
    it = np.arange(1, iterations + 1)
    for name, label in (("gpucb", "vanilla BO (full-space GP-UCB)"), ("cobbo", "CobBO")):
        ax_t.plot(it, times[name], label=label)
        ax_v.plot(np.arange(1, budget + 1), np.minimum.accumulate(runs[name][0]), label=label)
    ax_t.set(title=f"Rastrigin-{DIM}D: GP fit + acquisition per iteration "
                   f"(total ratio {numbers['speedup_total']:.1f}x)",
             xlabel="iteration after the 20 initial points", ylabel="CPU s", yscale="log")
    ax_v.set(title="best value", xlabel="evaluation", ylabel="Rastrigin")
    ax_t.legend()
    ax_v.legend()
    return numbers, fig


def _active_rastrigin() -> Objective:
    """Rastrigin on ``[-5, 10]`` of the first 25 of 50 coordinates; the rest ignored (Fig. 5)."""
    g = make_problem("rastrigin", ACTIVE).evaluate_unit
    return lambda U: g(U[:, :ACTIVE])


def ablation(quick: bool) -> tuple[dict[str, Any], Any]:
    """Backoff rule vs fixed queries per subspace vs uniform coordinates; preference mass."""
    budget, seeds = (N_INIT + 15, [0]) if quick else (N_INIT + 100, [0, 1])
    fixed = [1, 4, 16]
    variants: list[tuple[str, type[CobBO], dict[str, Any]]] = [
        ("backoff rule (CobBO)", CobBO, {}),
        *((f"fixed {k} queries", FixedQueriesCobBO, {"queries": k}) for k in fixed),
        ("uniform coordinates", UniformCobBO, {})]
    f = make_problem("rastrigin", DIM).evaluate_unit
    numbers: dict[str, Any] = {"setting": {"problem": "rastrigin", "D": DIM, "n_init": N_INIT,
                                           "budget": budget, "seeds": seeds,
                                           "preset": "paper"}, "fig4": {}}
    fig, (ax_v, ax_p) = figure(2)
    for label, cls, options in variants:
        best = np.array([np.minimum.accumulate(run_loop(
            cls(DIM, seed=s, budget=budget, preset="paper", **options), f, budget)[0])
            for s in seeds])
        numbers["fig4"][label] = {"final_best_mean": float(best[:, -1].mean()),
                                  "final_best_per_seed": best[:, -1].tolist()}
        band(ax_v, np.arange(1, budget + 1), best, label)
    share: list[float] = []
    opt = CobBO(DIM, seed=0, budget=budget, preset="paper")
    run_loop(opt, _active_rastrigin(), budget,
             on_tell=lambda o: share.append(float(o.preference[:ACTIVE].sum())))
    numbers["fig5"] = {"active_coordinates": ACTIVE, "seed": 0,
                       "active_share_at_end": share[-1],
                       "active_share_max": max(share),
                       "active_share_mean_last_half": float(np.mean(share[len(share) // 2:])),
                       "active_share_per_evaluation": np.round(share, 4).tolist()}
    ax_v.set(title=f"Fig. 4 right: Rastrigin-{DIM}D", xlabel="evaluation", ylabel="best value")
    ax_v.legend(fontsize=8)
    t = np.arange(1, budget + 1)
    ax_p.plot(t, share, label=f"active (coordinates 1-{ACTIVE})")
    ax_p.plot(t, 1.0 - np.array(share), label="inactive")
    ax_p.set(title="Fig. 5: preference mass sum pi_t", xlabel="evaluation",
             ylabel="probability", ylim=(0, 1))
    ax_p.legend(fontsize=8)
    return numbers, fig
