"""Black-box inequality constraints: feasibility, the incumbent, the merit value and the
proposal step every algorithm shares.

Convention (Optuna's): an evaluation returns constraint values ``c_1 .. c_m`` next to its
objective value; it is feasible iff every ``c_j <= 0``. A NaN constraint value (a failed
evaluation of that constraint) counts as violated. The total violation of a point is
``v = sum_j max(c_j, 0)`` (infinite when a value is NaN or +inf).

The rules, after SCBO (Eriksson & Poloczek, "Scalable Constrained Bayesian Optimization",
AISTATS 2021, arXiv:2002.08526, Sec. 3):

* **Incumbent** (:func:`best_index`): the lowest finite value among feasible points; before
  any feasible point, the point of least total violation (ties: the lower value).
* **Merit value** (:func:`merit_values`), what the trust regions count successes on and
  CobBO ranks its pivot by: a feasible point keeps its value; an infeasible point ``i``
  with a finite value gets ``U_i + R_i * min(v_i / V_i, 1)``, where ``U_i`` and ``R_i > 0``
  are the largest value and the range of the finite values told up to ``i`` (``R_i = 1`` when
  they are all equal) and ``V_i`` the largest finite violation told up to ``i`` (a NaN or
  infinite violation gives 1). So infeasible points rank worse than every point told before
  them and among themselves by violation, as SCBO ranks them to centre its trust region;
  the trust regions are centred on the incumbent. Failed objective values stay failures.
* **Surrogate values** (:func:`surrogate_values`), what every algorithm's model fits:
  the merit value until some told point is feasible (SCBO's first phase minimises the
  violation alone), then the told value of every point, infeasible ones included (SCBO
  fits its objective GP to all evaluations). Both are functions of the told history, which
  keeps a rebuilt optimizer exact (:meth:`hdbo_engine.base.Optimizer.from_history`).
  Departure from SCBO: every algorithm keeps its own model and acquisition on these
  values instead of one GP and constrained Thompson sampling [constraints.md#the-rules];
  an improvement-based acquisition (MS-UCB's ``acquisition="logei"`` option) measures
  improvement over the best surrogate value, which may then be an infeasible point's.
* **Proposal step** (:func:`steer`), applied by :meth:`hdbo_engine.base.Optimizer.ask` to
  every model-based proposal of every algorithm once constraints were told: one exact GP per
  constraint (:class:`hdbo_engine.gp.GP`, on the :data:`MAX_POINTS` [300] told points nearest
  the incumbent, hyperparameters fitted on the :data:`FIT_POINTS` [100] nearest, constraints
  never violated among them left out; noise variance at least :data:`NOISE_FLOOR` [1e-10]
  of the standardised values, since constraint values are usually computed exactly and the
  objective GP's floor of 1e-6 blurs the boundary [constraints.md#constrained-ei]) gives
  the probability of
  feasibility ``PoF(x) = prod_j Phi(-mu_j(x) / sigma_j(x))`` (independent constraints, as in
  Gardner et al., ICML 2014, and Optuna's GPSampler). A proposal with ``PoF >= 1/2`` is
  kept; otherwise, among :data:`N_CANDIDATES` [256] candidates (a quarter on the segment
  from the proposal to the incumbent; a quarter of coordinate mixes, each coordinate the
  proposal's with a probability drawn per candidate from U(0, 1) and else the incumbent's;
  half Gaussian steps around the proposal of standard deviation half its largest coordinate
  distance to the incumbent, at least 0.025), the nearest one to
  the proposal with ``PoF >= 1/2`` is proposed, else the one of largest ``PoF`` (SCBO's
  "least violating" fallback). Departure from SCBO: the candidate is chosen by distance to
  the algorithm's own proposal rather than by a Thompson sample of one objective model, so
  each algorithm keeps its own acquisition rule [constraints.md#the-rules]. Departure from
  SCBO: these candidates replace its trust-region perturbations, so a steered point keeps
  the proposal's feasible moves [constraints.md#coordinate-mixes].
* **Constrained EI** (:func:`constrained_ei`, the arm :class:`hdbo_engine.algorithms.auto.Auto`
  adds once a point is feasible): maximises ``log EI(x) + log PoF(x)`` (expected improvement
  over the feasible incumbent's value times the probability of feasibility: Schonlau, Welch
  & Jones 1998; Gardner et al., ICML 2014; log EI after Ament et al., NeurIPS 2023) in a box
  of half-width ``r`` around the incumbent. The objective's GP fits the surrogate values of
  the :data:`CEI_POINTS` [50] finite told points nearest the incumbent (noise variance at
  least :data:`NOISE_FLOOR`), the constraints' GPs are the proposal step's. The maximiser:
  :data:`CEI_CANDIDATES` [1000] uniform points in the box, as many that move each coordinate
  of the incumbent with probability ``min(1, CEI_MOVED / D)`` [20] and the incumbent itself;
  L-BFGS-B (forward differences of step :data:`CEI_STEP` [1e-7]) from the best
  :data:`CEI_STARTS` [3]. Pending points and a batch's earlier points enter the objective's
  GP at their posterior mean, which also becomes the value to improve on where their
  ``PoF >= 1/2`` (the kriging believer: Ginsbourger, Le Riche & Carraro, 2010).
  Departure from SCBO: a local EI x PoF instead of constrained Thompson sampling, for the
  precision an optimum on active constraints needs [constraints.md#constrained-ei].
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_ndtr

from .acquisition import log_expected_improvement
from .gp import GP
from .util import as_float_array

__all__ = ["feasible_mask", "violation", "best_index", "merit_values", "surrogate_values",
           "check_constraints", "steer", "constrained_ei"]

MAX_POINTS = 300  # told points each constraint's GP is conditioned on (nearest the incumbent)
FIT_POINTS = 100  # the nearest of them its hyperparameters are fitted on
N_CANDIDATES = 256  # candidates per steered proposal
MIN_STEP = 0.025  # smallest standard deviation of the steps around a proposal
FIT_MAXITER = 30  # L-BFGS-B iterations of each constraint GP's hyperparameter fit
NOISE_FLOOR = 1e-10  # smallest noise variance (standardised) of the constraint and CEI GPs
CEI_POINTS = 50  # told points nearest the incumbent that constrained EI's objective GP fits
CEI_CANDIDATES = 1000  # uniform candidates in the box, and as many that move few coordinates
CEI_MOVED = 20  # expected number of coordinates a few-coordinate candidate moves
CEI_STARTS = 3  # best candidates that start L-BFGS-B
CEI_STEP = 1e-7  # forward-difference step of the acquisition's gradient


def feasible_mask(C: np.ndarray) -> np.ndarray:
    """Rows of ``C`` (n, m) whose every value is ``<= 0`` (NaN is violated)."""
    return np.all(C <= 0.0, axis=1)


def violation(C: np.ndarray) -> np.ndarray:
    """Total violation ``sum_j max(c_j, 0)`` per row of ``C`` (n, m); inf where a value is NaN
    or +inf."""
    with np.errstate(invalid="ignore"):
        v = np.where(np.isnan(C), np.inf, np.maximum(C, 0.0)).sum(axis=1)
    return v


def best_index(y: np.ndarray, C: np.ndarray | None) -> int | None:
    """Index of the incumbent (module docstring): the lowest finite value among feasible
    points, else the least total violation among finite values (ties: the lower value), or
    None when no value is finite."""
    ok = np.isfinite(y)
    if not ok.any():
        return None
    if C is not None:
        feasible = ok & feasible_mask(C)
        if not feasible.any():
            v = np.where(ok, violation(C), np.inf)
            least = np.flatnonzero(ok & (v == v[ok].min()))
            return int(least[np.argmin(y[least])])
        ok = feasible
    return int(np.argmin(np.where(ok, y, np.inf)))


def has_feasible_value(y: np.ndarray, C: np.ndarray) -> bool:
    """Whether some told point is feasible and has a finite value."""
    return bool((feasible_mask(C) & np.isfinite(y)).any())


def merit_values(y: np.ndarray, C: np.ndarray | None) -> np.ndarray:
    """The values the surrogates see (module docstring, "Merit value"); ``y`` itself when
    ``C`` is None."""
    if C is None:
        return y
    y = np.asarray(y, dtype=float)
    merit = y.copy()
    finite = np.isfinite(y)
    v = violation(C)
    infeasible = ~feasible_mask(C)
    high = np.maximum.accumulate(np.where(finite, y, -np.inf))
    low = np.minimum.accumulate(np.where(finite, y, np.inf))
    spread = high - low
    spread = np.where(spread > 0, spread, 1.0)
    finite_v = np.where(infeasible & np.isfinite(v), v, 0.0)
    worst_v = np.maximum.accumulate(finite_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(np.isfinite(v) & (worst_v > 0), v / worst_v, 1.0)
    share = np.minimum(share, 1.0)
    hit = finite & infeasible
    merit[hit] = high[hit] + spread[hit] * share[hit]
    return merit


def surrogate_values(y: np.ndarray, C: np.ndarray | None,
                     merit: np.ndarray | None = None) -> np.ndarray:
    """The values the surrogates fit (module docstring, "Surrogate values"); ``y`` itself
    when ``C`` is None. ``merit``: :func:`merit_values` of ``(y, C)`` when already known."""
    if C is None:
        return y
    y = np.asarray(y, dtype=float)
    if has_feasible_value(y, C):
        return y
    return merit_values(y, C) if merit is None else merit


def check_constraints(constraints: Any, n: int, width: int | None) -> np.ndarray:
    """``constraints`` for ``n`` points as an (n, m) float array, or ValueError/TypeError
    naming ``constraints``: shape (m,) for one point or (n, m), real numbers, m >= 1 and
    equal to ``width`` when that is known."""
    expected = "real numbers of shape (m,) for one point or (n, m) for n points"
    C = as_float_array(constraints, "constraints", expected)
    if C.ndim == 1 and n == 1:
        C = C[None, :]
    if C.ndim != 2 or C.shape[0] != n or C.shape[1] < 1:
        raise ValueError(f"constraints: expected {expected} with n = {n}, "
                         f"got shape {np.shape(constraints)}")
    if width is not None and C.shape[1] != width:
        raise ValueError(f"constraints: expected {width} value(s) per point (the number "
                         f"told first), got {C.shape[1]}")
    return C


def probability_of_feasibility(models: list[GP], X: np.ndarray) -> np.ndarray:
    """``prod_j Phi(-mu_j / sigma_j)`` at the rows of X (independent constraint GPs)."""
    log_pof = np.zeros(len(X))
    for gp in models:
        mean, var = gp.predict(X)
        log_pof += log_ndtr(-mean / np.sqrt(np.maximum(var, 1e-12)))
    return np.exp(log_pof)


def constraint_models(X: np.ndarray, C: np.ndarray, centre: np.ndarray) -> list[GP]:
    """One GP per constraint that some of the :data:`MAX_POINTS` told points nearest
    ``centre`` violate, its hyperparameters fitted on the :data:`FIT_POINTS` nearest; a NaN
    or +inf value enters as the constraint's largest finite value, -inf as its smallest."""
    if len(X) > FIT_POINTS:
        near = np.argsort(np.abs(X - centre).sum(axis=1), kind="stable")[:MAX_POINTS]
        X, C = X[near], C[near]
    models = []
    for c in C.T:
        finite = np.isfinite(c)
        if not finite.any() or (c <= 0.0).all():
            continue
        c = np.where(finite, c, np.where(c < 0, c[finite].min(), c[finite].max()))
        gp = GP(X.shape[1], noise_bounds=(NOISE_FLOOR, 0.5), fit_maxiter=FIT_MAXITER).fit(
            X[:FIT_POINTS], c[:FIT_POINTS])
        models.append(gp.set_data(X, c) if len(X) > FIT_POINTS else gp)
    return models


def steer(X: np.ndarray, C: np.ndarray, incumbent: np.ndarray,
          proposals: list[tuple[np.ndarray, dict[str, Any]]], rng: np.random.Generator,
          models: list[GP] | None = None) -> list[tuple[np.ndarray, dict[str, Any]]]:
    """Move each proposal that is likely infeasible to a nearby likely feasible point
    (module docstring, "Proposal step"). ``X`` (n, D) and ``C`` (n, m) are the told points
    and their constraints, ``incumbent`` (D,) the point of :func:`best_index`, ``models``
    :func:`constraint_models` of them when already built. A moved proposal's meta gains
    ``"steered": True``; every meta gains ``"pof"``."""
    if models is None:
        models = constraint_models(X, C, incumbent)
    if not models:
        return proposals
    out = []
    for x, meta in proposals:
        pof = float(probability_of_feasibility(models, x[None])[0])
        if pof >= 0.5:
            out.append((x, {**meta, "pof": pof}))
            continue
        gap = incumbent - x
        n_quarter = N_CANDIDATES // 4
        along = x + np.linspace(0.0, 1.0, n_quarter)[:, None] * gap
        share = rng.random((n_quarter, 1))  # each mix's chance to keep a proposal coordinate
        mixed = np.where(rng.random((n_quarter, len(x))) < share, x, incumbent)
        sd = max(0.5 * float(np.abs(gap).max()), MIN_STEP)
        n_steps = N_CANDIDATES - 2 * n_quarter
        around = np.clip(x + rng.normal(0.0, sd, (n_steps, len(x))), 0.0, 1.0)
        cand = np.vstack([along, mixed, around])
        p = probability_of_feasibility(models, cand)
        likely = np.flatnonzero(p >= 0.5)
        if likely.size:
            i = int(likely[np.argmin(((cand[likely] - x) ** 2).sum(axis=1))])
        else:
            i = int(np.argmax(p))
        out.append((cand[i], {**meta, "pof": float(p[i]), "steered": True}))
    return out


def constrained_ei(X: np.ndarray, y: np.ndarray, models: list[GP], incumbent: np.ndarray,
                   best_value: float, radius: float, pending: np.ndarray, n: int,
                   rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` points that maximise ``log EI(x) + log PoF(x)`` in the box of half-width
    ``radius`` around ``incumbent`` (module docstring, "Constrained EI"). ``X`` (N, D) and
    ``y`` (N,) are the told points and their surrogate values, ``models`` the
    :func:`constraint_models` of their constraints, ``best_value`` the incumbent's value,
    ``pending`` (k, D) points asked and not yet told."""
    finite = np.isfinite(y)
    Xf, yf = X[finite], y[finite]
    near = np.argsort(np.abs(Xf - incumbent).sum(axis=1), kind="stable")[:CEI_POINTS]
    data_X, data_y = Xf[near], yf[near]
    gp = GP(X.shape[1], noise_bounds=(NOISE_FLOOR, 0.5)).fit(data_X, data_y)
    lo, hi = np.clip(incumbent - radius, 0.0, 1.0), np.clip(incumbent + radius, 0.0, 1.0)

    def acquisition(Z: np.ndarray) -> np.ndarray:
        mean, var = gp.predict(Z)
        value = log_expected_improvement(-mean, var, None, None, -best_value)[0]
        for model in models:
            c_mean, c_var = model.predict(Z)
            value = value + log_ndtr(-c_mean / np.sqrt(np.maximum(c_var, 1e-300)))
        return np.where(np.isfinite(value), value, -np.inf)

    def negative_with_gradient(z: np.ndarray) -> tuple[float, np.ndarray]:
        values = acquisition(np.vstack([z, z + CEI_STEP * np.eye(len(z))]))
        if not np.isfinite(values[0]):
            return 1e300, np.zeros_like(z)
        gradient = np.where(np.isfinite(values[1:]), (values[1:] - values[0]) / CEI_STEP, 0.0)
        return -float(values[0]), -gradient

    out: list[np.ndarray] = []
    for believed in [*pending, *([None] * n)]:
        if believed is not None or out:  # kriging believer: a pending or chosen point's mean
            x = believed if believed is not None else out[-1]
            mean = gp.predict(x[None])[0]
            data_X, data_y = np.vstack([data_X, x]), np.append(data_y, mean)
            gp.set_data(data_X, data_y)
            if not models or probability_of_feasibility(models, x[None])[0] >= 0.5:
                best_value = min(best_value, float(mean[0]))
        if believed is not None:
            continue
        uniform = lo + rng.random((CEI_CANDIDATES, len(lo))) * (hi - lo)
        moved = rng.random(uniform.shape) < min(1.0, CEI_MOVED / len(lo))
        candidates = np.vstack([incumbent, uniform, np.where(moved, uniform, incumbent)])
        values = acquisition(candidates)
        order = np.argsort(-values, kind="stable")
        best_x, best_a = candidates[order[0]], values[order[0]]
        for start in candidates[order[:CEI_STARTS]]:
            res = minimize(negative_with_gradient, start, jac=True, method="L-BFGS-B",
                           bounds=list(zip(lo, hi, strict=True)), options={"maxiter": 100})
            if np.isfinite(res.fun) and -res.fun > best_a:
                best_x, best_a = np.clip(res.x, lo, hi), -res.fun
        out.append(best_x)
    return out
