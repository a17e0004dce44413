"""BKB, Calandriello et al. (COLT 2019): regret and cost against exact GP-UCB.

* **Finite arms** (the paper's setting, Sec. 3.1): A arms uniform in
  ``[0, 1]^8``, Hartmann6 on the first 6 coordinates with Gaussian noise of sd
  0.1 x the std of f over the arms. The kernel is fitted once (engine GP on
  200 noisy evaluations of random arms) and frozen for every method, with
  ``lambda`` its noise variance (floored at 1e-2): the paper assumes a known
  kernel. ``BKB(preset="paper", arms=...)`` (theory ``q_bar``, one
  dictionary draw per pull, the theorem's ``beta~_t``) against exact GP-UCB
  (eqs. (1)-(2)) on the same arms with the same kernel, lambda and
  ``beta~_t`` rule computed with exact variances, in two forms: one row per
  evaluation (``O(t^3 + A t^2)`` per step, the cost the paper compares with)
  and repeated arms merged (noise ``lambda / count``, the same posterior at
  ``O(n_u^3 + A n_u^2)``, ``n_u`` distinct arms pulled). All start from the
  same first arm and see the same noise stream.
* **Continuous box** (Appendix A): Hartmann6 in the first 6 of 20
  coordinates, ``BKB(preset="paper")`` against ``GPUCB(preset="paper")``
  (the engine's exact full-space GP-UCB, kernel fitted from data).

Reported as t grows: cumulative regret, the model size (BKB's ``m_t``, the
exact methods' rows) and the CPU time per step (ask + tell).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from hdbo_cli.problems import make_problem
from hdbo_engine import BKB, GPUCB
from hdbo_engine.algorithms.bkb import _Kernel, _kernel_matrix, bkb_beta
from hdbo_engine.gp import GP, GPParams, robust_cholesky

from . import figure

ARM_DIM, NOISE, N_FIT, DELTA, EPS, F_NORM = 8, 0.1, 200, 0.1, 0.5, 1.0


class ExactGPUCB:
    """Exact GP-UCB over a finite arm set with BKB's frozen kernel and ``beta~_t`` rule.

    ``merge=True``: repeated arms enter once with noise ``lambda / count`` and
    their mean value; ``merge=False``: eqs. (1)-(2) as written, one row per
    evaluation. Both give the same posterior.
    """

    def __init__(self, arms: np.ndarray, params: GPParams, lam: float,
                 output_scale: tuple[float, float], merge: bool) -> None:
        self.arms, self.lam, self.merge = arms, lam, merge
        self.kernel = _Kernel(params.lengthscales, params.signal_var, params.noise_var,
                              *output_scale, "matern52")
        self.K_arms = _kernel_matrix(self.kernel, arms, arms)  # fixed kernel: once
        self.counts, self.sums = np.zeros(len(arms), dtype=int), np.zeros(len(arms))
        self.pulls: list[int] = []
        self.y: list[float] = []

    @property
    def model_size(self) -> int:
        return int((self.counts > 0).sum()) if self.merge else len(self.y)

    def ask(self) -> int:
        k = self.kernel
        if self.merge:
            rows = np.flatnonzero(self.counts)
            c = self.counts[rows]
            target = -(self.sums[rows] / c - k.y_mean) / k.y_std  # negated: the paper maximises
            noise = self.lam / c
        else:
            rows, c = np.asarray(self.pulls), np.ones(len(self.pulls))
            target = -(np.asarray(self.y) - k.y_mean) / k.y_std
            noise = np.full(len(rows), self.lam)
        L = robust_cholesky(self.K_arms[np.ix_(rows, rows)] + np.diag(noise))
        Kq = self.K_arms[:, rows]
        mean = Kq @ cho_solve((L, True), target)
        v = solve_triangular(L, Kq.T, lower=True, check_finite=False)
        sigma2 = np.maximum(k.signal_var - (v * v).sum(0), 1e-12) / self.lam  # leverage scale
        beta = bkb_beta(len(self.y), float(c @ sigma2[rows]), np.sqrt(self.lam), self.lam,
                        k.signal_var, DELTA, F_NORM, EPS)
        return int(np.argmax(mean + beta * np.sqrt(sigma2)))

    def tell(self, i: int, value: float) -> None:
        self.counts[i] += 1
        self.sums[i] += value
        self.pulls.append(i)
        self.y.append(value)


def _arms(n_arms: int, T: int, seed: int) -> dict[str, Any]:
    """BKB vs the two exact GP-UCBs on a finite arm set; per-step regret, size, CPU s."""
    rng = np.random.default_rng(seed)
    arms = rng.random((n_arms, ARM_DIM))
    f = make_problem("hartmann6", ARM_DIM).evaluate_unit(arms)
    gap, noise_sd = f - f.min(), NOISE * float(f.std())
    fit = rng.choice(n_arms, N_FIT, replace=False)
    gp = GP(ARM_DIM).fit(arms[fit], f[fit] + rng.normal(0, noise_sd, N_FIT), restarts=4)
    lam, scale = max(gp.params.noise_var, 1e-2), (gp.y_mean, gp.y_std)
    first = int(rng.integers(n_arms))
    out: dict[str, Any] = {"setting": {"arms": n_arms, "dim": ARM_DIM, "T": T, "seed": seed,
                                       "noise_sd": noise_sd, "lambda": lam}}
    for name in ("BKB", "exact GP-UCB (merged arms)", "exact GP-UCB (one row per pull)"):
        noise_rng = np.random.default_rng(seed + 1)
        if name == "BKB":
            model: Any = BKB(ARM_DIM, seed=seed, budget=T, arms=arms, kernel=gp.params, lam=lam,
                             output_scale=scale, preset="paper")
        else:
            model = ExactGPUCB(arms, gp.params, lam, scale, merge="merged" in name)
        regret, step_s, size = np.empty(T), np.empty(T), np.empty(T, dtype=int)
        for t in range(T):
            t0 = time.process_time()
            if t == 0:
                i = first
            elif name == "BKB":
                (p,) = model.ask()
                i = p.meta["arm"]
            else:
                i = model.ask()
            value = f[i] + noise_rng.normal(0, noise_sd)
            model.tell(arms[i] if name == "BKB" else i, value)
            step_s[t] = time.process_time() - t0
            size[t] = model.dictionary_size if name == "BKB" else model.model_size
            regret[t] = gap[i]
        out[name] = {"cumulative_regret": np.cumsum(regret), "model_size": size,
                     "step_cpu_s": step_s}
    return out


def _continuous(dim: int, T: int, seed: int) -> dict[str, Any]:
    """BKB vs exact full-space GP-UCB on Hartmann6 embedded in ``dim``-D."""
    prob = make_problem("hartmann6", dim)
    out: dict[str, Any] = {"setting": {"problem": "hartmann6", "dim": dim, "T": T,
                                       "seed": seed}}
    for name, cls in (("BKB", BKB), ("exact GP-UCB", GPUCB)):
        opt = cls(dim, seed=seed, budget=T, preset="paper")
        regret, step_s, size = np.empty(T), np.empty(T), np.empty(T, dtype=int)
        for t in range(T):
            t0 = time.process_time()
            (p,) = opt.ask()
            value = float(prob.evaluate_unit(p.x[None])[0])
            opt.tell(p.x, value)
            step_s[t] = time.process_time() - t0
            size[t] = opt.dictionary_size if name == "BKB" else t + 1
            regret[t] = value - prob.f_min
        out[name] = {"cumulative_regret": np.cumsum(regret), "model_size": size,
                     "step_cpu_s": step_s,
                     "best_regret": float(np.min(regret))}
    return out


def _summary(run: dict[str, Any], T: int) -> dict[str, Any]:
    """Values at a few t, the mean step time over the last tenth before each."""
    marks = sorted({max(1, T // 4), T // 2, T})
    w = max(1, T // 10)
    out = {k: v for k, v in run.items() if k == "setting"}
    for name, r in run.items():
        if name == "setting":
            continue
        out[name] = {
            "cumulative_regret_at": {t: float(r["cumulative_regret"][t - 1]) for t in marks},
            "model_size_at": {t: int(r["model_size"][t - 1]) for t in marks},
            "step_cpu_s_at": {t: float(r["step_cpu_s"][max(0, t - w):t].mean()) for t in marks},
            "total_cpu_s": float(r["step_cpu_s"].sum()),
            **({"best_regret": r["best_regret"]} if "best_regret" in r else {})}
    return out


def cost(quick: bool) -> tuple[dict[str, Any], Any]:
    """Both settings; figure: cumulative regret, model size and step time against t."""
    n_arms, T_arms, dim, T_box = (300, 80, 20, 40) if quick else (2000, 600, 20, 300)
    runs = {"finite arms": _arms(n_arms, T_arms, seed=0), "continuous box": _continuous(
        dim, T_box, seed=0)}
    fig, axes = figure(3, rows=2, height=3.4)
    for row, (setting, run) in enumerate(runs.items()):
        for name, r in run.items():
            if name == "setting":
                continue
            t = np.arange(1, len(r["step_cpu_s"]) + 1)
            for col, key in enumerate(("cumulative_regret", "model_size", "step_cpu_s")):
                axes[3 * row + col].plot(t, r[key], label=name)
        for col, label in enumerate(("cumulative regret", "m_t / rows of the exact GP",
                                     "CPU s per step")):
            ax = axes[3 * row + col]
            ax.set(title=f"{setting}: {label}", xlabel="t")
            ax.legend(fontsize=7)
    fig.tight_layout()
    return {"finite arms": _summary(runs["finite arms"], T_arms),
            "continuous box": _summary(runs["continuous box"], T_box)}, fig
