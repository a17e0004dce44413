"""MS-UCB: GP-UCB maximised on random low-dimensional subspaces.

Tran-The, Gupta, Rana, Venkatesh, "Trading Convergence Rate with
Computational Budget in High Dimensional Bayesian Optimization", AAAI 2020
(``shared/seeds/001_...``; constants from the supplement ``000_...``).

Algorithm 1, as implemented:

1. ``n_init`` initial points (paper: 20, uniform; the practical preset puts the
   cube's centre first: ``base``, "Initial design"), then a GP (Matern-5/2 ARD,
   hyperparameters fitted from data, as in the paper's experiments).
2. Iteration t draws ``N_t = N0 * t**alpha`` values z uniformly from the
   fixed-coordinate cube and adds them to ``Z_t`` (steps 4-5).
3. Each z defines the subspace ``S(A, z)`` of Definition 1 (eq. 3): the last
   ``d`` coordinates are free, the first ``D - d`` are fixed to z.
4. ``x_t = argmax_{x in X_t} mu(x) + sqrt(beta_t) sigma(x)`` over all
   subspaces in ``Z_t`` (eq. 8), with (Theorem 1 / supplement Theorem 3)
   ``beta_t = 2 log(pi^2 t^2 / delta) + 2 d log(2 b d sqrt(log(6 D a / delta)) t^2)``
   and, for ``d = 0`` (subspaces are the points z themselves),
   ``beta_t = 4 log(pi^2 t^2 / (2 delta))``. ``d = D`` is plain GP-UCB.

Presets (``preset=``, :mod:`hdbo_engine.base`, "Presets"):

* ``"paper"``: the paper's experiments (Sec. "Experiments"): ``d = 5``,
  ``N0 = 1, alpha = 0``, the theoretical beta_t (``beta_scale = 1``), the
  exact acquisition step over every subspace (``n_optimize = None``), 20
  uniform initial points (``n_init = 20, init_centre = False``), no trust
  region, every fixed coordinate from z (``n_perturb = None``). One
  departure remains: the paper's ``10 D`` random L-BFGS-B starts per
  acquisition are ``restarts`` [3] starts per subspace from the best of
  ``n_candidates`` scored points (the compute knobs below).
* ``"practical"`` [default]: ``N0 = 10``, ``beta_scale = 0.1``,
  ``n_optimize = 20``, the centre first, a trust region
  (``trust_region=True, failure_tol=10``, below) and eq. (8)'s UCB
  (``acquisition="ucb"``; log-EI is an option, below), the axis
  initial design (``init_design="axis"``; the paper preset: uniform), and
  sparse moves (``n_perturb=15``, below; the paper preset: every fixed
  coordinate drawn).
  The axis design (``init_design="axis"``, ``base``, "Initial design": the
  centre, then a greedy pass of plus / minus 1/6 steps along the coordinates,
  ``max(20, min(2 D + 1, budget // 4))`` points) replaced uniform draws in
  session 15. Medians over seeds 0-2 on ``hd`` (``hdbo bench --suite <hd, the
  eleven 500-evaluation groups> --seeds 3 --methods msucb,cobbo,goucb,bkb``,
  against the committed cells of the same seeds; session 15), uniform -> axis:
  shifted Ackley 10.77 -> 7.94, shifted Levy 127.6 -> 79.8, shifted
  Styblinski-Tang -2726 -> -3086, rotated Rastrigin 1741 -> 1768, rotated
  Rosenbrock 1.85e5 -> 1.44e5, scattered Hartmann6 -3.3215 -> -3.321,
  LunarLander -283.7 -> -249.2, Swimmer -360.4 -> -356.7, Hopper -1027.7 ->
  -1028.1, rover 3.56 -> -0.79, HalfCheetah -892 -> -929: 7 of 11 medians and
  21 of 33 cells better.
  The design's line search (``line_search``, ``base``, "Line search after the
  design") was added in session 17. Medians over seeds 0-2 on ``hd`` (the same
  command, against session 16's cells), without -> with: shifted Ackley 8.18
  -> 7.58, shifted Levy 76.9 -> 66.8, Styblinski-Tang -3090 -> -3241, rotated
  Rastrigin 1797 -> 1705, rotated Rosenbrock 1.25e5 -> 1.47e5, Hartmann6
  -3.3221 -> -3.3220, LunarLander -257.5 -> -243.6, Swimmer -355.8 -> -357.6,
  Hopper -1097 -> -1035, HalfCheetah -864 -> -955, rover -1.46 -> -2.27: 7 of
  11 medians and 21 of 33 cells better.

Choices the paper leaves open (documented defaults):

* **Trust region** (``trust_region`` [practical: True], ``failure_tol``
  [practical: 10; None = TuRBO's ``max(4, D)``]). Diagnosis without it
  (``shifted_ackley``, D = 100, seed 0, 200 evaluations, former defaults):
  the first point (the centre, 12.25) was never improved; every proposal lay
  at Euclidean distance 2.9-3.3 (max-norm 0.48-0.50) from the incumbent,
  i.e. a random point of the box in its 95 fixed coordinates; the GP kept
  its lengthscales at the prior mode (median 41, in a unit cube, so a nearly
  flat model: predictions 12.5-15.3 with sd 0.1-0.6 at the proposals) and
  later collapsed one lengthscale to 0.003; the UCB maximiser's free
  coordinates were at the box bounds in 0-5% of cases, so the acquisition
  step was not the problem: the random z were. With the region (TuRBO's
  rule, :class:`hdbo_engine.trust_region.TrustRegion`, a cube around the
  incumbent), ``Z_t`` still stores uniform draws on ``[0, 1]^(D - d)`` (a
  function of ``(seed, t)``), and at ask time each maps affinely into the
  region's fixed coordinates; the free coordinates' candidates and the
  L-BFGS-B box are confined to the region too. Same run: proposals at
  distance 0.04-0.6 from the incumbent and 10.01 after 300 evaluations (57
  improvements). ``failure_tol`` 10 against 5 and ``beta_scale`` 0.1
  against 0.01 (seed 0, 300 evaluations; ``shifted_ackley`` /
  ``shifted_levy``): 10.01 / 159 (the default), 11.11 / 105
  (``failure_tol=5``), 10.50 / 111 (``beta_scale=0.01``); with ``d = 10``
  10.30 / 142. Seed 1, ``shifted_styblinski_tang``, 400 evaluations: -2376
  (default), -2386 (``beta_scale=0.01``); Nevergrad's CMA reaches -2346 with
  500 (seed 0). None of the alternatives wins on both problems, so the
  defaults stay. We also tried perturbing only about 20 of the fixed
  coordinates (TuRBO's mask; the others at the incumbent's values):
  9.78 / 134 with ``beta_scale=0.01``, no clear gain on these two; measured
  on the whole ``hd`` suite in session 19 and kept ("Sparse moves", below).
  Real tasks, seed 0, 500 evaluations (``hdbo bench`` with a suite of
  ``rover`` D = 60 and ``hopper`` D = 33, method ``msucb``): rover 5.07 (the
  centre: 13.0; 10.09 after 100, 7.45 after 250), hopper -1027.7 (centre
  -131; reached -1027.1 by evaluation 100), median ask 0.105 s and 0.059 s
  CPU under a load of 11 on 2 cores.
  ``shifted_levy`` D = 100, seed 0, 500 evaluations: 111 (former defaults
  in the ``hd`` bench: 341, never below the centre; Optuna TPE 365, random
  629, Nevergrad CMA 71), median ask 0.126 s; ``rotated_rosenbrock``
  1.85e5 (former 4.04e6; TPE 2.41e6, Nevergrad CMA 2.54e5, NGOpt 1.29e4),
  median ask 0.093 s. Short of the peers on ``scattered_hartmann6`` (D =
  300, 300 evaluations): -3.15 (former defaults -2.76 after 300; Optuna TPE
  and Nevergrad CMA -3.29 after 300).

* **Sparse moves** (``n_perturb`` [practical: 15; paper None, i.e. every
  fixed coordinate drawn]). Each subspace of ``Z_t`` also gets a mask, drawn
  once per ``(seed, t)`` from its own stream, that keeps each fixed coordinate
  with probability ``1 - min(1, n_perturb / (D - d))``: kept coordinates
  take the incumbent's value, the others the region-mapped z. With the d
  free coordinates a proposal then moves about 20 coordinates, as TuRBO's
  candidates (``trust_region.perturbation_candidates``) do for BKB and GO-UCB.
  Diagnosis (session 18, ``hopper``, D = 33, seed 0, an ask/tell loop over
  ``hdbo_cli.bench.make_bench_problem``): without the mask every proposal
  moved all 33 coordinates (median max-norm step 0.05-0.10) and 94-96% of
  them scored above -500, i.e. the hopper fell, until evaluation 350;
  CobBO's block moves (13-30 coordinates) fell in 13-24% of cases after
  evaluation 150. Measured (session 19, ``hdbo bench --methods msucb`` with
  a suite of the nine ``hd`` 500-evaluation groups with D - d > 15, seeds
  0-2, Hopper 0-4; against the committed cells), medians without -> with:
  Hopper -1035 -> -1109, HalfCheetah -955 -> -1056, rover -2.27 -> -3.21,
  rotated Rosenbrock 1.47e5 -> 9.07e4, shifted Ackley 7.58 -> 7.53; worse on
  shifted Levy 66.8 -> 84.7, rotated Rastrigin 1705 -> 1738, Styblinski-Tang
  -3241 -> -3230, scattered Hartmann6 -3.3220 -> -3.310: 5 of 9 medians and
  17 of 29 cells better, all three tasks among them (Swimmer and LunarLander,
  with ``D - d <= 15``, are unchanged). The cost is on smooth functions at
  short budgets, where moving every coordinate pays: ``d100`` (seeds 0-4)
  Ackley 6.60 -> 6.19, Levy 26.6 -> 25.7, Rastrigin 1416 -> 1287, Hartmann6
  -3.3222 -> -3.3222, but Rosenbrock 2.56e4 -> 4.68e4 (all five seeds worse);
  ``bbob`` at D = 40 (100 evaluations, seeds 0-2) all four worse: f1 150 ->
  176, f2 5.08e5 -> 8.31e5, f8 4.83e4 -> 5.54e4, f15 1967 -> 2132 (D = 20
  is unchanged). ``hd`` is the yardstick (its tasks are what users run), so
  the mask is the default. Not kept: ``n_perturb`` 3 / 8 on Hopper (seeds
  0-4), medians -1029 / -1070; every other subspace unmasked (the
  acquisition picks sparse or full moves): Hopper -1058, shifted Levy 88.1,
  d100 Rosenbrock 3.90e4, bbob D = 40 f1 150, f2 5.06e5, f8 4.02e4, f15 1992,
  between the two on every one. The paper's Definition 1 draws every fixed
  coordinate, so the paper preset keeps ``None``.
* **Acquisition** (``acquisition`` ["ucb" in both presets; ``"logei"`` an
  option, measured and not the default). ``"logei"`` scores every (subspace,
  point) pair, screening, candidates and L-BFGS-B alike, by log expected
  improvement over the best told value (with pending points, the best of
  the told values and their kriging-believer fantasies)
  (:func:`hdbo_engine.acquisition.log_expected_improvement`, Ament et al.
  2023) instead of eq. (8)'s ``mu + sqrt(beta_t) sigma``; the subspaces
  ``Z_t`` are unchanged. The idea: even at ``beta_scale = 0.1`` the UCB
  bonus is ``sqrt(0.1 beta_t)`` = 3-4 posterior sds at t = 100-500 (D = 100,
  d = 5), which favours the least known candidate over the one predicted
  best. Probes at seeds 0-1 looked good (8 of 12 problem-seed pairs better),
  but the full ``hd`` suite (``hdbo bench --suite <hd, the eleven
  500-evaluation groups> --seeds 3 --jobs 2 --methods msucb``, against the
  UCB cells of the same seeds; medians UCB -> log-EI) says otherwise:
  better on ``shifted_ackley`` 10.77 -> 9.33, ``shifted_levy`` 127.6 ->
  123.2, ``rover`` 3.56 -> 0.03 and ``scattered_hartmann6`` -3.3215 ->
  -3.3218; worse on ``shifted_styblinski_tang`` -2726 -> -2527 (all three
  seeds), ``rotated_rastrigin`` 1741 -> 1822, ``rotated_rosenbrock`` 1.85e5
  -> 2.20e5, LunarLander -283.7 -> -225.6, Swimmer -360.4 -> -359.4,
  Hopper -1027.7 -> -1027.1 and HalfCheetah -892 -> -479: 4 of 11 medians
  and 15 of 33 cells better. ``bbob`` (3 seeds, the same command with
  ``--suite bbob``): 4 of 8 medians and 10 of 24 cells better. EI's greedier
  choice helps on the smooth single-basin problems and hurts where the
  region must cross between basins (Styblinski-Tang, Rastrigin) and on the
  tasks, so UCB stays the default. On BKB's candidate scoring (seed 0, 300
  evaluations) log-EI was better on 2 of 6 problems, so BKB keeps UCB too.
* **Domain.** The paper works on ``[-1, 1]^D``; the engine's cube is
  ``[0, 1]^D``. The affine map between them preserves uniform sampling of z
  and the axis-aligned subspaces, so Algorithm 1 is unchanged.
* **Iteration index** ``t`` counts model-based proposals: ``t = n - n_init + 1``
  where ``n`` counts told plus pending points. ``a = b = 1`` and
  ``delta = 0.1`` (Assumption 1's constants are unknown in practice).
* **beta scale.** ``beta_scale`` multiplies beta_t; practical 0.1. The
  theoretical beta_t is large (about 150 at t = 100, d = 5, D = 50, i.e.
  ``sqrt(beta) ~ 12`` posterior standard deviations), and with it the UCB
  maximiser sits on the box boundary: measured on Ackley-50D over 200
  evaluations, 64-92% of the free coordinates proposed were at 0 or 1 and
  the result was worse than random search. Scaling the theoretical value
  down is standard GP-UCB practice (Srinivas et al. 2010 scale it by 1/5 in
  their experiments); 0.1 was the better of the values we measured.
* **Subspaces per iteration.** Practical ``N0 = 10, alpha = 0``: the paper's
  main experiments use ``N0 = 1`` and its Fig. 2 shows larger ``N0`` (or
  ``alpha``) converging faster; the scoring knob below keeps the larger pool
  cheap.
* **What to expect.** Every proposal takes its first ``D - d`` coordinates
  from uniform draws (Definition 1; in the practical preset, uniform in the
  trust region for about ``n_perturb`` of them, the incumbent's for the
  rest), so on functions that depend on all coordinates, or whose effective
  coordinates are among the first ``D - d``, MS-UCB can only choose among
  random draws there; measured results are in the README.
* **Compute knobs.** ``|Z_t|`` grows without bound, so every subspace is
  first *screened*: the acquisition at the first ``c`` of ``n_candidates``
  shared free-coordinate points (the incumbent's free coordinates, Gaussian
  perturbations of them, uniform draws), with ``c`` as large as
  ``screen_budget`` (subspace, point) pairs allow and at least 1 (the
  incumbent's free coordinates). The ``n_optimize`` best subspaces are then
  scored on all ``n_candidates`` points, and L-BFGS-B runs from the
  ``restarts`` best of them in each. ``n_optimize=None`` optimises every
  subspace: the paper's exact acquisition step, at its full cost. This is
  the paper's trade of convergence for compute made explicit. Defaults
  ``screen_budget=4096, restarts=3``. Measured on Ackley- / Levy-100D (seed 0,
  500 evaluations, one thread), median CPU seconds per ask and final value:
  ``4096, 3``: 0.119 / 0.092 s, 12.99 / 518; ``8192, 3``: 0.147 / 0.105 s,
  12.99 / 460; ``4096, 2``: 0.087 / 0.083 s, 12.92 / 501 (the Ackley times of
  the last two before the 1e-60 kernel flush in ``gp``). ``restarts=2``
  lost to random search on the 10-D Ackley unit test (median of 5 seeds
  11.33 vs 11.18; 10.31 with 3). The bench suite ``d100`` has 5 seeds.
* **Cheap subspace posterior.** For a fixed z the scaled distance to a
  training point splits into a fixed part (computed once per subspace and
  ask) and a d-dimensional part, so optimisation never touches all D
  coordinates (:class:`hdbo_engine.gp.SubspacePosterior`).
* **Parallel proposals** (``ask(n > 1)`` or pending points) use the kriging
  believer: pending points join the data with the posterior mean as value,
  hyperparameters fixed, which shrinks the variance there.
* **Hyperparameters** follow :class:`hdbo_engine.gp.HyperparameterChain`
  (refit about every 10% of the history, warm-started), which keeps
  rebuild-from-history exact. The first proposal made after the chain
  reaches a new checkpoint carries it in its meta (``"gp_chain"``: the
  checkpoint's size, hyperparameters and a fingerprint of the history prefix
  they were fitted on; D + 3 numbers, about every 10% of the history), unless
  a told or pending meta already holds it. An optimizer rebuilt from the
  history starts its chain from the latest recorded checkpoint that matches
  its own history, so the first ask after a rebuild costs about one ask
  instead of replaying every refit, and proposes exactly what the
  uninterrupted optimizer would (a history told without these metas, or with
  foreign ones, replays the refits as before).
* ``Z_t`` is drawn from a generator seeded by ``(seed, t)`` alone, so it is
  rebuilt identically in a new process.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..acquisition import log_expected_improvement, ucb
from ..base import FROM_PRESET, Optimizer, is_int, is_number
from ..gp import GP, HyperparameterChain
from ..maximize import lbfgsb_batch, top_k
from ..space import Space
from ..trust_region import TrustRegion

_Z_STREAM = 7_919  # separates the Z_t stream from the ask streams
_MASK_STREAM = 7_927  # the perturbation masks of Z_t (module docstring)
_CHAIN_KEY = "gp_chain"  # meta key of a recorded hyperparameter checkpoint
_ACQUISITIONS = ("ucb", "logei")


def msucb_beta(t: int, d: int, D: int, a: float = 1.0, b: float = 1.0,
               delta: float = 0.1) -> float:
    """beta_t of MS-UCB (Theorem 1; supplement Theorem 3), and the d = 0 case."""
    t = max(int(t), 1)
    if d == 0:
        return 4.0 * np.log(np.pi**2 * t**2 / (2.0 * delta))
    inner = 2.0 * b * d * np.sqrt(np.log(6.0 * D * a / delta)) * t**2
    return 2.0 * np.log(np.pi**2 * t**2 / delta) + 2.0 * d * np.log(inner)


class MSUCB(Optimizer):
    """MS-UCB (Tran-The et al., AAAI 2020, Algorithm 1); see the module docstring.

    Parameters (defaults in brackets)
    ---------------------------------
    d: free (subspace) dimension [5, the paper's main setting; capped at D].
    N0, alpha: ``N_t = N0 t^alpha`` subspaces added per iteration [practical 10, paper 1; 0].
    a, b, delta: Assumption 1 / confidence constants in beta_t [1, 1, 0.1].
    beta_scale: multiplier on beta_t [practical 0.1, paper 1.0 (the theoretical value)].
    n_optimize: subspaces refined by L-BFGS-B per ask, None = all [practical 20, paper None].
    restarts: L-BFGS-B starts per refined subspace [3].
    n_candidates: free-coordinate points scoring each refined subspace [32; 512 when d = D].
    screen_budget: (subspace, point) pairs screening all subspaces per ask [4096].
    refit_growth: hyperparameter refit cadence (HyperparameterChain) [0.1].
    trust_region: confine z, the free coordinates and L-BFGS-B to a TuRBO trust region
        around the incumbent [practical True, paper False].
    failure_tol: the region's failure tolerance, None = max(4, D) [practical 10].
    n_perturb: expected number of fixed coordinates each subspace moves off the incumbent;
        the others keep the incumbent's values; None = all [practical 15, paper None].
    acquisition: "ucb" (eq. 8, the paper) or "logei" (log expected improvement over the
        best told value) ["ucb" in both presets; module docstring].
    n_init: initial design [20, as in the paper]: practical, the centre then uniform
        draws; paper, uniform draws.
    preset: "practical" [default] or "paper" (module docstring).
    """

    name = "msucb"
    default_n_init = 20
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "practical": {"N0": 10, "beta_scale": 0.1, "n_optimize": 20, "trust_region": True,
                      "failure_tol": 10, "acquisition": "ucb", "init_design": "axis",
                      "n_perturb": 15},
        "paper": {"N0": 1, "beta_scale": 1.0, "n_optimize": None, "trust_region": False,
                  "failure_tol": None, "acquisition": "ucb", "n_init": 20, "n_perturb": None,
                  "init_centre": False, "init_design": "uniform"},
    }

    def __init__(
        self,
        space: Space | int,
        *,
        d: int = 5,
        N0: int = FROM_PRESET,
        alpha: float = 0.0,
        a: float = 1.0,
        b: float = 1.0,
        delta: float = 0.1,
        beta_scale: float = FROM_PRESET,
        n_optimize: int | None = FROM_PRESET,
        restarts: int = 3,
        n_candidates: int | None = None,
        screen_budget: int = 4096,
        refit_growth: float = 0.1,
        trust_region: bool = FROM_PRESET,
        failure_tol: int | None = FROM_PRESET,
        acquisition: str = FROM_PRESET,
        n_perturb: float | None = FROM_PRESET,
        **kwargs: Any,
    ) -> None:
        super().__init__(space, **kwargs)
        cfg = self._from_preset(N0=N0, beta_scale=beta_scale, n_optimize=n_optimize,
                                trust_region=trust_region, failure_tol=failure_tol,
                                acquisition=acquisition, n_perturb=n_perturb)
        n_perturb = cfg["n_perturb"]
        N0, beta_scale, n_optimize = cfg["N0"], cfg["beta_scale"], cfg["n_optimize"]
        trust_region, failure_tol = cfg["trust_region"], cfg["failure_tol"]
        if cfg["acquisition"] not in _ACQUISITIONS:
            raise ValueError(f"acquisition: expected one of {list(_ACQUISITIONS)}, "
                             f"got {cfg['acquisition']!r}")
        self.acquisition = cfg["acquisition"]
        D = self.dim
        if not is_int(d) or d < 0:
            raise ValueError(f"d: expected an int >= 0, got {d!r}")
        if not isinstance(N0, (int, np.integer)) or N0 < 1:
            raise ValueError(f"N0: expected an int >= 1, got {N0!r}")
        if alpha < 0:
            raise ValueError(f"alpha: expected >= 0, got {alpha!r}")
        if not 0 < delta < 1:
            raise ValueError(f"delta: expected 0 < delta < 1, got {delta!r}")
        if a <= 0 or b <= 0 or beta_scale <= 0:
            raise ValueError("a, b and beta_scale must be > 0")
        if n_optimize is not None and n_optimize < 1:
            raise ValueError(f"n_optimize: expected an int >= 1 or None, got {n_optimize!r}")
        if not is_int(screen_budget) or screen_budget < 1:
            raise ValueError(f"screen_budget: expected an int >= 1, got {screen_budget!r}")
        if restarts < 1:
            raise ValueError(f"restarts: expected an int >= 1, got {restarts!r}")
        if not isinstance(trust_region, (bool, np.bool_)):
            raise TypeError(f"trust_region: expected a bool, got {trust_region!r}")
        if failure_tol is not None and (not is_int(failure_tol) or failure_tol < 1):
            raise ValueError(f"failure_tol: expected an int >= 1 or None, got {failure_tol!r}")
        if n_perturb is not None and (not is_number(n_perturb) or not n_perturb > 0):
            raise ValueError(f"n_perturb: expected a number > 0 or None, got {n_perturb!r}")
        if trust_region:
            self.trust_region = TrustRegion(D, failure_tol=int(failure_tol or max(4, D)))
        self.d = int(min(d, D))
        self.N0, self.alpha = int(N0), float(alpha)
        self.a, self.b, self.delta, self.beta_scale = a, b, delta, beta_scale
        self.n_optimize, self.restarts = n_optimize, int(restarts)
        self.screen_budget = int(screen_budget)
        default_cand = 512 if self.d == D else 32
        self.n_candidates = int(n_candidates or default_cand)
        self.free = np.arange(D - self.d, D)  # last d coordinates (Definition 1)
        self.fixed = np.arange(D - self.d)
        self.chain = HyperparameterChain(D, refit_growth=refit_growth)
        self._Z_blocks: list[np.ndarray] = []
        self._mask_blocks: list[np.ndarray] = []
        self.n_perturb = n_perturb

    # ------------------------------------------------------------------ Z_t
    def _n_new(self, t: int) -> int:
        return int(round(self.N0 * t**self.alpha))

    def _draws(self, blocks: list[np.ndarray], stream: int, t: int) -> np.ndarray:
        """Uniform draws (one row per subspace of ``Z_t``, D - d columns) of the stream
        ``(seed, stream, j)``, block j holding iteration j's rows; ``blocks`` caches them."""
        while len(blocks) < t:
            j = len(blocks) + 1
            rng = np.random.default_rng(np.random.SeedSequence(self.seed,
                                                               spawn_key=(stream, j)))
            blocks.append(rng.random((self._n_new(j), len(self.fixed))))
        return np.vstack(blocks[:t])

    def subspaces(self, t: int) -> np.ndarray:
        """``Z_t`` as an array (|Z_t|, D - d), in the engine's [0, 1] coordinates."""
        return self._draws(self._Z_blocks, _Z_STREAM, t)

    def masks(self, t: int) -> np.ndarray:
        """Which fixed coordinates each subspace of ``Z_t`` moves off the incumbent."""
        k = len(self.fixed)
        p = 1.0 if self.n_perturb is None or k == 0 else min(1.0, self.n_perturb / k)
        return self._draws(self._mask_blocks, _MASK_STREAM, t) < p

    def fixed_values(self, t: int, lo: np.ndarray, hi: np.ndarray,
                     incumbent: np.ndarray) -> np.ndarray:
        """The fixed coordinates of the subspaces of ``Z_t``, mapped into the region [lo, hi].

        ``Z_t`` stores uniform draws on ``[0, 1]^(D - d)``; each maps affinely into the
        current region (the whole cube without a trust region: the paper's z unchanged).
        With ``n_perturb``, coordinates outside a subspace's mask keep the incumbent's value.
        """
        f = self.fixed
        Zv = lo[f] + self.subspaces(t) * (hi - lo)[f]
        if self.n_perturb is None:
            return Zv
        return np.where(self.masks(t), Zv, incumbent[f])

    def beta(self, t: int) -> float:
        """``beta_scale * beta_t`` (module docstring)."""
        return self.beta_scale * msucb_beta(t, self.d, self.dim, self.a, self.b, self.delta)

    # ------------------------------------------------------------- proposal
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        if np.isfinite(self.y).sum() < 2:
            return [(rng.random(self.dim), {"random": True}) for _ in range(n)]
        states = [m[_CHAIN_KEY] for m in [*self.metas, *(p.meta for p in self._pending)]
                  if _CHAIN_KEY in m]
        gp = self.chain.model(self.X, self.y, states=states)
        state = self.chain.state(self.X, self.y)
        record = state is not None and not any(
            isinstance(st, dict) and (st.get("n"), st.get("fp")) == (state["n"], state["fp"])
            for st in states)
        incumbent = gp.X[int(np.argmax(gp.z))]
        told_values = gp.y_mean + gp.y_std * gp.z
        fantasy = list(self.pending)
        out = []
        for _ in range(n):
            model = gp
            if fantasy:  # kriging believer (module docstring)
                Xp = np.array(fantasy)
                model = _condition(gp, np.vstack([self.X, Xp]),
                                   np.concatenate([told_values, gp.predict(Xp)[0]]))
            t = max(1, self.n_told + len(fantasy) - self.n_init + 1)
            x, meta = self._maximize(model, incumbent, t, rng)
            if record and not out:  # module docstring, "Hyperparameters"
                meta[_CHAIN_KEY] = state
            out.append((x, meta))
            fantasy.append(x)
        return out

    def _maximize(self, gp: GP, incumbent: np.ndarray, t: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, dict]:
        """Eq. (8): best point over the subspaces of Z_t (module docstring)."""
        beta = self.beta(t)
        # log-EI's incumbent: the best of the model's targets (negated scale), i.e. the best
        # told value, or a kriging-believer fantasy of a pending point if that is higher
        best = float(gp.z.max())
        D, d = self.dim, self.d
        lo, hi = self.region(incumbent)
        if d == D:
            bases = incumbent[None, :]
        else:
            Zv = self.fixed_values(t, lo, hi, incumbent)
            bases = np.empty((len(Zv), D))
            bases[:, self.fixed] = Zv
            bases[:, self.free] = incumbent[self.free]
        post = gp.subspace(self.free, bases)

        def acq(Y: np.ndarray, which: np.ndarray,
                grad: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
            return score(*post(Y, which, grad))

        def score(mean: np.ndarray, var: np.ndarray, dmean: np.ndarray | None = None,
                  dvar: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
            if self.acquisition == "logei":
                return log_expected_improvement(mean, var, dmean, dvar, best)
            return ucb(mean, var, dmean, dvar, beta)

        if d == 0:  # subspaces are points: maximise over the unseen points of Z_t
            vals, _ = acq(np.empty((len(bases), 0)), np.arange(len(bases)), grad=False)
            vals[self.seen_mask(bases)] = -np.inf
            i = int(np.argmax(vals))
            return bases[i].copy(), {"t": t, "subspace": i}

        s = len(bases)
        c = self.n_candidates
        flo, fhi = lo[self.free], hi[self.free]
        cand = self._candidates(incumbent[self.free], flo, fhi, c, rng)  # (c, d)
        if self.n_optimize is None or self.n_optimize >= s:
            chosen = np.arange(s)
        else:  # screen every subspace on the first c_screen candidates
            c_screen = max(1, min(c, self.screen_budget // s))
            screen = score(*post.grid(cand[:c_screen]))[0]
            chosen = top_k(screen.max(1), self.n_optimize)
        scores = score(*post.grid(cand, chosen))[0]
        starts_per = min(self.restarts, c)
        start_idx = np.argsort(-scores, axis=1)[:, :starts_per]
        Y0 = cand[start_idx].reshape(-1, d)
        which0 = np.repeat(chosen, starts_per)
        Y, vals = lbfgsb_batch(lambda Yv: acq(Yv, which0), Y0, flo, fhi)
        X = post.full_points(Y, which0)
        vals = np.where(self.seen_mask(X), -np.inf, vals)  # prefer the best unseen point
        k = int(np.argmax(vals))
        return X[k], {"t": t, "subspace": int(which0[k])}

    def region(self, incumbent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` of the search region: the trust region, or the whole cube."""
        if self.trust_region is None:
            return np.zeros(self.dim), np.ones(self.dim)
        return self.trust_region.bounds(incumbent)

    def _candidates(self, y_inc: np.ndarray, lo: np.ndarray, hi: np.ndarray, c: int,
                    rng: np.random.Generator) -> np.ndarray:
        """``c`` free-coordinate candidates in ``[lo, hi]``: incumbent, perturbations, uniform."""
        n_local = c // 4
        width = hi - lo
        local = np.clip(y_inc + rng.normal(0.0, 0.1, (n_local, self.d)) * width, lo, hi)
        uniform = lo + rng.random((c - 1 - n_local, self.d)) * width
        return np.vstack([y_inc[None, :], local, uniform])


def _condition(gp: GP, X: np.ndarray, y: np.ndarray) -> GP:
    """A copy of ``gp`` (same hyperparameters) conditioned on new data."""
    new = GP(gp.dim, gp.noise_bounds, gp.fit_maxiter)
    new.params = gp.params
    return new.set_data(X, y)
