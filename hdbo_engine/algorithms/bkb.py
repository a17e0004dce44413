"""BKB: budgeted kernelized bandit with adaptive Nyström sketching.

Paper: Calandriello, Carratino, Lazaric, Valko, Rosasco, "Gaussian Process
Optimization with Adaptive Sketching: Scalable and No Regret", COLT 2019. The
paper maximises a reward; the engine minimises, so the model is fitted to ``-y``
(``docs/ARCHITECTURE.md``) and every formula below is the paper's. The paper
mapping, every departure with its measurement, and what was tried and not kept:
``docs/algorithms/bkb.md``.

Implemented (Sec. 3.1, Fig. 1):

* Dictionary ``S_t`` (a subset of the evaluated locations) and the Nyström embedding
  ``z_t(x) = (K_S^{1/2})^+ k_S(x)``; ``V_t = Z_t^T Z_t + lambda I``.
* DTC posterior (the two displays before eq. (4)):
  ``mu~_t(x) = z(x)^T V_t^{-1} Z_t^T y_t``,
  ``sigma~_t^2(x) = (k(x, x) - z(x)^T Z_t^T Z_t V_t^{-1} z(x)) / lambda``.
* Eq. (4): ``u~_t = mu~_t + beta~_t sigma~_t``, maximised over the arms or, in the
  continuous box (App. A), over candidates.
* Fig. 1: after each evaluation every evaluated point enters ``S_{t+1}`` with
  probability ``p = min(1, q_bar sigma~_t^2(x_i))``.
* Sec. 4 theorem, App. D:
  ``beta~_t = 2 xi sqrt(alpha log(kappa^2 t) sum_s sigma~_t^2(x_s) + log(1/delta))
  + (1 + 1/sqrt(1 - eps)) sqrt(lambda) F``, ``alpha = (1+eps)/(1-eps)``
  (:func:`bkb_beta`); ``q_bar >= 6 alpha log(4T/delta)/eps^2`` (:func:`theoretical_q_bar`).

Defaults, ``preset="paper"`` (Fig. 1 as written): one uniform initial point,
``q_bar = "theory"``, ``resample = "pull"``, ``beta_scale = 1``,
``sum_cap = math.inf``, no trust region, in the box ``candidates = "sobol"`` with
``n_refine = 5``; the kernel is fitted unless ``kernel=`` is given.
``preset="practical"`` [default]: ``q_bar = 4``, ``resample = "location"``,
``beta_scale = 0.05``, ``sum_cap`` 50 in the box (``inf`` with arms),
``n_init = 10`` with the centre first; in the box the axis design with a line
search (21 points when its first probes find no effect, :mod:`hdbo_engine.design`),
``trust_region = True`` with ``failure_tol = 10``, ``candidates = "perturb"``,
``n_refine = 0``. Both: ``eps = 0.5``, ``delta = 0.1``, ``F = 1``, ``lam`` = the
fitted noise floored at ``lam_min = 1e-2``, ``xi = sqrt(lambda)``, Matern-5/2 ARD
(``kernel_type="rbf"``: Gaussian), ``n_candidates = min(5000, 500 + 20 D)``.

Departures from the paper, one line each; the section of ``docs/algorithms/bkb.md``
that gives the reason and the measurement is in brackets:

* A repeated location is drawn once, with its copies' total leverage [#resampling-per-location].
* ``q_bar = 4`` instead of the theorem's value (practical) [#q_bar].
* ``beta_scale`` multiplies ``beta~_t`` (practical 0.05) [#beta-scale].
* ``beta~_t`` uses ``min(S_t, sum_cap)`` in the continuous box [#sum-cap].
* Hyperparameters are refitted by MAP at growing checkpoints [#kernel-and-refits].
* With a fixed kernel the output scale is frozen, never re-standardised [#fixed-kernel].
* ``lambda`` is the fitted noise variance, floored at ``lam_min`` [#lambda].
* The continuous box: candidates refined by L-BFGS-B [#continuous-box].
* A TuRBO trust region confines the candidates (practical, box only) [#trust-region].
* TuRBO's perturbation candidates, no refinement (practical) [#candidates].
* The centre, the axis design and a line search replace one uniform point [#initial-design].
* ``ask(n > 1)`` and pending points: kriging believer on the sketch [#pending-points].
* The chain's state is recorded in proposal metas for an exact, cheap rebuild
  [#randomness-and-rebuild].
* A run of points told without a meta enters in steps of 10%, with one refit [#warm-start].
* On a history shared with other algorithms (Auto's), points whose meta names another
  algorithm enter the models but, without constraints, move neither the incumbent nor the
  trust region's counts (``hdbo_engine.base``; Auto tells its COBYLA phase's points as
  design points, ``hdbo_engine.algorithms.auto.members``) [auto.md#own-incumbents].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from scipy.linalg import cho_solve, eigh
from scipy.stats import qmc

from ..base import Optimizer, Proposal
from ..gp import (
    GP,
    GPParams,
    kernel_functions,
    next_refit,
    robust_cholesky,
    run_end,
    scaled_sqdist,
    told_without_meta,
)
from ..maximize import lbfgsb_batch, maximize_candidates, top_k
from ..options import Options
from ..records import has_record, history_fingerprint, latest_record, make_record, meta_records
from ..space import Space
from ..streams import BKB_DICTIONARY, BKB_FIT
from ..trust_region import TrustRegion, perturbation_candidates, search_box
from ..util import (
    check_bool,
    check_int,
    impute_failures,
    warn_beyond_measured_scale,
)

__all__ = ["BKB", "bkb_beta", "theoretical_q_bar"]

_EIG_RTOL = 1e-10
_STATE_KEY = "bkb_state"  # meta key of a recorded tell-chain state (module docstring)
_RUN_GROWTH = 0.1  # a run of points told without a meta: each step adds 10% of the history
_BOX_SUM_CAP = 50.0  # default sum_cap in the continuous box [#sum-cap]


def bkb_beta(t: int, sigma2_sum: float, xi: float, lam: float, kappa2: float = 1.0,
             delta: float = 0.1, F: float = 1.0, eps: float = 0.5) -> float:
    """``beta~_t`` of the BKB regret theorem (Sec. 4; Appendix D).

    ``log(kappa^2 t)`` is floored at 0 so that the square root stays real.
    """
    alpha = (1.0 + eps) / (1.0 - eps)
    log_term = max(math.log(kappa2 * max(int(t), 1)), 0.0)
    radius = alpha * log_term * max(sigma2_sum, 0.0) + math.log(1.0 / delta)
    return 2.0 * xi * math.sqrt(radius) + (1.0 + 1.0 / math.sqrt(1.0 - eps)) * math.sqrt(lam) * F


def theoretical_q_bar(T: int, delta: float = 0.1, eps: float = 0.5) -> float:
    """Smallest ``q_bar`` of the accuracy theorem (Sec. 3.2): ``6 alpha log(4T/delta) / eps^2``."""
    alpha = (1.0 + eps) / (1.0 - eps)
    return 6.0 * alpha * math.log(4.0 * T / delta) / eps**2


@dataclass
class _Kernel:
    """Hyperparameters and frozen output scale in force at one step."""

    lengthscales: np.ndarray
    signal_var: float
    noise_var: float
    y_mean: float = 0.0
    y_std: float = 1.0
    kernel_type: str = "matern52"


@dataclass
class _Sketch:
    """Step-t state: dictionary embedding, ``V_t`` and DTC variances of the evaluated points."""

    S: np.ndarray  # (m, D) dictionary locations
    W: np.ndarray  # (r, m): z(x) = W k_S(x)
    Zu: np.ndarray  # (n_u, r) embeddings of the distinct evaluated locations
    V: np.ndarray  # (r, r) = Zu^T diag(counts) Zu + lam I
    L: np.ndarray  # (r, r) lower Cholesky factor of V
    Q_var: np.ndarray  # (m, m): lam sigma~^2 = s2 - k_S^T Q_var k_S
    sigma2_u: np.ndarray  # (n_u,) sigma~_t^2 at the distinct evaluated locations
    kernel: _Kernel
    lam: float
    KA: np.ndarray | None = None  # (A, m) = K(arms, S) in arm mode, else None


@dataclass(frozen=True)
class BKBOptions(Options):
    """Options of :class:`BKB`; field defaults are the practical preset (paper preset in
    brackets where it differs).

    q_bar: dictionary oversampling, a float > 0 or "theory" [4.0 (paper "theory")].
    resample: "location" (one draw per distinct location with its copies' total
        leverage) or "pull" (Fig. 1's one draw per pull) ["location" (paper "pull")].
    lam: ridge / noise parameter lambda, None = fitted noise variance [None].
    lam_min: floor on the fitted lambda [1e-2].
    xi: sub-Gaussian noise scale in beta~, None = sqrt(lambda) [None].
    delta, eps, F: confidence, accuracy and RKHS-norm constants of beta~ [0.1, 0.5, 1.0].
    beta_scale: multiplier on beta~_t [0.05 (paper 1)].
    sum_cap: cap on the running sum ``sum_s sigma~_t^2(x_s)`` inside beta~_t; math.inf = the
        paper; None = math.inf with ``arms``, 50 in the continuous box [None (paper
        math.inf)].
    kernel: fixed kernel hyperparameters (GPParams), None = fitted [None].
    kernel_type: "matern52" (Matern-5/2 ARD) or "rbf" (Gaussian ARD) ["matern52"].
    output_scale: (mean, std) freezing the model's output scale, y -> (y - mean) / std;
        None = the told values' mean and std at each refit, or (0, 1) with a fixed kernel [None].
    refit_growth: hyperparameter refit cadence [0.2].
    fit_max_points: most evaluations per hyperparameter fit [200].
    n_candidates: candidates per step in the continuous box, None = min(5000, 500 + 20 D)
        [None].
    n_refine: L-BFGS-B starts per step in the continuous box; 0 takes the best candidate
        [0 (paper 5)].
    candidates: the continuous box's candidate set: "sobol" (Sobol points and perturbations
        of the 5 best) or "perturb" (the incumbent with about 20 coordinates redrawn)
        ["perturb" (paper "sobol")].
    trust_region: in the continuous box, confine candidates and L-BFGS-B to a TuRBO trust
        region around the incumbent [True (paper False); never with arms].
    failure_tol: the region's failure tolerance, None = max(4, D) [10 (paper None)].
    n_init, init_centre, init_design, line_search: :class:`~hdbo_engine.options.Options`
        [the design-size rule from 10 points, the centre, the axis design (with arms, the
        uniform design); paper: 1 uniform point, no centre].
    """

    init_design: str = "axis"
    q_bar: float | str = 4.0
    resample: str = "location"
    lam: float | None = None
    lam_min: float = 1e-2
    xi: float | None = None
    delta: float = 0.1
    eps: float = 0.5
    F: float = 1.0
    beta_scale: float = 0.05
    sum_cap: float | None = None
    kernel: GPParams | None = None
    kernel_type: str = "matern52"
    output_scale: tuple[float, float] | None = None
    refit_growth: float = 0.2
    fit_max_points: int = 200
    n_candidates: int | None = None
    n_refine: int = 0
    candidates: str = "perturb"
    trust_region: bool = True
    failure_tol: int | None = 10

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.delta < 1:
            raise ValueError(f"delta: expected 0 < delta < 1, got {self.delta!r}")
        if not 0 < self.eps < 1:
            raise ValueError(f"eps: expected 0 < eps < 1, got {self.eps!r}")
        if self.resample not in ("location", "pull"):
            raise ValueError(f"resample: expected 'location' or 'pull', got {self.resample!r}")
        if isinstance(self.q_bar, str) and self.q_bar != "theory":
            raise ValueError(f"q_bar: expected a float > 0 or 'theory', got {self.q_bar!r}")
        for arg in ("q_bar", "F", "beta_scale", "lam_min"):
            value = getattr(self, arg)
            if arg == "q_bar" and value == "theory":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{arg}: expected a number > 0, got {value!r}")
        for arg in ("lam", "xi", "sum_cap"):
            value = getattr(self, arg)
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, (int, float)) or not value > 0):
                raise ValueError(f"{arg}: expected a number > 0 or None, got {value!r}")
        kernel = self.kernel
        if kernel is not None:
            if not isinstance(kernel, GPParams):
                raise TypeError(f"kernel: expected a GPParams or None, got {type(kernel).__name__}")
            ls = np.asarray(kernel.lengthscales, dtype=float)
            if not (np.isfinite(ls).all() and (ls > 0).all()) or not kernel.signal_var > 0 \
                    or not kernel.noise_var > 0:
                raise ValueError("kernel: lengthscales, signal_var and noise_var must be > 0")
        kernel_functions(self.kernel_type)  # raises ValueError naming the options
        if self.output_scale is not None:
            try:
                mean, std = (float(v) for v in self.output_scale)
            except (TypeError, ValueError):
                raise TypeError(f"output_scale: expected (mean, std) or None, "
                                f"got {self.output_scale!r}") from None
            if not (math.isfinite(mean) and math.isfinite(std) and std > 0):
                raise ValueError(f"output_scale: expected a finite mean and a std > 0, "
                                 f"got {self.output_scale!r}")
            object.__setattr__(self, "output_scale", (mean, std))
        if not self.refit_growth >= 0:
            raise ValueError(f"refit_growth: expected >= 0, got {self.refit_growth!r}")
        check_int("fit_max_points", self.fit_max_points, 1)
        check_int("n_refine", self.n_refine, 0)
        if self.candidates not in ("sobol", "perturb"):
            raise ValueError(f"candidates: expected 'sobol' or 'perturb', "
                             f"got {self.candidates!r}")
        check_int("n_candidates", self.n_candidates, 2, optional=True)
        check_bool("trust_region", self.trust_region)
        check_int("failure_tol", self.failure_tol, 1, optional=True)


PRESETS: dict[str, BKBOptions] = {
    "practical": BKBOptions(),
    "paper": BKBOptions(q_bar="theory", resample="pull", beta_scale=1.0, sum_cap=math.inf,
                        trust_region=False, failure_tol=None, candidates="sobol", n_refine=5,
                        n_init=1, init_centre=False, init_design="uniform"),
}


class BKB(Optimizer):
    """BKB (Calandriello et al., COLT 2019, Fig. 1); see the module docstring.

    arms: (A, D) finite arm set in the unit cube, or None for the continuous box [None];
    with arms, each preset's initial design is uniform (module docstring).
    Options: :class:`BKBOptions` (by name, or ``options=``); ``preset``: "practical"
    [default] or "paper" (:data:`PRESETS`, module docstring).
    """

    name = "bkb"
    default_n_init = 10
    options_class = BKBOptions
    presets: ClassVar[dict[str, Options]] = PRESETS

    def __init__(self, space: Space | int, *, arms: Any = None, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: BKBOptions | None = None, **overrides: Any) -> None:
        if arms is not None and options is None:  # arms are drawn uniformly
            options = replace(self.preset_options(preset), init_design="uniform")
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         **overrides)
        warn_beyond_measured_scale(type(self).__name__, "bkb", self.dim, self.budget)
        o = self.options
        D = self.dim
        self.arms = None if arms is None else self._check_arms(arms)
        q_bar = o.q_bar
        if q_bar == "theory":
            q_bar = theoretical_q_bar(self.horizon, o.delta, o.eps)
        kernel = o.kernel
        if kernel is not None:
            ls = np.broadcast_to(np.asarray(kernel.lengthscales, dtype=float), (D,)).copy()
            kernel = GPParams(ls, float(kernel.signal_var), float(kernel.noise_var))
        if o.trust_region and self.arms is None:  # the continuous box only (module docstring)
            self.trust_region = TrustRegion(D, failure_tol=int(o.failure_tol or max(4, D)))
        self.q_bar = float(q_bar)
        sum_cap = o.sum_cap
        if sum_cap is None:
            sum_cap = math.inf if self.arms is not None else _BOX_SUM_CAP
        self.sum_cap = float(sum_cap)
        self.fixed_kernel = kernel
        self.n_candidates = int(o.n_candidates or min(5000, 500 + 20 * D))
        # distinct evaluated locations, their counts, and which arm each one is
        self._loc_index: dict[bytes, int] = {}
        self._locs = np.empty((0, D))
        self._counts = np.empty(0, dtype=int)
        self._loc_of_told: list[int] = []
        self._arm_of_loc: list[int] = []
        self._arm_lookup = None if self.arms is None else {
            row.tobytes(): i for i, row in reversed(list(enumerate(self.arms)))}
        # dictionary chain: S_n (indices into the distinct locations) and the kernel at n
        self._dict_idx = np.empty(0, dtype=int)
        self._gp = GP(D, kernel_type=o.kernel_type)
        self._kernel = self._initial_kernel()
        self._n_fitted = 0
        self._n_chain = 0  # evaluations the chain has taken in (the others wait, _on_tell)
        self._sketch_cache: tuple[int, _Sketch] | None = None
        # arm mode: k(arms, s) for the current dictionary's locations, valid for one kernel
        self._col_cache: tuple[_Kernel | None, dict[int, np.ndarray]] = (None, {})

    # -------------------------------------------------------------- validation
    def _check_arms(self, arms: Any) -> np.ndarray:
        try:
            A = np.asarray(arms, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"arms: expected an array (A, D) with D = {self.dim}, "
                            f"got {type(arms).__name__}") from None
        if A.ndim != 2 or A.shape[1] != self.dim or len(A) < 1:
            raise ValueError(f"arms: expected shape (A, D) with A >= 1 and D = {self.dim}, "
                             f"got shape {A.shape}")
        if not np.isfinite(A).all() or (A < 0).any() or (A > 1).any():
            raise ValueError(f"arms: every arm must be a finite point of the unit cube "
                             f"[0, 1]^{self.dim}")
        return A.copy()

    # ------------------------------------------------------------------ public
    @property
    def dictionary_size(self) -> int:
        """``m_t = |S_t|``: the number of inducing points after the last tell."""
        self._catch_up()
        return len(self._dict_idx)

    @property
    def dictionary(self) -> np.ndarray:
        """The dictionary ``S_t`` (m_t, D)."""
        self._catch_up()
        return self._locs[self._dict_idx]

    def predict(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """DTC posterior of the objective at X (n, D): mean and variance on the user's scale.

        The variance is ``lambda sigma~_t^2`` (the DTC posterior variance of f)
        times the squared output scale.
        """
        X = self._check_points(X, "X")
        sk = self._sketch()
        P, Q = self._coefficients(sk, self._targets(sk), [])
        mu, var = _mean_var(sk, P, Q, X)
        k = sk.kernel
        return k.y_mean - k.y_std * mu, sk.lam * var * k.y_std**2

    # ------------------------------------------------------------- tell chain
    def _initial_kernel(self) -> _Kernel:
        y_mean, y_std = self.options.output_scale or (0.0, 1.0)
        p = self.fixed_kernel if self.fixed_kernel is not None else self._gp.params
        return _Kernel(p.lengthscales.copy(), p.signal_var, p.noise_var, y_mean, y_std,
                       self.options.kernel_type)

    def _lam(self, kernel: _Kernel) -> float:
        o = self.options
        return float(o.lam) if o.lam is not None else max(kernel.noise_var, float(o.lam_min))

    def _on_tell(self, X: np.ndarray, y: np.ndarray, metas: list[dict[str, Any]]) -> None:
        """Advance the dictionary chain one evaluation at a time (Fig. 1, inner loop), from
        the latest state recorded in ``metas`` when one matches (docs/algorithms/bkb.md,
        "Randomness and rebuild"). Points told without a meta wait until a point with a
        meta is told or the model is read, and a run of them is taken in a few steps with
        one refit (:meth:`_take`; docs/algorithms/bkb.md, "Warm start")."""
        for x in X:
            self._add_location(x)
        self._restore(metas)
        bare = told_without_meta(self.metas)
        with_meta = np.flatnonzero(~bare[self._n_chain:])
        end = self._n_chain + int(with_meta[-1]) + 1 if len(with_meta) else self._n_chain
        while self._n_chain < end:
            self._take(run_end(self._n_chain + 1, bare[:end]))

    def _catch_up(self) -> None:
        """Take the waiting points told without a meta (if any) into the chain."""
        if self._n_chain < self.n_told:
            self._take(self.n_told)

    def _take(self, n: int) -> None:
        """Advance the chain to ``n`` evaluations: one step (Fig. 1's inner loop) for one
        evaluation; a run of points told without a meta in steps that grow the history by
        :data:`_RUN_GROWTH` (at least one point each), as BBKB resparsifies once per batch
        (Calandriello et al., "Near-linear time Gaussian process optimization with
        adaptive batching and resparsification", ICML 2020); then the refit checkpoint, if
        one is due, once (no proposal was made from a fit inside the run)."""
        while self._n_chain < n:
            self._step(min(n, next_refit(self._n_chain, _RUN_GROWTH)))
        self._refit(n)

    def _step(self, n: int) -> None:
        """One resampling of the dictionary after evaluations ``self._n_chain`` to ``n - 1``:
        their leverage under the sketch before the step, then the stream's draw for ``n``."""
        sk = self._sketch_at(self._n_chain)
        locs, counts = self._locations(n)
        sigma2 = sk.sigma2_u
        if len(locs) > len(sigma2):  # locations new in this step
            sigma2 = np.append(sigma2, _mean_var(sk, None, sk.Q_var, locs[len(sigma2):])[1])
        lev = np.maximum(sigma2, 0.0)
        if self.options.resample == "location":  # the c copies' total leverage (module docstring)
            p_loc = np.minimum(1.0, self.q_bar * counts * lev)
        else:  # Fig. 1 literally: one draw per pull
            p_loc = 1.0 - (1.0 - np.minimum(1.0, self.q_bar * lev)) ** counts
        rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                           spawn_key=(BKB_DICTIONARY, n)))
        self._dict_idx = np.flatnonzero(rng.random(len(p_loc)) < p_loc)
        self._n_chain = n

    def _fingerprint(self, n: int) -> str:
        """Hash of the settings that shape the chain and of the first n evaluations."""
        o = self.options
        settings = repr((self.seed, self.dim, self.q_bar, o.resample, float(o.refit_growth),
                         int(o.fit_max_points), o.kernel_type, o.output_scale,
                         self.fixed_kernel is None, self.arms is None))
        return history_fingerprint(settings, self.X[:n], self.model_values[:n])

    def chain_state(self) -> dict[str, Any]:
        """The tell chain's state after the told evaluations, as a record for a proposal's meta.

        ``{"n", "dictionary", "n_fitted", "kernel", "gp", "fp"}``
        (:func:`~hdbo_engine.records.make_record`): what :meth:`_read_state` needs to
        continue the chain from ``n`` without replaying it (module docstring).
        """
        self._catch_up()
        k, gp = self._kernel, self._gp
        return make_record(
            self.n_told, self._fingerprint(self.n_told),
            dictionary=[int(i) for i in self._dict_idx], n_fitted=self._n_fitted,
            kernel=[[float(v) for v in k.lengthscales], float(k.signal_var),
                    float(k.noise_var), float(k.y_mean), float(k.y_std)],
            gp=[[float(v) for v in gp.params.lengthscales], float(gp.params.signal_var),
                float(gp.params.noise_var), float(gp.y_std), bool(gp.fitted)])

    def _restore(self, metas: list[dict[str, Any]]) -> None:
        """Jump to the latest state in ``metas`` ahead of the chain that was recorded for this
        history (:func:`~hdbo_engine.records.latest_record`)."""
        hit = latest_record(meta_records(metas, _STATE_KEY), self._n_chain, self.n_told,
                            self._fingerprint, self._read_state)
        if hit is not None:
            self._n_chain, _, (self._dict_idx, self._kernel, self._n_fitted, self._gp) = hit
            self._sketch_cache = None

    def _read_state(self, state: dict[str, Any]) -> tuple[np.ndarray, _Kernel, int, GP] | None:
        """A recorded chain state: ``S_n``, the kernel, the last checkpoint and the fitted GP;
        None unless both lengthscale vectors hold D numbers and the dictionary indexes the
        distinct locations of the first ``n`` evaluations."""
        (k_ls, k_s2, k_noise, k_mean, k_std) = state["kernel"]
        (g_ls, g_s2, g_noise, g_std, g_fitted) = state["gp"]
        kernel = _Kernel(np.asarray(k_ls, dtype=float), float(k_s2), float(k_noise),
                         float(k_mean), float(k_std), self.options.kernel_type)
        gp = GP(self.dim, kernel_type=self.options.kernel_type)
        gp.params = GPParams(np.asarray(g_ls, dtype=float), float(g_s2), float(g_noise))
        gp.y_std, gp.fitted = float(g_std), bool(g_fitted)
        dictionary = np.asarray(state["dictionary"], dtype=int)
        n_fitted = int(state["n_fitted"])
        n_locs = len(self._locations(int(state["n"]))[0])
        if not (kernel.lengthscales.shape == gp.params.lengthscales.shape == (self.dim,)
                and dictionary.ndim == 1 and np.all((dictionary >= 0) & (dictionary < n_locs))):
            return None
        return dictionary, kernel, n_fitted, gp

    def _locations(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The distinct locations of the first ``n`` evaluations and their counts (locations
        are numbered in order of first evaluation)."""
        if n == self.n_told:
            return self._locs, self._counts
        of_told = np.asarray(self._loc_of_told[:n], dtype=int)
        m = int(of_told.max()) + 1 if n else 0
        return self._locs[:m], np.bincount(of_told, minlength=m)

    def _add_location(self, x: np.ndarray) -> int:
        key = x.tobytes()
        u = self._loc_index.get(key)
        if u is None:
            u = len(self._locs)
            self._loc_index[key] = u
            self._locs = np.vstack([self._locs, x])
            self._counts = np.append(self._counts, 0)
            self._arm_of_loc.append(self._find_arm(x))
        self._counts[u] += 1
        self._loc_of_told.append(u)
        return u

    def _find_arm(self, x: np.ndarray) -> int:
        if self.arms is None:
            return -1
        hit = self._arm_lookup.get(x.tobytes())
        if hit is not None:
            return hit
        gap = np.abs(self.arms - x).max(axis=1)
        i = int(np.argmin(gap))
        return i if gap[i] <= 1e-9 else -1

    def _refit(self, n: int) -> None:
        """Hyperparameter checkpoint at n evaluations
        (docs/algorithms/bkb.md, "Kernel and refits")."""
        o = self.options
        if next_refit(self._n_fitted, float(o.refit_growth)) > n:
            return
        self._n_fitted = n
        y_all = self.model_values[:n]
        if not np.isfinite(y_all).any():
            return
        if self.fixed_kernel is not None:  # the paper's fixed kernel: nothing to refit
            return
        y_imp = impute_failures(y_all)
        if o.output_scale is not None:
            y_mean, y_std = o.output_scale
        else:
            y_mean = float(y_imp.mean())
            y_std = float(y_imp.std())
            y_std = y_std if y_std > 1e-12 * max(1.0, abs(y_mean)) else 1.0
        rows = self._fit_rows(n)
        if len(rows) >= 2:
            self._gp = self._fit_gp(self.X[rows], y_imp[rows])
        p = self._gp.params
        ratio = (self._gp.y_std / y_std) ** 2 if self._gp.fitted else 1.0
        self._kernel = _Kernel(p.lengthscales.copy(), p.signal_var * ratio, p.noise_var * ratio,
                               y_mean, y_std, o.kernel_type)

    def _fit_gp(self, X: np.ndarray, y: np.ndarray) -> GP:
        """MAP fit from the prior mode and, once fitted, also from the previous
        hyperparameters; the higher posterior on (X, y) wins (docs/algorithms/bkb.md,
        "Kernel and refits")."""
        gp = GP(self.dim, kernel_type=self.options.kernel_type)
        if self._gp.fitted:
            gp.params, gp.fitted = self._gp.params, True
        return gp.fit(X, y, prior_start=True)

    def _fit_rows(self, n: int) -> np.ndarray:
        """Evaluations used by the fit at n: all when n <= fit_max_points, else the
        dictionary's evaluations first, filled up with a seeded random sample of the rest."""
        limit = self.options.fit_max_points
        if n <= limit:
            return np.arange(n)
        in_dict = np.zeros(len(self._locs), dtype=bool)
        in_dict[self._dict_idx] = True
        mask = in_dict[np.asarray(self._loc_of_told[:n])]
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(BKB_FIT, n)))
        first, rest = rng.permutation(np.flatnonzero(mask)), rng.permutation(np.flatnonzero(~mask))
        return np.sort(np.concatenate([first, rest])[:limit])

    def _sketch(self) -> _Sketch:
        self._catch_up()
        return self._sketch_at(self.n_told)

    def _sketch_at(self, n: int) -> _Sketch:
        """Step-n state from ``S_n``, the kernel at n and the first n evaluations (cached)."""
        if self._sketch_cache is not None and self._sketch_cache[0] == n:
            return self._sketch_cache[1]
        kernel, lam = self._kernel, self._lam(self._kernel)
        locs, counts = self._locations(n)
        S = locs[self._dict_idx]
        KA = self._arm_columns(kernel)
        arm_of = np.asarray(self._arm_of_loc[:len(locs)], dtype=int)
        if KA is not None and (arm_of >= 0).all():  # every location is an arm: reuse KA's rows
            K_SS, K_US = KA[arm_of[self._dict_idx]], KA[arm_of]
        else:
            K_SS, K_US = _kernel_matrix(kernel, S, S), _kernel_matrix(kernel, locs, S)
        W = _inverse_sqrt(K_SS)
        Zu = K_US @ W.T
        V = (Zu.T * counts) @ Zu
        V[np.diag_indices_from(V)] += lam
        L = _cholesky(V)
        Q_var = W.T @ (W - lam * _chol_solve(L, W))
        quad = ((K_US @ Q_var) * K_US).sum(1)  # z^T Z^T Z V^{-1} z, one product for all t
        sigma2_u = np.maximum(kernel.signal_var - quad, 0.0) / lam
        sk = _Sketch(S, W, Zu, V, L, Q_var, sigma2_u, kernel, lam, KA)
        self._sketch_cache = (n, sk)
        return sk

    def _arm_columns(self, kernel: _Kernel) -> np.ndarray | None:
        """``K(arms, S_t)`` (A, m) in arm mode, from columns kept while their location stays
        in the dictionary and the kernel is unchanged; None in the continuous box.

        Each step then computes kernel values only for locations new to ``S_t``
        (``A D`` each) instead of ``A m D`` (docs/algorithms/bkb.md, "Cost per step").
        """
        if self.arms is None:
            return None
        cached_kernel, cols = self._col_cache
        if cached_kernel is not kernel:
            cols = {}
        idx = self._dict_idx.tolist()
        kfun = kernel_functions(kernel.kernel_type)[0]
        scaled_arms = None
        for u in idx:
            if u not in cols:  # elementwise distances: the same bits however columns are batched
                if scaled_arms is None:
                    scaled_arms = self.arms / kernel.lengthscales
                d = scaled_arms - self._locs[u] / kernel.lengthscales
                cols[u] = kfun(np.sqrt((d * d).sum(1)), kernel.signal_var)
        self._col_cache = (kernel, {u: cols[u] for u in idx})
        if not idx:
            return np.empty((len(self.arms), 0))
        return np.stack([cols[u] for u in idx], axis=1)

    # ---------------------------------------------------------------- scoring
    def _targets(self, sk: _Sketch) -> np.ndarray:
        """Per-location sums of the model's targets (negated, standardised, imputed)."""
        y = impute_failures(self.model_values)
        target = -(y - sk.kernel.y_mean) / sk.kernel.y_std
        return np.bincount(np.asarray(self._loc_of_told, dtype=int), weights=target,
                           minlength=len(self._locs))

    def _coefficients(self, sk: _Sketch, sums: np.ndarray,
                      fantasies: list[tuple[np.ndarray, float]]) -> tuple[np.ndarray, np.ndarray]:
        """``P`` and ``Q`` with ``mu~ = k_S^T P`` and ``lam sigma~^2 = s2 - k_S^T Q k_S``.

        ``fantasies`` are (z, value) pairs added to V_t and Z^T y (kriging believer).
        """
        b = sk.Zu.T @ sums
        if not fantasies:
            return sk.W.T @ _chol_solve(sk.L, b), sk.Q_var
        V = sk.V.copy()
        for z, value in fantasies:
            V += np.outer(z, z)
            b = b + value * z
        L = _cholesky(V)
        P = sk.W.T @ _chol_solve(L, b)
        Q = sk.W.T @ (sk.W - sk.lam * _chol_solve(L, sk.W))
        return P, Q

    def _beta(self, sk: _Sketch, t: int, sigma2_sum: float) -> float:
        """``beta_scale`` times the theorem's ``beta~_t`` (Sec. 4) with the sum capped at
        ``sum_cap``."""
        o = self.options
        xi = o.xi if o.xi is not None else math.sqrt(sk.lam)
        return o.beta_scale * bkb_beta(t, min(sigma2_sum, self.sum_cap), xi, sk.lam,
                                       sk.kernel.signal_var, float(o.delta), o.F, float(o.eps))

    # --------------------------------------------------------------- proposal
    def ask(self, n: int = 1, *, salt: int | None = None) -> list[Proposal]:
        """Propose ``n`` points; with ``arms`` every proposal is an arm (repeats allowed)."""
        if self.arms is None:
            return super().ask(n, salt=salt)
        rng = self._ask_rng(n, salt)
        n_random = self._n_random(n)
        out = []
        for _ in range(n_random):
            free = self._free_arms(())
            i = int(rng.choice(free))
            out.append(self._accept_arm(i, {"init": True, "arm": i}))
        if n - n_random:
            for _, meta in self._propose(n - n_random, rng):
                out.append(self._accept_arm(meta["arm"], meta))
        return out

    def _free_arms(self, chosen: Any) -> np.ndarray:
        """Arms neither pending nor chosen in this batch (all arms when none is left)."""
        taken = np.zeros(len(self.arms), dtype=bool)
        for p in self._pending:
            i = self._find_arm(p.x)
            if i >= 0:
                taken[i] = True
        taken[list(chosen)] = True
        free = np.flatnonzero(~taken)
        return free if len(free) else np.arange(len(self.arms))

    def _accept_arm(self, i: int, meta: dict[str, Any]) -> Proposal:
        proposal = Proposal(self.arms[i].copy(), meta)
        self._pending.append(proposal)
        return proposal

    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        if not np.isfinite(self.model_values).any():
            if self.arms is not None:
                free = self._free_arms(())
                picks = rng.choice(free, n, replace=len(free) < n)
                return [(self.arms[i], {"random": True, "arm": int(i)}) for i in picks]
            return [(rng.random(self.dim), {"random": True}) for _ in range(n)]
        sk = self._sketch()
        sums = self._targets(sk)
        sigma2_sum = float(self._counts @ sk.sigma2_u)
        state = self.chain_state()
        record = not has_record(meta_records((p.meta for p in self._pending), _STATE_KEY),
                                state["fp"])
        fantasies: list[tuple[np.ndarray, float]] = []
        for p in self._pending:
            fantasies.append(self._fantasy(sk, sums, fantasies, p.x))
        out: list[tuple[np.ndarray, dict]] = []
        chosen: list[int] = []
        for k in range(n):
            P, Q = self._coefficients(sk, sums, fantasies)
            t = self.n_told + len(fantasies)
            beta = self._beta(sk, t, sigma2_sum)
            meta: dict[str, Any] = {"t": t, "dictionary_size": len(sk.S),
                                    "beta": float(beta)}
            if record and k == 0:
                meta[_STATE_KEY] = state
            if self.arms is not None:
                free = self._free_arms(chosen)
                mu, var = _mean_var(sk, P, Q, self.arms[free], sk.KA[free])
                score = mu + beta * np.sqrt(var)
                i = int(free[int(np.argmax(score))])
                chosen.append(i)
                x, meta["arm"] = self.arms[i], i
            else:
                x = self._maximize_box(sk, P, Q, beta, rng)
            out.append((x.copy(), meta))
            if k < n - 1:  # the next proposal sees this one as a fantasy
                sigma2_sum += float(_mean_var(sk, None, Q, x[None, :])[1][0])
                fantasies.append(self._fantasy(sk, sums, fantasies, x, (P, Q)))
        return out

    def _fantasy(self, sk: _Sketch, sums: np.ndarray, fantasies: list[tuple[np.ndarray, float]],
                 x: np.ndarray, PQ: tuple[np.ndarray, np.ndarray] | None = None
                 ) -> tuple[np.ndarray, float]:
        """Kriging-believer pair (z(x), mu~(x)) given the current fantasies (P, Q if known)."""
        P, Q = PQ if PQ is not None else self._coefficients(sk, sums, fantasies)
        mu = _mean_var(sk, P, Q, x[None, :])[0][0]
        z = sk.W @ _kernel_matrix(sk.kernel, sk.S, x[None, :])[:, 0]
        return z, float(mu)

    def _maximize_box(self, sk: _Sketch, P: np.ndarray, Q: np.ndarray, beta: float,
                      rng: np.random.Generator) -> np.ndarray:
        """Appendix A: score a fresh candidate set with u~, refine the best with L-BFGS-B.

        Both stay inside the trust region when there is one (module docstring).
        """
        X, y = self.model_data()
        best = self.incumbent
        lo, hi = search_box(self.dim, None if best is None else best[0], self.trust_region)
        cand = self._candidates(X, y, lo, hi, rng)

        def score(C: np.ndarray) -> np.ndarray:
            mu, var = _mean_var(sk, P, Q, C)
            return mu + beta * np.sqrt(var)

        def acq(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            m, v, dm, dv = _mean_var_grad(sk, P, Q, Y)
            s = np.sqrt(v)
            return m + beta * s, dm + beta * dv / (2.0 * s[:, None])

        Y, vals = maximize_candidates(cand, score, self.options.n_refine,
                                      lambda starts: lbfgsb_batch(acq, starts, lo, hi, maxiter=50))
        return Y[int(np.argmax(vals))]

    def _candidates(self, X: np.ndarray, y: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
        """``"sobol"``: scrambled Sobol points of the box [lo, hi] and perturbations of the 5
        best points (sd 0.1 of the box's side, about min(D, 20) coordinates), clipped into it.
        ``"perturb"``: the own told point of lowest finite model target (of every told point
        when it has none; :meth:`~hdbo_engine.base.Optimizer.own_rows`), each coordinate redrawn
        uniformly in [lo, hi] with probability min(1, 20 / D), at least one per candidate
        (TuRBO's candidates)."""
        c, D = self.n_candidates, self.dim
        if self.options.candidates == "perturb":
            rows = np.flatnonzero(self.own_rows() & np.isfinite(self.model_values))
            rows = rows if len(rows) else np.arange(len(y))
            return perturbation_candidates(X[rows[int(np.argmin(y[rows]))]], lo, hi, c, rng)
        n_sobol = 2 ** int(math.log2(c / 2)) if c >= 4 else 1
        n_local = c - n_sobol
        width = hi - lo
        sobol = lo + qmc.Sobol(D, scramble=True, seed=rng).random(n_sobol) * width
        best = X[top_k(-y, 5)]
        centers = best[rng.integers(len(best), size=n_local)]
        mask = rng.random((n_local, D)) < min(1.0, 20.0 / D)
        mask[np.arange(n_local), rng.integers(D, size=n_local)] = True
        local = np.clip(centers + mask * rng.normal(0.0, 0.1, (n_local, D)) * width, lo, hi)
        return np.vstack([sobol, local])


# ------------------------------------------------------------------ linear algebra
def _inverse_sqrt(K: np.ndarray) -> np.ndarray:
    """``(K^{1/2})^+`` restricted to its range, as (r, m): drops eigenvalues < 1e-10 max."""
    if not len(K):
        return np.empty((0, 0))
    w, U = eigh(K, check_finite=False)
    keep = w > _EIG_RTOL * max(float(w.max()), 1e-300)
    return (U[:, keep] / np.sqrt(w[keep])).T


def _cholesky(V: np.ndarray) -> np.ndarray:
    return robust_cholesky(V) if len(V) else np.empty((0, 0))


def _chol_solve(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    return cho_solve((L, True), B, check_finite=False) if len(L) else np.zeros_like(B)


def _kernel_matrix(k: _Kernel, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    r = np.sqrt(scaled_sqdist(A / k.lengthscales, B / k.lengthscales))
    return kernel_functions(k.kernel_type)[0](r, k.signal_var)


def _mean_var(sk: _Sketch, P: np.ndarray | None, Q: np.ndarray, X: np.ndarray,
              Kx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``mu~_t`` and ``sigma~_t^2`` (leverage scale) at X, eq. (4)'s two displays; mean is 0
    when P is None. ``Kx = K(X, S)`` when already known."""
    if Kx is None:
        Kx = _kernel_matrix(sk.kernel, X, sk.S)  # (n, m)
    quad = ((Kx @ Q) * Kx).sum(1)
    var = np.maximum(sk.kernel.signal_var - quad, 1e-12 * sk.kernel.signal_var) / sk.lam
    mu = np.zeros(len(X)) if P is None else Kx @ P
    return mu, var


def _mean_var_grad(sk: _Sketch, P: np.ndarray, Q: np.ndarray, X: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``mu~``, ``sigma~^2`` and their gradients w.r.t. X (n, D)."""
    k = sk.kernel
    Xs, Ss = X / k.lengthscales, sk.S / k.lengthscales
    r = np.sqrt(scaled_sqdist(Xs, Ss))
    kfun, qfun = kernel_functions(k.kernel_type)
    Kx = kfun(r, k.signal_var)
    G = qfun(r, k.signal_var)  # dk_j/dx = -G_j (x - s_j) / ell^2
    KQ = Kx @ Q
    quad = (KQ * Kx).sum(1)
    raw = k.signal_var - quad
    var = np.maximum(raw, 1e-12 * k.signal_var) / sk.lam
    mu = Kx @ P

    def weighted_grad(c: np.ndarray) -> np.ndarray:  # sum_j c_j dk_j/dx, c (n, m)
        cg = c * G
        return -(cg.sum(1)[:, None] * Xs - cg @ Ss) / k.lengthscales

    dmu = weighted_grad(np.broadcast_to(P, Kx.shape))
    dvar = -2.0 * weighted_grad(KQ) / sk.lam
    dvar[raw <= 1e-12 * k.signal_var] = 0.0
    return mu, var, dmu, dvar
