"""BKB benchmarks for issue 4 ("Show" section).

Two experiments, each in one process (timings are only compared within a run):

``arms``  finite arm set (default 2000 arms uniform in [0, 1]^8, T = 1000,
    embedded Hartmann6 with Gaussian noise of sd 0.1 x the std of f over the
    arms): BKB versus exact GP-UCB on the same arms, with the same fixed kernel,
    lambda, frozen output scale and beta~_t rule (the exact methods use exact
    posterior variances in it). Reports, at several t, cumulative regret,
    simple regret (best arm pulled so far) and the mean regret of the
    preceding ``--window`` steps, each method's ask time (total and per step
    around t), BKB's m_t, and the ratios.

    The kernel is fitted once, before the runs, on ``--n-fit`` noisy
    evaluations of random arms (engine GP, 4 starts); lambda is the fitted
    noise variance (floored at 1e-2) and the output scale is the one that fit
    used (the mean and std of its values), frozen for every method: the
    kernel's signal variance then means the same thing at every step.
    ``--beta-scale`` [0.1] multiplies the paper's beta~_t for every method; on
    this frozen scale 0.1 gives about 4 GP standard deviations at t = 300
    (BKB's own default, 0.05, is meant for its history-standardised fitted
    mode, where the scale grows as good values are found).

    Two exact GP-UCBs (identical posteriors, so identical choices up to
    round-off): ``exact_gpucb_all_rows`` is eqs. (1)-(2) as written, one row
    per evaluation, recomputed every step (O(t^3 + A t^2), the GP-UCB whose
    cost the paper compares with); ``exact_gpucb`` merges repeated arms
    (noise lambda / count, mean value), O(n_u^3 + A n_u^2) with n_u the
    number of distinct arms pulled, the strongest exact baseline. Both use
    the arm-by-arm kernel matrix computed once (a fixed kernel allows it).
    ``--methods`` selects among ``bkb exact_gpucb exact_gpucb_all_rows``.

Times are CPU seconds of this process (``time.process_time``; run with
single-threaded BLAS), so other processes on a shared machine do not enter
them; total wall-clock time is reported too.

``continuous``  BKB on a continuous box (default embedded Hartmann6 in 20-D,
    T = 5000): m_t, best value, UCB multiplier ``beta~_t / sqrt(lambda)``
    (posterior sds of f) at given t, total time, peak memory
    (``resource.getrusage``) and the time per step around given t.
    ``--sum-cap inf`` gives the paper's uncapped ``beta~_t`` sum.

Examples::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 \\
        python benchmarks/bkb_bench.py arms --arms 2000 --dim 8 --T 1000
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 \\
        python benchmarks/bkb_bench.py continuous --dim 20 --T 5000
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hdbo_engine.algorithms.bkb import BKB, _Kernel, _kernel_matrix, bkb_beta  # noqa: E402
from hdbo_engine.gp import GP, GPParams, robust_cholesky  # noqa: E402
from hdbo_engine.problems import make_problem  # noqa: E402


class ExactGPUCB:
    """Exact GP-UCB over a finite arm set with BKB's model and beta~ rule (see module doc).

    ``rows="counts"``: repeated arms enter once, with noise lambda / count and their mean
    value (the same posterior as one row per evaluation), O(n_u^3 + A n_u^2) per step.
    ``rows="all"``: the textbook eqs. (1)-(2), one row per evaluation, O(t^3 + A t^2).
    """

    def __init__(self, arms: np.ndarray, params: GPParams, lam: float,
                 output_scale: tuple[float, float], kernel_type: str, rows: str,
                 delta: float, eps: float, F: float, beta_scale: float) -> None:
        self.arms, self.lam, self.rows = arms, lam, rows
        self.kernel = _Kernel(params.lengthscales, params.signal_var, params.noise_var,
                              *output_scale, kernel_type)
        self.delta, self.eps, self.F, self.beta_scale = delta, eps, F, beta_scale
        self.counts = np.zeros(len(arms), dtype=int)
        self.sums = np.zeros(len(arms))
        self.pulls: list[int] = []
        self.y: list[float] = []
        self.last_beta = 0.0
        self.K_arms = _kernel_matrix(self.kernel, arms, arms)  # fixed kernel: computed once

    @property
    def model_size(self) -> int:
        return int((self.counts > 0).sum()) if self.rows == "counts" else len(self.y)

    def ask(self) -> int:
        k = self.kernel
        if self.rows == "counts":
            U = np.flatnonzero(self.counts)
            c = self.counts[U]
            target = -(self.sums[U] / c - k.y_mean) / k.y_std  # negated: the paper maximises
            noise = self.lam / c
        else:
            U = np.asarray(self.pulls)
            c = np.ones(len(U))
            target = -(np.asarray(self.y) - k.y_mean) / k.y_std
            noise = np.full(len(U), self.lam)
        KU = self.K_arms[np.ix_(U, U)] + np.diag(noise)
        L = robust_cholesky(KU)
        Kq = self.K_arms[:, U]  # (A, n)
        mean = Kq @ cho_solve((L, True), target)
        v = solve_triangular(L, Kq.T, lower=True, check_finite=False)
        var = np.maximum(k.signal_var - (v * v).sum(0), 1e-12)
        sigma2 = var / self.lam  # leverage scale, as in BKB
        beta = self.beta_scale * bkb_beta(len(self.y), float(c @ sigma2[U]), np.sqrt(self.lam),
                                          self.lam, k.signal_var, self.delta, self.F, self.eps)
        self.last_beta = beta
        return int(np.argmax(mean + beta * np.sqrt(sigma2)))

    def tell(self, i: int, value: float) -> None:
        self.counts[i] += 1
        self.sums[i] += value
        self.pulls.append(i)
        self.y.append(value)


def run_arms(args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(args.seed)
    problem = make_problem(args.problem, args.dim)
    arms = rng.random((args.arms, args.dim))
    f = problem.evaluate_unit(arms)
    gap = f - f.min()
    noise_sd = args.noise * float(f.std())
    # one kernel fit, shared by every method
    fit_idx = rng.choice(args.arms, args.n_fit, replace=False)
    gp = GP(args.dim, kernel_type=args.kernel_type).fit(
        arms[fit_idx], f[fit_idx] + rng.normal(0, noise_sd, args.n_fit), restarts=4)
    params = gp.params
    lam = max(params.noise_var, 1e-2)
    scale = (gp.y_mean, gp.y_std)  # the scale the kernel was fitted on, frozen for all
    common = dict(delta=0.1, eps=0.5, F=1.0, beta_scale=args.beta_scale)
    checkpoints = sorted({t for t in args.report_at if t <= args.T} | {args.T})
    out: dict = {"setting": {**vars(args), "report_at": checkpoints,
                             "lengthscales": [round(float(v), 4) for v in params.lengthscales],
                             "fitted_noise_var": params.noise_var, "lambda": lam,
                             "output_scale": list(scale), "noise_sd": noise_sd,
                             "f_min_over_arms": float(f.min()),
                             "random_arm_mean_regret": float(gap.mean())}}
    first = int(np.random.default_rng(args.seed + 2).integers(args.arms))  # shared first arm
    for name in args.methods:
        noise_rng = np.random.default_rng(args.seed + 1)  # same noise stream for every method
        if name == "bkb":
            model = BKB(args.dim, seed=args.seed, arms=arms, kernel=params, lam=lam, n_init=1,
                        q_bar=args.q_bar, kernel_type=args.kernel_type, output_scale=scale,
                        resample=args.resample, **common)
        else:
            model = ExactGPUCB(arms, params, lam, scale, args.kernel_type,
                               "counts" if name == "exact_gpucb" else "all", **common)
        regret, step_times, sizes, multipliers = [], [], [], []
        wall = time.perf_counter()
        for t in range(1, args.T + 1):
            t0 = time.process_time()
            if t == 1:
                i = first
            elif name == "bkb":
                (p,) = model.ask()
                i = p.meta["arm"]
            else:
                i = model.ask()
            if t > 1:  # beta~ sigma~ = (beta~ / sqrt(lambda)) x the posterior sd of f
                beta = p.meta["beta"] if name == "bkb" else model.last_beta
                multipliers.append(beta / np.sqrt(lam))
            step_times.append(time.process_time() - t0)
            value = f[i] + noise_rng.normal(0, noise_sd)
            if name == "bkb":
                model.tell(arms[i], value)
                sizes.append(model.dictionary_size)
            else:
                model.tell(i, value)
                sizes.append(model.model_size)
            regret.append(gap[i])
            if t % args.log_every == 0:
                print(f"{name} t={t} cum_regret={sum(regret):.4g} model_size={sizes[-1]} "
                      f"ask_cpu_s={sum(step_times):.2f} wall_s={time.perf_counter() - wall:.0f}",
                      flush=True)
        cum, simple = np.cumsum(regret), np.minimum.accumulate(regret)
        w = args.window
        out[name] = {
            "cumulative_regret": {t: float(cum[t - 1]) for t in checkpoints},
            "simple_regret": {t: float(simple[t - 1]) for t in checkpoints},
            f"mean_regret_of_{w}_steps_before": {
                t: float(np.mean(regret[max(0, t - w):t])) for t in checkpoints},
            "distinct_arms_pulled": len(set(model.pulls if name != "bkb" else
                                            model._loc_of_told)),
            "model_size_at": {t: sizes[t - 1] for t in checkpoints},
            "beta_over_sqrt_lambda_at": {t: multipliers[t - 2] for t in checkpoints if t > 1},
            f"ask_cpu_s_mean_of_{w}_steps_before": {
                t: float(np.mean(step_times[max(0, t - w):t])) for t in checkpoints},
            "total_ask_cpu_s": float(sum(step_times)),
            "wall_s": time.perf_counter() - wall,
        }
        print(name, json.dumps(out[name]), flush=True)
    if "bkb" in out:
        for name in ("exact_gpucb", "exact_gpucb_all_rows"):
            if name in out:
                out[f"regret_ratio_bkb_over_{name}"] = {
                    t: out["bkb"]["cumulative_regret"][t] / out[name]["cumulative_regret"][t]
                    for t in checkpoints}
                out[f"cpu_time_ratio_{name}_over_bkb"] = out[name]["total_ask_cpu_s"] / \
                    out["bkb"]["total_ask_cpu_s"]
    return out


def run_continuous(args: argparse.Namespace) -> dict:
    problem = make_problem(args.problem, args.dim)
    kwargs = {} if args.q_bar is None else {"q_bar": args.q_bar}
    if args.n_candidates is not None:
        kwargs["n_candidates"] = args.n_candidates
    if args.beta_scale is not None:
        kwargs["beta_scale"] = args.beta_scale
    if args.n_refine is not None:
        kwargs["n_refine"] = args.n_refine
    if args.sum_cap is not None:
        kwargs["sum_cap"] = args.sum_cap
    opt = BKB(args.dim, seed=args.seed, budget=args.T, **kwargs)
    times, sizes, best, multipliers = [], [], [], []
    start, cpu_start = time.perf_counter(), time.process_time()
    for t in range(1, args.T + 1):
        t0 = time.process_time()
        (p,) = opt.ask()
        # beta~ sigma~ = (beta~ / sqrt(lambda)) x the posterior sd of f; lambda of this step
        multipliers.append(p.meta["beta"] / np.sqrt(opt._sketch().lam) if "beta" in p.meta
                           else float("nan"))
        value = float(problem.evaluate_unit(p.x)[0])
        opt.tell(p.x, value)  # tell advances the dictionary chain: part of the step
        times.append(time.process_time() - t0)
        sizes.append(opt.dictionary_size)
        best.append(opt.best[1])
        if t % args.log_every == 0:
            print(f"t={t} m_t={sizes[-1]} best={best[-1]:.5g} multiplier={multipliers[-1]:.2f} "
                  f"step_cpu_s={np.mean(times[-args.log_every:]):.4f} "
                  f"cpu_s={time.process_time() - cpu_start:.1f} "
                  f"wall_s={time.perf_counter() - start:.0f}", flush=True)
    total = time.process_time() - cpu_start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    window = args.window
    per_step = {int(t): float(np.mean(times[max(0, t - window):t]))
                for t in args.report_at if t <= args.T}
    return {
        "setting": vars(args),
        "m_T": sizes[-1],
        "m_at": {int(t): sizes[t - 1] for t in args.report_at if t <= args.T},
        "best_at": {int(t): best[t - 1] for t in args.report_at if t <= args.T},
        "beta_over_sqrt_lambda_at": {int(t): multipliers[t - 1] for t in args.report_at
                                     if t <= args.T},
        "best_value": best[-1],
        "f_min": problem.f_min,
        "total_cpu_s": total,
        "total_wall_s": time.perf_counter() - start,
        "peak_rss_MiB": peak_kib / 1024.0,
        f"step_cpu_s_mean_of_{window}_before": per_step,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="experiment", required=True)
    a = sub.add_parser("arms", help="finite arm set: BKB vs exact GP-UCB")
    a.add_argument("--arms", type=int, default=2000)
    a.add_argument("--dim", type=int, default=8)
    a.add_argument("--T", type=int, default=1000)
    a.add_argument("--problem", default="hartmann6")
    a.add_argument("--noise", type=float, default=0.1, help="noise sd / std of f over arms")
    a.add_argument("--n-fit", type=int, default=200)
    a.add_argument("--q-bar", type=float, default=4.0)
    a.add_argument("--kernel-type", default="matern52", choices=["matern52", "rbf"])
    a.add_argument("--resample", default="location", choices=["location", "pull"],
                   help="BKB's dictionary draw: per distinct location (default) or per pull")
    a.add_argument("--beta-scale", type=float, default=0.1)
    a.add_argument("--report-at", type=int, nargs="+", default=[100, 250, 500, 1000])
    a.add_argument("--window", type=int, default=50, help="steps averaged before each t")
    a.add_argument("--methods", nargs="+", default=["bkb", "exact_gpucb", "exact_gpucb_all_rows"],
                   choices=["bkb", "exact_gpucb", "exact_gpucb_all_rows"])
    a.add_argument("--log-every", type=int, default=100)
    a.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("continuous", help="continuous box: m_T, time, memory")
    c.add_argument("--dim", type=int, default=20)
    c.add_argument("--T", type=int, default=5000)
    c.add_argument("--problem", default="hartmann6")
    c.add_argument("--q-bar", type=float, default=None)
    c.add_argument("--beta-scale", type=float, default=None, help="BKB default when omitted")
    c.add_argument("--n-candidates", type=int, default=None, help="BKB default when omitted")
    c.add_argument("--n-refine", type=int, default=None, help="BKB default when omitted")
    c.add_argument("--sum-cap", type=float, default=None,
                   help="cap on the sum in beta~_t; inf = the paper; BKB default when omitted")
    c.add_argument("--report-at", type=int, nargs="+", default=[1000, 2500, 5000])
    c.add_argument("--window", type=int, default=100)
    c.add_argument("--log-every", type=int, default=250)
    c.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the JSON result here")
    args = parser.parse_args(argv)
    result = run_arms(args) if args.experiment == "arms" else run_continuous(args)
    text = json.dumps(result, indent=2, default=float)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
