"""MS-UCB: GP-UCB maximised on random low-dimensional subspaces.

Paper: Tran-The, Gupta, Rana, Venkatesh, "Trading Convergence Rate with
Computational Budget in High Dimensional Bayesian Optimization", AAAI 2020
(constants from its supplement). The paper mapping, every departure with its
measurement, and what was tried and not kept: ``docs/algorithms/msucb.md``.

Algorithm 1, as implemented:

1. ``n_init`` initial points (21 when the axis design's first probes find no effect,
   :mod:`hdbo_engine.design`), then a GP (Matern-5/2 ARD, hyperparameters
   fitted from data, :class:`hdbo_engine.gp.HyperparameterChain`); t counts the
   proposals after the design.
2. Iteration t adds ``N_t = N0 * t**alpha`` values z, drawn uniformly from the
   fixed-coordinate cube, to ``Z_t`` (steps 4-5; :meth:`MSUCB.subspaces`).
3. Each z defines the subspace ``S(A, z)`` of Definition 1 (eq. 3): the last
   ``d`` coordinates are free, the first ``D - d`` are fixed to z.
4. ``x_t = argmax_{x in X_t} mu(x) + sqrt(beta_t) sigma(x)`` over all
   subspaces in ``Z_t`` (eq. 8), with (Theorem 1 / supplement Theorem 3)
   ``beta_t = 2 log(pi^2 t^2 / delta) + 2 d log(2 b d sqrt(log(6 D a / delta)) t^2)``
   and, for ``d = 0`` (subspaces are the points z themselves),
   ``beta_t = 4 log(pi^2 t^2 / (2 delta))`` (:func:`msucb_beta`). ``d = D`` is
   plain GP-UCB (:class:`hdbo_engine.algorithms.baselines.GPUCB`).

Defaults, ``preset="paper"`` (the paper's experiments): ``d = 5``, ``N0 = 1``,
``alpha = 0``, ``beta_scale = 1`` (the theoretical beta_t), ``n_optimize = None``
(every subspace optimised), 20 uniform initial points, no trust region,
``n_perturb = None``, ``acquisition = "ucb"``. ``preset="practical"`` [default]:
``N0 = 10``, ``beta_scale = 0.1``, ``n_optimize = 20``, the centre and the axis
design with a line search (``init_design = "axis"``), ``trust_region = True``
with ``failure_tol = 10``, ``n_perturb = 15``, ``acquisition = "ucb"``. Both:
``a = b = 1``, ``delta = 0.1``, ``restarts = 3``, ``screen_budget = 4096``,
``n_candidates`` 32 (512 when ``d = D``). An option given by name wins over the preset
(:class:`MSUCBOptions`, :data:`PRESETS`).

Departures from the paper, one line each; the section of ``docs/algorithms/msucb.md``
that gives the reason and the measurement is in brackets:

* The cube is ``[0, 1]^D``, not ``[-1, 1]^D`` (an affine map) [#domain].
* ``t`` counts model proposals; ``a = b = 1``, ``delta = 0.1`` [#iteration-index-and-constants].
* ``beta_scale`` multiplies beta_t (practical 0.1) [#beta-scale].
* Ten subspaces per iteration, ``N0 = 10`` (practical) [#subspaces-per-iteration].
* Screening, then ``restarts`` L-BFGS-B starts in ``n_optimize`` subspaces [#compute-knobs].
* A TuRBO trust region confines z, the free coordinates and L-BFGS-B (practical) [#trust-region].
* Each subspace moves about ``n_perturb`` fixed coordinates off the incumbent [#sparse-moves].
* ``acquisition="logei"``: log expected improvement instead of eq. (8), an option [#acquisition].
* The centre, the axis design and a line search replace uniform points [#initial-design].
* ``ask(n > 1)`` and pending points: kriging believer [#parallel-proposals].
* Hyperparameter checkpoints in proposal metas make a rebuild exact and cheap
  [#hyperparameters-and-rebuild].
* A checkpoint due among points told without a meta moves to the end of their run
  [#warm-start].
* On a history shared with other algorithms (Auto's), points whose meta names another
  algorithm enter the models but, without constraints, move neither the incumbent nor the
  trust region's counts (``hdbo_engine.base``; Auto tells its COBYLA phase's points as
  design points, ``hdbo_engine.algorithms.auto.members``) [auto.md#own-incumbents].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..acquisition import log_expected_improvement, ucb
from ..base import Optimizer
from ..gp import GP, HyperparameterChain, told_without_meta
from ..maximize import incumbent_candidates, lbfgsb_batch, top_k
from ..options import Options
from ..records import has_record, meta_records
from ..space import Space
from ..streams import MSUCB_MASKS, MSUCB_Z
from ..trust_region import TrustRegion, search_box
from ..util import check_bool, check_int, is_number, warn_beyond_measured_scale

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


@dataclass(frozen=True)
class MSUCBOptions(Options):
    """Options of :class:`MSUCB` (and :class:`~hdbo_engine.algorithms.baselines.GPUCB`);
    field defaults are the practical preset (paper preset in brackets where it differs).

    d: free (subspace) dimension [5, the paper's main setting; capped at D].
    N0, alpha: ``N_t = N0 t^alpha`` subspaces added per iteration [10 (paper 1); 0].
    a, b, delta: Assumption 1 / confidence constants in beta_t [1, 1, 0.1].
    beta_scale: multiplier on beta_t [0.1 (paper 1.0, the theoretical value)].
    n_optimize: subspaces refined by L-BFGS-B per ask, None = all [20 (paper None)].
    restarts: L-BFGS-B starts per refined subspace [3].
    n_candidates: free-coordinate points scoring each refined subspace, None = 32, or 512
        when d = D [None].
    screen_budget: (subspace, point) pairs screening all subspaces per ask [4096].
    refit_growth: hyperparameter refit cadence (HyperparameterChain) [0.1].
    trust_region: confine z, the free coordinates and L-BFGS-B to a TuRBO trust region
        around the incumbent [True (paper False)].
    failure_tol: the region's failure tolerance, None = max(4, D) [10 (paper None)].
    n_perturb: expected number of fixed coordinates each subspace moves off the incumbent;
        the others keep the incumbent's values; None = all [15 (paper None)].
    acquisition: "ucb" (eq. 8, the paper) or "logei" (log expected improvement over the
        best told value) ["ucb"; module docstring].
    n_init, init_centre, init_design, line_search: :class:`~hdbo_engine.options.Options`
        [the design-size rule from 20 points, the centre, the axis design (paper: 20
        uniform points, no centre)].
    """

    init_design: str = "axis"
    d: int = 5
    N0: int = 10
    alpha: float = 0.0
    a: float = 1.0
    b: float = 1.0
    delta: float = 0.1
    beta_scale: float = 0.1
    n_optimize: int | None = 20
    restarts: int = 3
    n_candidates: int | None = None
    screen_budget: int = 4096
    refit_growth: float = 0.1
    trust_region: bool = True
    failure_tol: int | None = 10
    acquisition: str = "ucb"
    n_perturb: float | None = 15

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.acquisition not in _ACQUISITIONS:
            raise ValueError(f"acquisition: expected one of {list(_ACQUISITIONS)}, "
                             f"got {self.acquisition!r}")
        check_int("d", self.d, 0)
        if not isinstance(self.N0, (int, np.integer)) or self.N0 < 1:
            raise ValueError(f"N0: expected an int >= 1, got {self.N0!r}")
        if self.alpha < 0:
            raise ValueError(f"alpha: expected >= 0, got {self.alpha!r}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta: expected 0 < delta < 1, got {self.delta!r}")
        if self.a <= 0 or self.b <= 0 or self.beta_scale <= 0:
            raise ValueError("a, b and beta_scale must be > 0")
        if self.n_optimize is not None and self.n_optimize < 1:
            raise ValueError(f"n_optimize: expected an int >= 1 or None, "
                             f"got {self.n_optimize!r}")
        check_int("screen_budget", self.screen_budget, 1)
        if self.restarts < 1:
            raise ValueError(f"restarts: expected an int >= 1, got {self.restarts!r}")
        check_bool("trust_region", self.trust_region)
        check_int("failure_tol", self.failure_tol, 1, optional=True)
        if self.n_perturb is not None and (not is_number(self.n_perturb)
                                           or not self.n_perturb > 0):
            raise ValueError(f"n_perturb: expected a number > 0 or None, "
                             f"got {self.n_perturb!r}")


PRESETS: dict[str, MSUCBOptions] = {
    "practical": MSUCBOptions(),
    "paper": MSUCBOptions(N0=1, beta_scale=1.0, n_optimize=None, trust_region=False,
                          failure_tol=None, n_perturb=None, init_centre=False,
                          init_design="uniform"),
}


class MSUCB(Optimizer):
    """MS-UCB (Tran-The et al., AAAI 2020, Algorithm 1); see the module docstring.

    Options: :class:`MSUCBOptions` (by name, or ``options=``); ``preset``: "practical"
    [default] or "paper" (:data:`PRESETS`, module docstring).
    """

    name = "msucb"
    default_n_init = 20
    options_class = MSUCBOptions
    presets: ClassVar[dict[str, Options]] = PRESETS

    def __init__(self, space: Space | int, *, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: MSUCBOptions | None = None, **overrides: Any) -> None:
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         **overrides)
        warn_beyond_measured_scale(type(self).__name__, "msucb", self.dim, self.budget)
        o = self.options
        D = self.dim
        if o.trust_region:
            self.trust_region = TrustRegion(D, failure_tol=int(o.failure_tol or max(4, D)))
        self.d = int(min(o.d, D))  # capped at D
        self.n_candidates = int(o.n_candidates or (512 if self.d == D else 32))
        self.free = np.arange(D - self.d, D)  # last d coordinates (Definition 1)
        self.fixed = np.arange(D - self.d)
        self.chain = HyperparameterChain(D, refit_growth=o.refit_growth)
        self._Z_blocks: list[np.ndarray] = []
        self._mask_blocks: list[np.ndarray] = []

    # ------------------------------------------------------------------ Z_t
    def _n_new(self, t: int) -> int:
        return int(round(self.options.N0 * t**self.options.alpha))

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
        return self._draws(self._Z_blocks, MSUCB_Z, t)

    def masks(self, t: int) -> np.ndarray:
        """Which fixed coordinates each subspace of ``Z_t`` moves off the incumbent."""
        k, n_perturb = len(self.fixed), self.options.n_perturb
        p = 1.0 if n_perturb is None or k == 0 else min(1.0, n_perturb / k)
        return self._draws(self._mask_blocks, MSUCB_MASKS, t) < p

    def fixed_values(self, t: int, lo: np.ndarray, hi: np.ndarray,
                     incumbent: np.ndarray) -> np.ndarray:
        """The fixed coordinates of the subspaces of ``Z_t``, mapped into the region [lo, hi].

        ``Z_t`` stores uniform draws on ``[0, 1]^(D - d)``; each maps affinely into the
        current region (the whole cube without a trust region: the paper's z unchanged).
        With ``n_perturb``, coordinates outside a subspace's mask keep the incumbent's value.
        """
        f = self.fixed
        Zv = lo[f] + self.subspaces(t) * (hi - lo)[f]
        if self.options.n_perturb is None:
            return Zv
        return np.where(self.masks(t), Zv, incumbent[f])

    def beta(self, t: int) -> float:
        """``beta_scale * beta_t`` (module docstring)."""
        o = self.options
        return o.beta_scale * msucb_beta(t, self.d, self.dim, o.a, o.b, o.delta)

    # ------------------------------------------------------------- proposal
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        if np.isfinite(self.model_values).sum() < 2:
            return [(rng.random(self.dim), {"random": True}) for _ in range(n)]
        states = meta_records([*self.metas, *(p.meta for p in self._pending)], _CHAIN_KEY)
        gp = self.chain.model(self.X, self.model_values, states=states,
                              bare=told_without_meta(self.metas))
        state = self.chain.state(self.X, self.model_values)
        record = state is not None and not has_record(states, state["fp"])
        incumbent = self.incumbent[0]
        told_values = gp.y_mean + gp.y_std * gp.z
        fantasy = list(self.pending)
        out = []
        for _ in range(n):
            model = gp
            if fantasy:  # kriging believer (module docstring)
                Xp = np.array(fantasy)
                model = _condition(gp, np.vstack([self.X, Xp]),
                                   np.concatenate([told_values, gp.predict(Xp)[0]]))
            t = max(1, self.n_told + len(fantasy) - self._design_length() + 1)
            x, meta = self._maximize(model, incumbent, t, rng)
            if record and not out:  # [#hyperparameters-and-rebuild]
                meta[_CHAIN_KEY] = state
            out.append((x, meta))
            fantasy.append(x)
        return out

    def _maximize(self, gp: GP, incumbent: np.ndarray, t: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, dict]:
        """Eq. (8): best point over the subspaces of Z_t (module docstring)."""
        o = self.options
        beta = self.beta(t)
        # log-EI's incumbent: the best of the model's targets (negated scale), i.e. the best
        # told value, or a kriging-believer fantasy of a pending point if that is higher
        best = float(gp.z.max())
        D, d = self.dim, self.d
        lo, hi = search_box(D, incumbent, self.trust_region)
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
            if o.acquisition == "logei":
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
        if o.n_optimize is None or o.n_optimize >= s:
            chosen = np.arange(s)
        else:  # screen every subspace on the first c_screen candidates
            c_screen = max(1, min(c, o.screen_budget // s))
            screen = score(*post.grid(cand[:c_screen]))[0]
            chosen = top_k(screen.max(1), o.n_optimize)
        scores = score(*post.grid(cand, chosen))[0]
        starts_per = min(int(o.restarts), c)
        start_idx = np.argsort(-scores, axis=1)[:, :starts_per]
        Y0 = cand[start_idx].reshape(-1, d)
        which0 = np.repeat(chosen, starts_per)
        Y, vals = lbfgsb_batch(lambda Yv: acq(Yv, which0), Y0, flo, fhi)
        X = post.full_points(Y, which0)
        vals = np.where(self.seen_mask(X), -np.inf, vals)  # prefer the best unseen point
        k = int(np.argmax(vals))
        return X[k], {"t": t, "subspace": int(which0[k])}

    def _candidates(self, y_inc: np.ndarray, lo: np.ndarray, hi: np.ndarray, c: int,
                    rng: np.random.Generator) -> np.ndarray:
        """``c`` free-coordinate candidates in ``[lo, hi]``: :func:`incumbent_candidates`
        (the incumbent, perturbations of sd 0.1 of the box's side, uniform draws)."""
        return incumbent_candidates(y_inc, lo, hi, c, rng)


def _condition(gp: GP, X: np.ndarray, y: np.ndarray) -> GP:
    """A copy of ``gp`` (same hyperparameters) conditioned on new data."""
    new = GP(gp.dim, gp.noise_bounds, gp.fit_maxiter)
    new.params = gp.params
    return new.set_data(X, y)
