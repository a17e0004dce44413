"""CobBO: coordinate backoff Bayesian optimisation with two-stage kernels.

Tan, Nayman, Wang, "CobBO: Coordinate Backoff Bayesian Optimization with
Two-Stage Kernels" (``shared/seeds/002_...``). The paper maximises; the engine
minimises, so "improvement" below means a *lower* value and every formula is
applied to ``-y``.

Algorithm 2, as implemented
---------------------------
* **Initial design** (lines 1-4): ``n_init`` points [20, the paper's Sec.
  4.1 setting], the cube's centre then uniform draws (the paper's are all
  uniform; ``base``, "Initial design"); the pivot ``V`` is the best of them with value
  ``M``; the failure counter ``q = 0``; the preference weights are uniform,
  ``w_0,j = 1/D``.
* **Coordinate block** (line 7, Sec. 3.1, Sec. 4.1): the block size is drawn
  uniformly from the distinct values of ``{1,4,6,8,12,14,16,22,24,26,30}``
  each capped at ``D``; the coordinates are then drawn without replacement
  with probabilities ``pi_t = w_t / sum(w_t)``. The subspace ``Omega_t`` is
  ``{x : x_j = V_j for j not in C_t}``, so it always contains ``V``.
* **Stage 1** (lines 6-9, eq. (1)): every told point is projected onto
  ``Omega_t`` (block coordinates kept, the rest taken from ``V``);
  duplicates are dropped, keeping a real observation where one coincides.
  Values of the virtual points come from an RBF interpolant of all told
  points in the full space (``scipy.interpolate.RBFInterpolator``,
  multiquadric kernel ``sqrt(1 + (r/l)^2)`` with ``l`` the "average
  distance between nodes" of scipy's legacy ``Rbf``, which the paper's code
  used: ``(prod(edges of the bounding box) / n)^(1/D)``; no polynomial tail,
  as in legacy ``Rbf``). Measured on Rastrigin-50D, Levy-100D and Ackley-100D
  histories (one seed, ``/tmp`` probe), this estimates virtual points several times more accurately
  than ``l`` = the RMS inter-point distance (which in high dimension is far
  larger) or a constant tail. When the interpolation system is singular or
  ill-conditioned (LinAlgError, LinAlgWarning or non-finite output) the
  smoothing parameter is raised by 0.02 and the fit retried, as in App. B
  [up to 10 times; after that each virtual point takes the value of its
  nearest observed point, the paper's Sec. 4.1 alternative]. Real
  observations lying in ``Omega_t`` keep their observed values.
* **Virtual points' variance** (line 12): the RBF gives no variance, so each
  virtual point gets an extra noise variance in the stage-2 GP of
  ``virtual_noise * min(1, (delta / l)^2)`` (standardised output units),
  where ``delta`` is how far the projection moved the point and ``l`` the
  RBF length scale above [virtual_noise = 0.05]. Real observations get none.
* **Stage 2** (lines 10-13): a GP with Matern-5/2 ARD kernel on the block's
  coordinates only (:class:`hdbo_engine.gp.GP`, hyperparameters fitted by
  MAP from the prior mode at every ask, ``fit_maxiter`` [30] iterations),
  conditioned on the virtual and real points of ``Omega_t``. At most
  ``max_gp_points`` [100] of them are used: those nearest to ``V`` in the
  block coordinates (the pivot always included), a compute cap the paper
  does not need with its smaller budgets. The acquisition [expected
  improvement over the best modelled value; ``acquisition="ucb"`` gives
  ``mu + sqrt(ucb_beta) sigma``, ucb_beta = 4] is maximised by batched
  multi-start L-BFGS-B (:func:`hdbo_engine.maximize.lbfgsb_batch`) from the
  ``restarts`` [5] best of ``n_candidates`` [256] points (V's block
  coordinates, Gaussian perturbations of them with sd 0.1, uniform draws)
  over the block's box intersected with the cube of half-width
  ``local_radius`` [0.2] around V's block coordinates. The paper's text
  maximises over the whole block box (``local_radius=None``); its released
  code confines the search with trust regions. Measured here (seed 0,
  ``/tmp`` probes, not a benchmark, on the earlier domains ``[-5.12,
  5.12]^50`` and ``[-10, 10]^100`` with ``max_gp_points=200``): whole box vs
  0.2 gave 705 vs 525 on Rastrigin-50D after 200 evaluations and 1019 vs
  469 on Levy-100D after 250 (random search: 740 and 883): the RBF
  estimates of far virtual points are too rough for the GP to extrapolate
  across the whole box. The proposal is the best L-BFGS-B result that is
  not already a point of the subspace data (e.g. ``V`` itself).
* **Trust region** [``trust_region=True`` in the practical preset]: the
  fixed ``local_radius`` box is replaced by TuRBO's adaptive one
  (:mod:`hdbo_engine.trust_region`): side ``tr_length_init`` [0.8] around V's
  block coordinates, doubled after 3 consecutive improvements, halved after
  ``tr_failure_tol`` [``max(4, min(D, 16))``] consecutive failures, reset
  when below 2^-7. Measured on the ``hd`` problems, seed 0, 500 evaluations
  (``python /tmp``-style ask/tell probe, one thread), final best value,
  fixed radius 0.2 -> trust region: shifted Levy-100D 182.6 -> 102.0,
  shifted Ackley-100D 10.42 -> 8.01, rotated Rastrigin-100D 1864 -> 1528;
  on Levy, side 0.4 / failure tolerance 16 gave 148, 0.8 / 8: 217,
  0.8 / 32: 126, 1.6 / 16: 123, and a fixed radius of 0.1: 152.
* **Pivot update** (lines 15-19): a told value below ``M`` moves ``V`` there,
  sets ``M`` to it and ``q = 0``; otherwise ``q += 1``.
* **Preference update** (eq. (2)): for a point proposed in block ``C``,
  ``w_j *= alpha`` for ``j in C`` on improvement over ``M_{t-1}``, and
  ``w_j /= beta`` otherwise [alpha = 2.0, beta = 1.1]; weights are kept in
  log space and renormalised, which leaves ``pi_t`` unchanged.
* **Backoff stopping rule** (Sec. 3.2): ``Delta_t = (M_{t-1} - y_t) /
  max(|M_{t-1}|, 0.1)`` (the paper's formula for ``-y``), ``P_t`` the number
  of consecutive improvements (``Delta > 0``) and ``N_t`` the number of
  queries in the current subspace, both counted within the current block;
  ``tau = T/1000 + {1: D<20, 2: D<70, 3: D<100, 4: D<200, 5: otherwise}``
  and ``xi = 4 if Delta_t < 0.05, 2 if Delta_t <= 0.1, 0 otherwise``. A new
  block is drawn when ``N_t >= tau and Delta_t <= 0.1 and P_t <= xi``.
  ``T`` is the constructor's ``budget``; when it is ``None`` [T = 1000].
* **Escaping local optima** (App. B.1): after ``escape_patience``
  consecutive failures [``max(20, 2 ceil(D/15) ceil(tau))``: about two
  passes of average-size blocks over all coordinates, each used for up to
  ``tau`` queries], the value recorded for ``V`` *in the surrogates* is
  raised to the median of the modelled values (the true history and
  ``best`` are untouched), ``escape_candidates`` [5] points are sampled from
  those better than the median, the one furthest from ``V`` becomes the new
  pivot with ``M`` its value, ``q = 0``, and a new block is drawn (the old
  subspace need not contain the new pivot).
* **Failed evaluations** (non-finite values) count as failures for the
  pivot, the weights and the stopping rule, and enter the surrogates as the
  worst finite value seen before them (``base.impute_failures``).

Presets
-------
``preset="paper"``: the paper's Algorithm 2 as written: 20 uniform initial
points (no centre), the acquisition over the whole block box
(``local_radius=None``, no trust region) and every virtual and real point
of the subspace in the stage-2 GP (``max_gp_points=None``), no flat
backoff; the other constants above are the paper's in both presets.
``preset="practical"`` [default]: the centre first, the axis initial design
(``init_design="axis"``), the trust region, at most 100 stage-2 points, the
flat backoff ("Flat blocks").

The axis design (``init_design="axis"``, ``base``, "Initial design": the
centre, then a greedy pass of plus / minus 1/6 steps along the coordinates,
``max(20, min(2 D + 1, budget // 4))`` points) replaced uniform draws in
session 15. Medians over seeds 0-2 on ``hd`` (``hdbo bench --suite <hd, the
eleven 500-evaluation groups> --seeds 3 --methods msucb,cobbo,goucb,bkb``,
against the committed cells of the same seeds; session 15), uniform -> axis:
shifted Ackley 9.21 -> 7.75, shifted Levy 136.0 -> 122.0, shifted
Styblinski-Tang -843 -> -2961, rotated Rastrigin 1528 -> 1547, rotated Rosenbrock 4.19e5
-> 1.63e5, scattered Hartmann6 -3.308 -> -3.299, LunarLander -231.4 -> -273.4,
Swimmer -359.9 -> -357.2, Hopper -1027.9 -> -1131.1, rover 5.63 -> 2.74,
HalfCheetah -488 -> -1536: 8 of 11 medians and 24 of 33 cells better.

The design's line search (``line_search``, ``base``, "Line search after the
design") was added in session 17. Medians over seeds 0-2 on ``hd`` (the same
command, against session 16's cells), without -> with: shifted Ackley 7.85 ->
7.01, shifted Levy 91.3 -> 95.4, Styblinski-Tang -2847 -> -3186, rotated
Rastrigin 1587 -> 1564, rotated Rosenbrock 1.38e5 -> 6.70e4, scattered
Hartmann6 -3.292 -> -2.353 (seeds 1-2 ended in Hartmann6's poorer basin, seed 0
was already there), LunarLander -266.4 -> -264.8, Swimmer -358.3 -> -358.7,
Hopper -1083 -> -1062, HalfCheetah -1095 -> -1437, rover 2.16 -> -0.24: 7 of 11
medians and 18 of 33 cells better.

Flat blocks
-----------
[``flat_backoff=True`` in the practical preset; the paper has no such rule.]
A query of the current block whose value equals the pivot's value *exactly*
ends the block at once: a new block is drawn, as if the stopping rule had
fired. Such a query moved only coordinates the objective ignores at ``V``, so
the block is flat there, and Sec. 3.2's rule would spend ``ceil(tau)``
queries on it (6 at D = 300, T = 500). The tie still counts as a failure for
the pivot and the weights (lines 15-19, eq. (2)); the trust region does not
count it (:mod:`hdbo_engine.trust_region`, ties). Diagnosis on ``hd``'s
scattered Hartmann6 (6 active coordinates of 300; seed 1): about three blocks
in four hold no active coordinate, the preference weights on the six active
ones were still 2-3% after 200 evaluations, and the failures of the flat
blocks had halved the trust region to side 0.0125 by evaluation 240; CobBO's
best was -1.087 there and -1.712 at the end. Measured (``hdbo bench --suite
<hd's scattered-Hartmann6 and LunarLander groups> --seeds 3 --methods
cobbo,goucb,bkb,msucb``, session 18, against the committed cells of the same
seeds), before -> after, both rules together: scattered Hartmann6 -2.502 /
-1.712 / -2.353 -> -3.321 / -3.283 / -3.310 (median -2.353 -> -3.310; TPE
-3.258, random search -2.545); LunarLander, where equal returns come from
policies that take the same actions, median -264.8 -> -266.7 over seeds 0-2
and -264.9 -> -263.9 over seeds 0-7 (four of eight seeds better: neutral);
``d100``'s Hartmann6 (the six active coordinates first; 5 seeds) -3.3203 ->
-3.3194 (level). Where no value repeats exactly, nothing changes (shifted
Ackley, seed 0, 250 evaluations, reproduces its committed cell).

State from history
------------------
A model proposal's ``meta`` is ``{"round": r, "block": [coords]}``. The
weights, pivot, counters and the current block are updated point by point in
:meth:`CobBO._on_tell` from the told values and these metas, and a new block
for round ``r`` is drawn (when the stopping rule or an escape asks for it)
from a generator seeded by ``(seed, r)`` with the current ``pi``; escape
sampling uses a generator seeded by ``(seed, n)``, ``n`` the number of told
points at the escape (escapes use only those first ``n`` points). Everything is
therefore a function of the told history, so :meth:`Optimizer.from_history`
rebuilds the exact state. Told points without a block in their meta
(initial design, points told without an ask) only move the pivot. Points
proposed in an older round still update the weights with their own block,
but count toward ``N_t``/``P_t`` only in their own round.

Parallel proposals (``ask(n > 1)`` or pending points) all come from the
current subspace; pending points are projected onto it and enter the
stage-2 GP with its posterior mean as value (kriging believer,
hyperparameters fixed), which steers later proposals away from them.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, ClassVar

import numpy as np
from scipy.interpolate import RBFInterpolator
from scipy.linalg import LinAlgError, LinAlgWarning

from ..acquisition import expected_improvement, ucb
from ..base import FROM_PRESET, Optimizer, impute_failures, is_int, is_number
from ..gp import GP
from ..maximize import lbfgsb_batch, top_k
from ..space import Space
from ..trust_region import TrustRegion

BLOCK_SIZES = (1, 4, 6, 8, 12, 14, 16, 22, 24, 26, 30)  # Sec. 4.1
DEFAULT_BUDGET = 1000  # T when the budget is unknown
_BLOCK_STREAM = 104_729  # separates block draws from the ask streams
_ESCAPE_STREAM = 130_363  # separates escape sampling from the ask streams
_SMOOTH_STEP, _SMOOTH_TRIES = 0.02, 10  # App. B smoothing fallback


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


def rbf_estimate(X: np.ndarray, y: np.ndarray, Xq: np.ndarray) -> tuple[np.ndarray, float]:
    """Stage-1 estimate at ``Xq``: multiquadric RBF interpolant of (X, y) (module docstring).

    Returns the estimates and the RBF length scale (:func:`rbf_length`).
    """
    length = rbf_length(X)
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
            if np.all(np.isfinite(values)):
                return values, length
        except (LinAlgError, LinAlgWarning, ValueError):
            pass
        smoothing += _SMOOTH_STEP
    d2 = ((Xq**2).sum(1)[:, None] + (X**2).sum(1)[None, :] - 2.0 * Xq @ X.T)
    return y[np.argmin(d2, axis=1)], length


class CobBO(Optimizer):
    """CobBO (Tan, Nayman, Wang; Algorithm 2, eqs. (1)-(2), Sec. 3.2, App. B.1).

    See the module docstring for the algorithm and every choice made.

    Parameters (defaults in brackets)
    ---------------------------------
    alpha, beta: multiplicative weight ratios of eq. (2) [2.0, 1.1].
    block_sizes: block sizes, each capped at D, drawn uniformly among the
        distinct capped values [(1, 4, 6, 8, 12, 14, 16, 22, 24, 26, 30)].
    escape_patience: consecutive failures before escaping the pivot (App.
        B.1) [None: max(20, 2 ceil(D/15) ceil(tau))].
    escape_candidates: above-median points sampled when escaping [5].
    acquisition: "ei" or "ucb" ["ei"]; ucb_beta: UCB's beta [4.0].
    virtual_noise: maximal extra noise variance of virtual points [0.05].
    max_gp_points: stage-2 GP data cap (nearest to the pivot), None = no cap
        [practical 100, paper None].
    local_radius: half-width of the acquisition box around the pivot in each
        block coordinate when there is no trust region; None searches the
        whole block box [practical 0.2, paper None].
    trust_region: confine the acquisition to TuRBO's adaptive box around the
        pivot instead [practical True, paper False]; tr_length_init: its
        initial side [0.8]; tr_failure_tol: failures before it halves
        [None: max(4, min(D, 16))].
    flat_backoff: draw a new block as soon as a query in the current one
        returns exactly the pivot's value [practical True, paper False]
        (module docstring, "Flat blocks").
    preset: "practical" [default] or "paper" (module docstring, "Presets").
    n_candidates, restarts: acquisition scoring points and L-BFGS-B starts [256, 5].
    fit_maxiter: stage-2 hyperparameter fit iterations [30].
    budget: T of Sec. 3.2 [None: 1000]. n_init: initial design [20].
    """

    name = "cobbo"
    default_n_init = 20
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"max_gp_points": 100, "local_radius": 0.2, "trust_region": True,
                      "flat_backoff": True, "init_design": "axis"},
        "paper": {"max_gp_points": None, "local_radius": None, "trust_region": False,
                  "flat_backoff": False, "n_init": 20, "init_centre": False,
                  "init_design": "uniform"},
    }

    def __init__(
        self,
        space: Space | int,
        *,
        alpha: float = 2.0,
        beta: float = 1.1,
        block_sizes: tuple[int, ...] = BLOCK_SIZES,
        escape_patience: int | None = None,
        escape_candidates: int = 5,
        acquisition: str = "ei",
        ucb_beta: float = 4.0,
        virtual_noise: float = 0.05,
        max_gp_points: int | None = FROM_PRESET,
        n_candidates: int = 256,
        restarts: int = 5,
        fit_maxiter: int = 30,
        local_radius: float | None = FROM_PRESET,
        trust_region: bool = FROM_PRESET,
        tr_length_init: float = 0.8,
        tr_failure_tol: int | None = None,
        flat_backoff: bool = FROM_PRESET,
        **kwargs: Any,
    ) -> None:
        super().__init__(space, **kwargs)
        D = self.dim
        cfg = self._from_preset(max_gp_points=max_gp_points, local_radius=local_radius,
                                trust_region=trust_region, flat_backoff=flat_backoff)
        max_gp_points, local_radius = cfg["max_gp_points"], cfg["local_radius"]
        for arg in ("trust_region", "flat_backoff"):
            if not isinstance(cfg[arg], (bool, np.bool_)):
                raise TypeError(f"{arg}: expected a bool, got {cfg[arg]!r}")
        self.flat_backoff = bool(cfg["flat_backoff"])
        if tr_failure_tol is not None and (not is_int(tr_failure_tol) or tr_failure_tol < 1):
            raise ValueError(f"tr_failure_tol: expected an int >= 1 or None, "
                             f"got {tr_failure_tol!r}")
        if not is_number(tr_length_init) or not 2.0**-7 <= tr_length_init <= 1.6:
            raise ValueError(f"tr_length_init: expected a number in [2^-7, 1.6], "
                             f"got {tr_length_init!r}")
        if cfg["trust_region"]:
            self.trust_region = TrustRegion(
                D, failure_tol=tr_failure_tol or max(4, min(D, 16)),
                length_init=float(tr_length_init))
        if not is_number(alpha) or alpha <= 1:
            raise ValueError(f"alpha: expected a number > 1, got {alpha!r}")
        if not is_number(beta) or beta <= 1:
            raise ValueError(f"beta: expected a number > 1, got {beta!r}")
        try:
            sizes = [int(s) for s in block_sizes if is_int(s) and s >= 1]
        except TypeError:
            raise TypeError(f"block_sizes: expected a sequence of ints >= 1, "
                            f"got {block_sizes!r}") from None
        if not sizes or len(sizes) != len(block_sizes):
            raise ValueError(f"block_sizes: expected a non-empty sequence of ints >= 1, "
                             f"got {block_sizes!r}")
        if escape_patience is not None and (not is_int(escape_patience)
                                             or escape_patience < 1):
            raise ValueError(f"escape_patience: expected an int >= 1 or None, "
                             f"got {escape_patience!r}")
        if max_gp_points is not None and (not is_int(max_gp_points) or max_gp_points < 1):
            raise ValueError(f"max_gp_points: expected an int >= 1 or None, "
                             f"got {max_gp_points!r}")
        for arg, val in (("escape_candidates", escape_candidates), ("n_candidates", n_candidates),
                         ("restarts", restarts), ("fit_maxiter", fit_maxiter)):
            if not is_int(val) or val < 1:
                raise ValueError(f"{arg}: expected an int >= 1, got {val!r}")
        if acquisition not in ("ei", "ucb"):
            raise ValueError(f"acquisition: expected 'ei' or 'ucb', got {acquisition!r}")
        if not is_number(ucb_beta) or ucb_beta <= 0:
            raise ValueError(f"ucb_beta: expected a number > 0, got {ucb_beta!r}")
        if local_radius is not None and (not is_number(local_radius) or local_radius <= 0):
            raise ValueError(f"local_radius: expected a number > 0 or None, "
                             f"got {local_radius!r}")
        if not is_number(virtual_noise) or virtual_noise < 0:
            raise ValueError(f"virtual_noise: expected a number >= 0, got {virtual_noise!r}")
        self.alpha, self.beta = float(alpha), float(beta)
        self.block_sizes = np.array(sorted({min(s, D) for s in sizes}))
        self.tau = backoff_tau(self.budget or DEFAULT_BUDGET, D)
        self.escape_patience = int(escape_patience) if escape_patience is not None else max(
            20, 2 * math.ceil(D / 15) * math.ceil(self.tau))
        self.escape_candidates = int(escape_candidates)
        self.acquisition, self.ucb_beta = acquisition, float(ucb_beta)
        self.virtual_noise = float(virtual_noise)
        self.local_radius = None if local_radius is None else float(local_radius)
        self.max_gp_points = None if max_gp_points is None else int(max_gp_points)
        self.n_candidates = int(n_candidates)
        self.restarts, self.fit_maxiter = int(restarts), int(fit_maxiter)
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

    # ------------------------------------------------------------- state
    @property
    def preference(self) -> np.ndarray:
        """``pi_t`` of eq. (2): the current preference probability over coordinates."""
        w = np.exp(self.log_w - self.log_w.max())
        return w / w.sum()

    def _draw_block(self, r: int) -> np.ndarray:
        """Block of round ``r``: size uniform over the capped set, coordinates by ``pi_t``."""
        rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                           spawn_key=(_BLOCK_STREAM, r)))
        size = int(rng.choice(self.block_sizes))
        return np.sort(rng.choice(self.dim, size=size, replace=False, p=self.preference))

    def _new_round(self) -> None:
        self.round += 1
        self.block = self._draw_block(self.round)
        self.N = self.P = 0

    def surrogate_values(self, n: int | None = None) -> np.ndarray:
        """Values of the first ``n`` [all] told points for the surrogates.

        Failures imputed (``base.impute_failures``), escaped pivots penalised.
        """
        y = impute_failures(self.y[:n])
        for i, v in self.penalised.items():
            if i < len(y):
                y[i] = max(y[i], v)
        return y

    def _on_tell(self, X: np.ndarray, y: np.ndarray, metas: list[dict[str, Any]]) -> None:
        first = self.n_told - len(y)
        for k, (yk, meta) in enumerate(zip(y, metas, strict=True)):
            self._update(first + k, float(yk), meta)

    def _update(self, i: int, y: float, meta: dict[str, Any]) -> None:
        """Alg. 2 lines 15-20, eq. (2) and the stopping rule for told point ``i``."""
        improved = bool(np.isfinite(y) and y < self.M)
        flat = self.flat_backoff and bool(np.isfinite(y) and y == self.M)  # "Flat blocks"
        delta = relative_improvement(y, self.M) if np.isfinite(self.M) else np.inf
        if improved:
            self.pivot, self.M = i, y
        block = _meta_block(meta, self.dim)
        if block is None:  # initial design or a point told without an ask
            if improved:
                self.q = 0
            return
        self.log_w[block] += math.log(self.alpha) if improved else -math.log(self.beta)
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
        good = np.flatnonzero((y < med) & np.isfinite(self.y[:n]))
        good = good[good != self.pivot]
        self.q = 0
        if good.size:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                               spawn_key=(_ESCAPE_STREAM, n)))
            pick = rng.choice(good, size=min(self.escape_candidates, good.size), replace=False)
            ref = self.X[self.pivot] if self.pivot is not None else self.X[pick[0]]
            j = int(pick[np.argmax(np.linalg.norm(self.X[pick] - ref, axis=1))])
            self.pivot, self.M = j, float(self.y[j])
            self.n_escapes += 1
        self._new_round()

    # ------------------------------------------------------------- proposal
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        if self.pivot is None or np.isfinite(self.y).sum() < 2:
            return [(rng.random(self.dim), {"random": True}) for _ in range(n)]
        C = self.block
        V = self.X[self.pivot]
        Xb, zb, extra = self._subspace_data(V, C)
        gp = GP(len(C), fit_maxiter=self.fit_maxiter).fit(Xb, -zb, noise=extra)
        meta = {"round": self.round, "block": [int(c) for c in C]}
        fantasy = [p[C] for p in self.pending]
        out = []
        for _ in range(n):
            model = gp
            if fantasy:  # kriging believer on projected pending points
                Fp = np.array(fantasy)
                mean_p = gp.predict(Fp)[0]
                model = GP(len(C), fit_maxiter=self.fit_maxiter)
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
        keep = keep[np.argsort(dist, kind="stable")[: self.max_gp_points]]
        is_real = shift[keep] <= 1e-12
        values = y[keep].copy()
        length = 1.0
        if (~is_real).any():
            Xq = np.tile(V, (int((~is_real).sum()), 1))
            Xq[:, C] = X[keep[~is_real]][:, C]
            values[~is_real], length = rbf_estimate(X, y, Xq)
        extra = np.where(is_real, 0.0,
                         self.virtual_noise * np.minimum(1.0, (shift[keep] / length) ** 2))
        return X[keep][:, C], values, extra

    def _maximize(self, gp: GP, v_block: np.ndarray, avoid: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """Alg. 2 line 13: acquisition maximiser inside the block's box.

        The best L-BFGS-B result that differs from every row of ``avoid`` (the
        points already in the subspace, e.g. the pivot itself) is returned; if
        all coincide, a uniform point of the local box.
        """
        d = len(v_block)
        post = gp.subspace(np.arange(d), v_block[None, :])
        best = float(np.max(gp.z))

        def acq(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mean, var, dmean, dvar = post(Y, np.zeros(len(Y), dtype=int))
            if self.acquisition == "ucb":
                return ucb(mean, var, dmean, dvar, self.ucb_beta)
            return expected_improvement(mean, var, dmean, dvar, best)

        lo, hi = np.zeros(d), np.ones(d)
        if self.trust_region is not None:
            lo = np.maximum(lo, v_block - self.trust_region.length / 2)
            hi = np.minimum(hi, v_block + self.trust_region.length / 2)
        elif self.local_radius is not None:
            lo = np.maximum(lo, v_block - self.local_radius)
            hi = np.minimum(hi, v_block + self.local_radius)
        c = self.n_candidates
        n_local = c // 4
        local = np.clip(v_block + rng.normal(0.0, 0.1, (n_local, d)), lo, hi)
        uniform = lo + rng.random((c - 1 - n_local, d)) * (hi - lo)
        cand = np.vstack([v_block[None, :], local, uniform])
        Y0 = cand[top_k(acq(cand)[0], self.restarts)]
        Y, vals = lbfgsb_batch(acq, Y0, lo, hi)
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
