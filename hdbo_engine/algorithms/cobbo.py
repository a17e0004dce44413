"""CobBO: coordinate backoff Bayesian optimisation with two-stage kernels.

Paper: Tan, Nayman, Wang, "CobBO: Coordinate Backoff Bayesian Optimization with
Two-Stage Kernels" (arXiv preprint, 2021). The paper maximises; the engine
minimises, so "improvement" means a *lower* value and every formula is applied
to ``-y``. The paper mapping, every departure with its measurement, and what was
tried and not kept: ``docs/algorithms/cobbo.md``.

Algorithm 2, as implemented:

* Lines 1-4: ``n_init`` initial points (21 when the axis design's first probes find no
  effect, :mod:`hdbo_engine.design`); the pivot ``V`` is the best, with value
  ``M``; failure counter ``q = 0``; preference weights ``w_0,j = 1/D``.
* Line 7 (Sec. 3.1, 4.1): a block size drawn uniformly from the distinct values of
  ``{1,4,6,8,12,14,16,22,24,26,30}`` capped at ``D``; coordinates ``C_t`` drawn
  without replacement with ``pi_t = w_t / sum(w_t)``;
  ``Omega_t = {x : x_j = V_j for j not in C_t}``.
* Lines 6-9, eq. (1), stage 1: every told point projected onto ``Omega_t``; the
  virtual points' values from a multiquadric RBF interpolant of all told points
  (:func:`rbf_estimate`; App. B's smoothing retry). Above D = 300 the same interpolant
  is solved from squared distances cached as points are told
  (:func:`rbf_from_distances`, :class:`PairwiseDistances`).
* Lines 10-13, stage 2: a Matern-5/2 ARD GP on the block's coordinates over the
  virtual and real points of ``Omega_t``; expected improvement (or UCB)
  maximised by multi-start L-BFGS-B in the block.
* Lines 15-19: a value below ``M`` moves ``V`` there and sets ``q = 0``; else ``q += 1``.
* Eq. (2): ``w_j *= alpha`` for ``j in C`` on improvement over ``M_{t-1}``,
  ``w_j /= beta`` otherwise.
* Sec. 3.2, backoff: ``Delta_t = (M_{t-1} - y_t) / max(|M_{t-1}|, 0.1)``,
  ``tau = T/1000 + c(D)``, ``xi(Delta_t)`` in {4, 2, 0}; a new block is drawn when
  ``N_t >= tau and Delta_t <= 0.1 and P_t <= xi`` (:func:`backoff_tau`,
  :func:`backoff_xi`, :func:`relative_improvement`).
* App. B.1: after ``escape_patience`` consecutive failures the pivot's surrogate
  value is raised to the median and a far point better than the median becomes
  the pivot.

Defaults, both presets: ``alpha = 2.0``, ``beta = 1.1``, ``acquisition = "ei"``
(``ucb_beta = 4``), ``virtual_noise = 0.05``, ``n_candidates = 256``,
``restarts = 5``, ``fit_maxiter = 30``, ``escape_candidates = 5``,
``escape_patience = max(20, 2 ceil(D/15) ceil(tau))``, ``T = budget`` (``DEFAULT_HORIZON``
= 100 if None). ``preset="paper"`` (Algorithm 2 as written): 20 uniform initial points,
the whole block box (``local_radius = None``, no trust region),
``max_gp_points = None``, ``flat_backoff = False``. ``preset="practical"``
[default]: the centre, the axis design and a line search, ``trust_region = True``
(``tr_length_init = 0.8``, ``failure_tol = max(4, min(D, 16))``),
``local_radius = 0.2`` when the trust region is off, ``max_gp_points = 100``,
``flat_backoff = True``.

Departures from the paper, one line each; the section of ``docs/algorithms/cobbo.md``
that gives the reason and the measurement is in brackets:

* The RBF length scale is legacy ``Rbf``'s average node distance [#rbf-length-scale].
* Repeated points are merged to their mean before the RBF solve [#repeated-points].
* Virtual points get an extra noise variance in stage 2 [#virtual-points-variance].
* At most ``max_gp_points`` points, nearest the pivot, in the stage-2 GP [#stage-2-data-cap].
* The acquisition box is a cube of half-width ``local_radius`` [#local-acquisition-box].
* A TuRBO trust region replaces that box (practical) [#trust-region].
* A query that ties the pivot's value exactly ends the block (``flat_backoff``) [#flat-blocks].
* The centre, the axis design and a line search replace uniform points [#initial-design].
* Block draws and escapes are seeded from the history, so a rebuild is exact [#state-from-history].
* ``ask(n > 1)`` and pending points: kriging believer in the current block [#parallel-proposals].
* On a history shared with other algorithms (Auto's), points whose meta names another
  algorithm enter the models but move neither the pivot nor the counters
  (``hdbo_engine.base``; Auto tells its COBYLA phase's points as design points,
  ``hdbo_engine.algorithms.auto.members``) [auto.md#own-incumbents].
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.interpolate import RBFInterpolator
from scipy.linalg import LinAlgError, LinAlgWarning
from scipy.linalg.lapack import dgesv

from ..acquisition import expected_improvement, ucb
from ..base import Optimizer
from ..gp import GP
from ..maximize import incumbent_candidates, lbfgsb_batch, maximize_candidates
from ..options import Options
from ..space import Space
from ..streams import COBBO_BLOCKS, COBBO_ESCAPES
from ..trust_region import TrustRegion, search_box
from ..util import (
    check_bool,
    check_int,
    impute_failures,
    is_int,
    is_number,
    warn_beyond_measured_scale,
)

BLOCK_SIZES = (1, 4, 6, 8, 12, 14, 16, 22, 24, 26, 30)  # Sec. 4.1
_SMOOTH_STEP, _SMOOTH_TRIES = 0.02, 10  # App. B smoothing fallback
_RESIDUAL_RTOL = 1e-6  # a stage-1 solve further than this from the told values has failed
# Above this many columns stage 1 is assembled from squared distances cached as points are
# told (:class:`PairwiseDistances`, :func:`rbf_from_distances`); up to it scipy's
# RBFInterpolator builds the same interpolant, bit for bit as in earlier versions
# (docs/algorithms/cobbo.md, "Large D").
CACHED_DISTANCES_DIM = 300
# The largest run measured within the scale targets: 2000 evaluations at D = 5000 (the RBF
# system grows as the history squared, its solve as the history cubed).
MEASURED_SCALE_COBBO, MEASURED_BUDGET_COBBO = 5000 * 2000, 2000


def backoff_tau(budget: int, dim: int) -> float:
    """``tau = T/1000 + c(D)`` of Sec. 3.2."""
    if dim < 20:
        c = 1
    elif dim < 70:
        c = 2
    elif dim < 100:
        c = 3
    elif dim < 200:
        c = 4
    else:
        c = 5
    return budget / 1000.0 + c


def backoff_xi(delta: float) -> int:
    """``xi`` of Sec. 3.2 as a function of the relative improvement ``Delta_t``."""
    if delta < 0.05:
        return 4
    if delta <= 0.1:
        return 2
    return 0


def relative_improvement(y: float, m_prev: float) -> float:
    """``Delta_t`` of Sec. 3.2 for minimisation (the paper's formula on ``-y``)."""
    if not np.isfinite(y):
        return -np.inf
    return (m_prev - y) / max(abs(m_prev), 0.1)


def rbf_length(X: np.ndarray) -> float:
    """Average inter-point distance as scipy's legacy ``Rbf`` defines it.

    The edge of the hypercube each point would own in the data's bounding box:
    ``(prod(nonzero edge lengths) / n) ** (1 / #nonzero edges)``.
    """
    edges = np.ptp(X, axis=0)
    edges = edges[edges > 0]
    if not edges.size:
        return 1.0
    return float(np.exp((np.log(edges).sum() - math.log(len(X))) / edges.size))


def distinct_points(first: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The told points an interpolant can pass through. ``first[i]`` is the index of the
    earliest point equal to point ``i`` (``i`` itself when none is): the first point of each
    group of repeats is kept, in told order, with the group's mean value. Returns the kept
    indices and their values (``y`` itself when no point repeats)."""
    keep = np.flatnonzero(first == np.arange(len(y)))
    if len(keep) == len(y):
        return keep, y
    slot = np.searchsorted(keep, first)
    return keep, np.bincount(slot, weights=y) / np.bincount(slot)


def rbf_estimate(X: np.ndarray, y: np.ndarray, Xq: np.ndarray) -> tuple[np.ndarray, float]:
    """Stage-1 estimate at ``Xq``: multiquadric RBF interpolant of (X, y) (module docstring).

    Repeated points are merged first (:func:`distinct_points`), so the system is regular by
    construction; a solve whose interpolant misses a told value by more than
    ``_RESIDUAL_RTOL`` of the values' scale (ill-conditioning) counts as failed and moves to
    the smoothing retry. Returns the estimates and the RBF length scale (:func:`rbf_length`).
    """
    length = rbf_length(X)
    _, first_index, group = np.unique(X, axis=0, return_index=True, return_inverse=True)
    keep, y = distinct_points(first_index[group.ravel()], y)
    X = X[keep]
    if len(X) == 1:
        return np.full(len(Xq), y[0]), length
    smoothing = 0.0
    for _ in range(_SMOOTH_TRIES + 1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # degree -1, see docstring
                warnings.simplefilter("error", LinAlgWarning)
                interp = RBFInterpolator(X, y, kernel="multiquadric", epsilon=1.0 / length,
                                         smoothing=smoothing, degree=-1)
                values = interp(Xq)
            if np.all(np.isfinite(values)) and (smoothing > 0 or _reproduces(interp(X), y)):
                return values, length
        except (LinAlgError, LinAlgWarning, ValueError):
            pass
        smoothing += _SMOOTH_STEP
    d2 = ((Xq**2).sum(1)[:, None] + (X**2).sum(1)[None, :] - 2.0 * Xq @ X.T)
    return y[np.argmin(d2, axis=1)], length


def _reproduces(fitted: np.ndarray, y: np.ndarray) -> bool:
    """Whether a solve's values at the told points are the told values (a residual check)."""
    scale = max(float(np.max(np.abs(y))), 1e-300)
    return bool(np.max(np.abs(fitted - y)) <= _RESIDUAL_RTOL * scale)


def _multiquadric(d2: np.ndarray, epsilon: float) -> np.ndarray:
    """scipy's ``multiquadric`` kernel, ``-sqrt(1 + (epsilon r)^2)``, of squared distances."""
    return -np.sqrt(d2 * epsilon**2 + 1.0)


def rbf_from_distances(S: np.ndarray, y: np.ndarray, Q2: np.ndarray,
                       length: float) -> np.ndarray:
    """:func:`rbf_estimate`'s interpolant from squared distances.

    ``S`` (n, n) between the told points, ``Q2`` (m, n) from the queries to them, ``length``
    the RBF length scale: the system ``K(S) c = y`` that scipy's ``RBFInterpolator`` solves
    (LAPACK ``gesv``, no polynomial), with the same merging of repeated points, residual
    check, smoothing retries and nearest-point fallback.
    """
    keep, y = distinct_points(np.argmax(S == 0.0, axis=1), y)  # the diagonal is 0
    S, Q2 = S[np.ix_(keep, keep)], Q2[:, keep]
    if len(y) == 1:
        return np.full(len(Q2), y[0])
    epsilon = 1.0 / length
    smoothing = 0.0
    for _ in range(_SMOOTH_TRIES + 1):
        K = _multiquadric(S, epsilon)
        K[np.diag_indices_from(K)] += smoothing
        _, _, coeffs, info = dgesv(K, y)
        if info == 0 and _reproduces(K @ coeffs, y):
            values = _multiquadric(Q2, epsilon) @ coeffs
            if np.all(np.isfinite(values)):
                return values
        smoothing += _SMOOTH_STEP
    return y[np.argmin(Q2, axis=1)]


class PairwiseDistances:
    """Squared Euclidean distances between the told points, extended as points arrive.

    Row ``i`` is computed from points ``0..i-1`` alone, so a rebuild from the history holds
    the same values; the square array grows by doubling.
    """

    def __init__(self) -> None:
        self._S = np.zeros((0, 0))
        self.n = 0

    def update(self, X: np.ndarray) -> np.ndarray:
        """The (n, n) distances of the rows of ``X``, whose first rows were seen before."""
        n = len(X)
        if n > len(self._S):
            grown = np.zeros((max(n, 2 * len(self._S)),) * 2)
            grown[: self.n, : self.n] = self._S[: self.n, : self.n]
            self._S = grown
        for i in range(self.n, n):
            row = ((X[:i] - X[i]) ** 2).sum(axis=1)
            self._S[i, :i] = row
            self._S[:i, i] = row
        self.n = n
        return self._S[:n, :n]


@dataclass(frozen=True)
class CobBOOptions(Options):
    """Options of :class:`CobBO`; field defaults are the practical preset (paper preset in
    brackets where it differs).

    alpha, beta: multiplicative weight ratios of eq. (2) [2.0, 1.1].
    block_sizes: block sizes, each capped at D, drawn uniformly among the
        distinct capped values [(1, 4, 6, 8, 12, 14, 16, 22, 24, 26, 30)].
    escape_patience: consecutive failures before escaping the pivot (App.
        B.1) [None: max(20, 2 ceil(D/15) ceil(tau))].
    escape_candidates: above-median points sampled when escaping [5].
    acquisition: "ei" or "ucb" ["ei"]; ucb_beta: UCB's beta [4.0].
    virtual_noise: maximal extra noise variance of virtual points [0.05].
    max_gp_points: stage-2 GP data cap (nearest to the pivot), None = no cap
        [100 (paper None)].
    n_candidates, restarts: acquisition scoring points and L-BFGS-B starts [256, 5].
    fit_maxiter: stage-2 hyperparameter fit iterations [30].
    local_radius: half-width of the acquisition box around the pivot in each
        block coordinate when there is no trust region; None searches the
        whole block box [0.2 (paper None)].
    trust_region: confine the acquisition to TuRBO's adaptive box around the
        pivot instead [True (paper False)]; tr_length_init: its initial side [0.8];
        failure_tol: failures before it halves [None: max(4, min(D, 16))].
    flat_backoff: draw a new block as soon as a query in the current one
        returns exactly the pivot's value [True (paper False)]
        (docs/algorithms/cobbo.md, "Flat blocks").
    n_init, init_centre, init_design, line_search: :class:`~hdbo_engine.options.Options`
        [the design-size rule from 20 points, the centre, the axis design (paper: 20
        uniform points, no centre)].
    """

    init_design: str = "axis"
    alpha: float = 2.0
    beta: float = 1.1
    block_sizes: tuple[int, ...] = BLOCK_SIZES
    escape_patience: int | None = None
    escape_candidates: int = 5
    acquisition: str = "ei"
    ucb_beta: float = 4.0
    virtual_noise: float = 0.05
    max_gp_points: int | None = 100
    n_candidates: int = 256
    restarts: int = 5
    fit_maxiter: int = 30
    local_radius: float | None = 0.2
    trust_region: bool = True
    tr_length_init: float = 0.8
    failure_tol: int | None = None
    flat_backoff: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        check_bool("trust_region", self.trust_region)
        check_bool("flat_backoff", self.flat_backoff)
        check_int("failure_tol", self.failure_tol, 1, optional=True)
        if not is_number(self.tr_length_init) or not 2.0**-7 <= self.tr_length_init <= 1.6:
            raise ValueError(f"tr_length_init: expected a number in [2^-7, 1.6], "
                             f"got {self.tr_length_init!r}")
        if not is_number(self.alpha) or self.alpha <= 1:
            raise ValueError(f"alpha: expected a number > 1, got {self.alpha!r}")
        if not is_number(self.beta) or self.beta <= 1:
            raise ValueError(f"beta: expected a number > 1, got {self.beta!r}")
        try:
            sizes = [s for s in self.block_sizes if is_int(s) and s >= 1]
        except TypeError:
            raise TypeError(f"block_sizes: expected a sequence of ints >= 1, "
                            f"got {self.block_sizes!r}") from None
        if not sizes or len(sizes) != len(self.block_sizes):
            raise ValueError(f"block_sizes: expected a non-empty sequence of ints >= 1, "
                             f"got {self.block_sizes!r}")
        check_int("escape_patience", self.escape_patience, 1, optional=True)
        check_int("max_gp_points", self.max_gp_points, 1, optional=True)
        for arg in ("escape_candidates", "n_candidates", "restarts", "fit_maxiter"):
            check_int(arg, getattr(self, arg), 1)
        if self.acquisition not in ("ei", "ucb"):
            raise ValueError(f"acquisition: expected 'ei' or 'ucb', got {self.acquisition!r}")
        if not is_number(self.ucb_beta) or self.ucb_beta <= 0:
            raise ValueError(f"ucb_beta: expected a number > 0, got {self.ucb_beta!r}")
        if self.local_radius is not None and (not is_number(self.local_radius)
                                              or self.local_radius <= 0):
            raise ValueError(f"local_radius: expected a number > 0 or None, "
                             f"got {self.local_radius!r}")
        if not is_number(self.virtual_noise) or self.virtual_noise < 0:
            raise ValueError(f"virtual_noise: expected a number >= 0, "
                             f"got {self.virtual_noise!r}")


PRESETS: dict[str, CobBOOptions] = {
    "practical": CobBOOptions(),
    "paper": CobBOOptions(max_gp_points=None, local_radius=None, trust_region=False,
                          flat_backoff=False, init_centre=False, init_design="uniform"),
}


class CobBO(Optimizer):
    """CobBO (Tan, Nayman, Wang; Algorithm 2, eqs. (1)-(2), Sec. 3.2, App. B.1).

    See the module docstring for the algorithm and every choice made. Options:
    :class:`CobBOOptions` (by name, or ``options=``); ``preset``: "practical" [default] or
    "paper" (:data:`PRESETS`; docs/algorithms/cobbo.md, "Presets"). ``budget``: T of
    Sec. 3.2 [None: :data:`~hdbo_engine.design.DEFAULT_HORIZON`].
    """

    name = "cobbo"
    default_n_init = 20
    options_class = CobBOOptions
    presets: ClassVar[dict[str, Options]] = PRESETS

    def __init__(self, space: Space | int, *, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: CobBOOptions | None = None, **overrides: Any) -> None:
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         **overrides)
        warn_beyond_measured_scale(type(self).__name__, "cobbo", self.dim, self.budget,
                                   MEASURED_SCALE_COBBO, MEASURED_BUDGET_COBBO)
        o = self.options
        D = self.dim
        if o.trust_region:
            self.trust_region = TrustRegion(
                D, failure_tol=o.failure_tol or max(4, min(D, 16)),
                length_init=float(o.tr_length_init))
        self.block_sizes = np.array(sorted({min(int(s), D) for s in o.block_sizes}))  # capped
        self.tau = backoff_tau(self.horizon, D)
        self.escape_patience = int(o.escape_patience) if o.escape_patience is not None else max(
            20, 2 * math.ceil(D / 15) * math.ceil(self.tau))
        # ---- state rebuilt from the told history (module docstring)
        self.log_w = np.full(D, -math.log(D))  # eq. (2), w_0 = 1/D
        self.pivot: int | None = None  # index of V_t in the history
        self.M = np.inf  # M_t (minimisation)
        self.q = 0  # consecutive failed queries (Alg. 2 line 3)
        self.round = 0
        self.block = self._draw_block(0)
        self.N = 0  # queries in the current block (Sec. 3.2)
        self.P = 0  # consecutive improvements in the current block
        self.penalised: dict[int, float] = {}  # App. B.1 surrogate values of escaped pivots
        self.n_escapes = 0
        self.distances = PairwiseDistances() if D > CACHED_DISTANCES_DIM else None

    # ------------------------------------------------------------- state
    @property
    def preference(self) -> np.ndarray:
        """``pi_t`` of eq. (2): the current preference probability over coordinates."""
        w = np.exp(self.log_w - self.log_w.max())
        return w / w.sum()

    def _draw_block(self, r: int) -> np.ndarray:
        """Block of round ``r``: size uniform over the capped set, coordinates by ``pi_t``."""
        rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                           spawn_key=(COBBO_BLOCKS, r)))
        size = int(rng.choice(self.block_sizes))
        return np.sort(rng.choice(self.dim, size=size, replace=False, p=self.preference))

    def _new_round(self) -> None:
        self.round += 1
        self.block = self._draw_block(self.round)
        self.N = self.P = 0

    def surrogate_values(self, n: int | None = None) -> np.ndarray:
        """Values of the first ``n`` [all] told points for the surrogates.

        Failures imputed (``util.impute_failures``), escaped pivots penalised.
        """
        y = impute_failures(self.model_values[:n])
        for i, v in self.penalised.items():
            if i < len(y):
                y[i] = max(y[i], v)
        return y

    def _on_tell(self, X: np.ndarray, y: np.ndarray, metas: list[dict[str, Any]]) -> None:
        first = self.n_told - len(y)
        for k, (yk, meta) in enumerate(zip(y, metas, strict=True)):
            if self.is_own(meta):  # another's point moves neither pivot nor counts
                self._update(first + k, float(yk), meta)

    def _update(self, i: int, y: float, meta: dict[str, Any]) -> None:
        """Alg. 2 lines 15-20, eq. (2) and the stopping rule for told point ``i``."""
        o = self.options
        improved = bool(np.isfinite(y) and y < self.M)
        flat = o.flat_backoff and bool(np.isfinite(y) and y == self.M)  # "Flat blocks"
        delta = relative_improvement(y, self.M) if np.isfinite(self.M) else np.inf
        if improved:
            self.pivot, self.M = i, y
        block = _meta_block(meta, self.dim)
        if block is None:  # initial design or a point told without an ask
            if improved:
                self.q = 0
            return
        self.log_w[block] += math.log(o.alpha) if improved else -math.log(o.beta)
        self.log_w -= self.log_w.max()
        self.q = 0 if improved else self.q + 1
        if meta.get("round") == self.round:
            self.N += 1
            self.P = self.P + 1 if delta > 0 else 0
            if flat or (self.N >= self.tau and delta <= 0.1 and self.P <= backoff_xi(delta)):
                self._new_round()
        if self.q >= self.escape_patience:
            self._escape(i + 1)

    def _escape(self, n: int) -> None:
        """App. B.1 on the first ``n`` told points: penalise V_t, move it far above median."""
        y = self.surrogate_values(n)
        med = float(np.median(y))
        if self.pivot is not None:
            self.penalised[self.pivot] = max(med, self.penalised.get(self.pivot, -np.inf))
            y[self.pivot] = max(y[self.pivot], med)
        good = np.flatnonzero((y < med) & np.isfinite(self.model_values[:n]))
        good = good[good != self.pivot]
        self.q = 0
        if good.size:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                               spawn_key=(COBBO_ESCAPES, n)))
            pick = rng.choice(good, size=min(self.options.escape_candidates, good.size),
                              replace=False)
            ref = self.X[self.pivot] if self.pivot is not None else self.X[pick[0]]
            j = int(pick[np.argmax(np.linalg.norm(self.X[pick] - ref, axis=1))])
            self.pivot, self.M = j, float(self.merit[j])
            self.n_escapes += 1
        self._new_round()

    # ------------------------------------------------------------- proposal
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        if self.pivot is None or np.isfinite(self.model_values).sum() < 2:
            return [(rng.random(self.dim), {"random": True}) for _ in range(n)]
        C = self.block
        V = self.X[self.pivot]
        Xb, zb, extra = self._subspace_data(V, C)
        fit_maxiter = self.options.fit_maxiter
        gp = GP(len(C), fit_maxiter=fit_maxiter).fit(Xb, -zb, noise=extra)
        meta = {"round": self.round, "block": [int(c) for c in C]}
        fantasy = [p[C] for p in self.pending]
        out = []
        for _ in range(n):
            model = gp
            if fantasy:  # kriging believer on projected pending points
                Fp = np.array(fantasy)
                mean_p = gp.predict(Fp)[0]
                model = GP(len(C), fit_maxiter=fit_maxiter)
                model.params = gp.params
                model.set_data(np.vstack([Xb, Fp]), np.concatenate([-zb, mean_p]),
                               np.concatenate([extra, np.zeros(len(Fp))]))
            yC = self._maximize(model, V[C], np.vstack([Xb, *fantasy]) if fantasy else Xb, rng)
            x = V.copy()
            x[C] = yC
            out.append((x, dict(meta)))
            fantasy.append(yC)
        return out

    def _subspace_data(self, V: np.ndarray, C: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 1 (eq. (1)): virtual points in block coordinates, values, extra noise."""
        X = self.X
        y = self.surrogate_values()
        rest = np.setdiff1d(np.arange(self.dim), C)
        shift = np.linalg.norm(X[:, rest] - V[rest], axis=1)  # projection displacement
        order = np.lexsort((np.arange(len(X)), shift))  # real (shift 0) points first
        _, first = np.unique(X[order][:, C], axis=0, return_index=True)
        keep = order[first]  # distinct virtual points, a real observation when one coincides
        dist = np.linalg.norm(X[keep][:, C] - V[C], axis=1)
        keep = keep[np.argsort(dist, kind="stable")[: self.options.max_gp_points]]
        is_real = shift[keep] <= 1e-12
        values = y[keep].copy()
        length = 1.0
        if (~is_real).any():
            virtual = keep[~is_real]
            if self.distances is None:
                Xq = np.tile(V, (len(virtual), 1))
                Xq[:, C] = X[virtual][:, C]
                values[~is_real], length = rbf_estimate(X, y, Xq)
            else:  # a virtual point is V with the block of a told point
                XC = X[:, C]
                Q2 = shift**2 + ((XC[virtual][:, None, :] - XC[None, :, :]) ** 2).sum(axis=2)
                length = rbf_length(X)
                values[~is_real] = rbf_from_distances(self.distances.update(X), y, Q2, length)
        noise = float(self.options.virtual_noise)
        extra = np.where(is_real, 0.0, noise * np.minimum(1.0, (shift[keep] / length) ** 2))
        return X[keep][:, C], values, extra

    def _maximize(self, gp: GP, v_block: np.ndarray, avoid: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """Alg. 2 line 13: acquisition maximiser inside the block's box.

        The box is :func:`search_box` around the pivot's block (the trust region's side,
        else ``local_radius``, else the whole block cube); ``n_candidates``
        :func:`incumbent_candidates` (perturbations of sd 0.1 of the unit cube's side, not
        the box's) are scored and the best ``restarts`` refined (:func:`maximize_candidates`).
        The best L-BFGS-B result that differs from every row of ``avoid`` (the
        points already in the subspace, e.g. the pivot itself) is returned; if
        all coincide, a uniform point of the local box.
        """
        o = self.options
        d = len(v_block)
        post = gp.subspace(np.arange(d), v_block[None, :])
        best = float(np.max(gp.z))

        def acq(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mean, var, dmean, dvar = post(Y, np.zeros(len(Y), dtype=int))
            if o.acquisition == "ucb":
                return ucb(mean, var, dmean, dvar, float(o.ucb_beta))
            return expected_improvement(mean, var, dmean, dvar, best)

        lo, hi = search_box(d, v_block, self.trust_region, o.local_radius)
        cand = incumbent_candidates(v_block, lo, hi, o.n_candidates, rng, relative=False)
        Y, vals = maximize_candidates(cand, lambda C: acq(C)[0], o.restarts,
                                      lambda starts: lbfgsb_batch(acq, starts, lo, hi))
        for k in np.argsort(-vals, kind="stable"):
            if np.min(np.abs(avoid - Y[k]).max(axis=1)) > 1e-9:
                return Y[k]
        return lo + rng.random(d) * (hi - lo)


def _meta_block(meta: dict[str, Any], dim: int) -> np.ndarray | None:
    """The block stored in a proposal's meta, or None when absent or malformed."""
    block = meta.get("block") if isinstance(meta, dict) else None
    if not isinstance(block, list) or not block:
        return None
    if not all(is_int(c) and 0 <= c < dim for c in block):
        return None
    return np.unique(np.asarray(block, dtype=int))
