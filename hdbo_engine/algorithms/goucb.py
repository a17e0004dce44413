"""GO-UCB: global optimisation with a parametric (neural) model of the objective.

Paper: Liu & Wang, "Global Optimization with Parametric Function Approximation",
ICML 2023. The paper maximises; the engine minimises, so the model is fitted to
``z = -(y - m) / s`` (``m``, ``s``: mean and standard deviation of the values it
is fitted on) and nothing else changes. torch is imported only by this module,
when :class:`GOUCB` is constructed. The paper mapping, every departure with its
measurement, and what was tried and not kept: ``docs/algorithms/goucb.md``.

Algorithm 1, as implemented:

* Model (Sec. 6): ``f_w(x) = linear2(sigmoid(linear1(x)))``, 25 hidden units,
  ``d_w = 25 (D + 2) + 1`` parameters, on ``2 x - 1`` (:func:`default_model`).
* Phase I (steps 1-5): ``n = ceil(sqrt(T))`` points, then the regression oracle,
  eq. (2): least squares over ``w``.
* Phase II, for every later told point: ``g_i = grad_w f_{x_i}(w_i)``;
  ``Sigma_t = lambda I + sum_i g_i g_i^T`` (eq. 3, rank-one updates, Woodbury,
  never formed); ``w_t`` in closed form, regularised towards ``w_0`` (eq. 5);
  ``Ball_t = {w : ||w - w_t||^2_{Sigma_t} <= beta_t}`` (eq. 6).
* Step 5: ``x_t = argmax_x max_{w in Ball_t} f_x(w)``; ``"linearized"``: the inner
  maximum of the model linearised at ``w_t``,
  ``f_x(w_t) + sqrt(beta_t) ||grad_w f_x(w_t)||_{Sigma_t^{-1}}`` (Lemma 5.4's UCB);
  ``"joint"``: App. D.1's joint ascent over ``x`` and ``w``.
* ``lambda = sqrt(T) log(T)^2`` (App. D.1); ``T = budget`` (``DEFAULT_HORIZON`` =
  100 if None); ``t`` counts Phase II points, told and pending, plus one.
* Output: a uniform draw from the Phase II queries (:meth:`GOUCB.paper_output`).

Defaults, ``preset="paper"`` (App. D.1 as far as it is usable): ``n = ceil(sqrt(T))``
uniform Phase I points, the oracle fitted once (``refit_every = 0``),
``beta = "paper"`` (``d_w^3 F^4 t / T``), step 5 over the whole cube
(``trust_region = False``), ``acquisition = "linearized"`` refined by L-BFGS-B
(``restarts = 4`` of ``n_candidates = 256``). ``preset="practical"`` [default]: the
centre, the axis design and a line search (``init_design = "axis"``),
``refit_every = 10`` with ``refit_maxiter = 100``, ``trust_region = True`` with
``failure_tol = 10`` and ``restarts = 0`` (the best TuRBO candidate),
``beta = "practical"`` (``beta_scale * (1 + t / T)``, ``beta_scale = 1``). Both:
``fit_restarts = 4``, ``fit_maxiter = 500``, ``joint_steps = 200``,
``joint_lr = 0.01``, ``device = "cpu"``.

Departures from the paper, one line each; the section of ``docs/algorithms/goucb.md``
that gives the reason and the measurement is in brackets:

* Eq. (2) is solved by full-batch L-BFGS, not SGD at learning rate 1e-11 [#oracle].
* The oracle is refitted every ``refit_every`` Phase II points (practical) [#refits].
* ``beta = "practical"``: eq. (7)'s shape at the scale of the targets [#beta].
* Step 5 takes the linearised inner maximum in closed form by default
  [#step-5-linearised-inner-maximum].
* Step 5 scores TuRBO candidates in a trust region (practical) [#trust-region-and-candidates].
* The centre, the axis design and a line search replace uniform points [#initial-design].
* ``best`` is the best observed point; the paper's output is ``paper_output`` [#output].
* Pending points add their gradients to ``Sigma``, so a batch spreads out [#pending-points].
* Fits are recorded in proposal metas for an exact, cheap rebuild
  [#state-from-history-and-rebuild].
* A refit due among points told without a meta happens once, at their run's end
  [#warm-start].
* On a history shared with other algorithms (Auto's), points whose meta names another
  algorithm enter the models but, without constraints, move neither the incumbent nor the
  trust region's counts (``hdbo_engine.base``; Auto tells its COBYLA phase's points as
  design points, ``hdbo_engine.algorithms.auto.members``) [auto.md#own-incumbents].
* Known limitations: corner queries on misspecified problems; ``hd``'s Hopper [#limitations].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..base import Optimizer
from ..gp import run_end, told_without_meta
from ..maximize import incumbent_candidates, lbfgsb_batch, maximize_candidates
from ..options import Options
from ..records import has_record, history_fingerprint, latest_record, make_record, meta_records
from ..space import Space
from ..streams import GOUCB_INIT
from ..trust_region import TrustRegion, perturbation_candidates, search_box
from ..util import (
    check_bool,
    check_int,
    impute_failures,
    is_finite_number,
    warn_beyond_measured_scale,
)

__all__ = ["GOUCB", "GOUCBOptions", "default_model"]

_INSTALL_HINT = 'GOUCB needs torch; install it with: pip install "hdbo[torch]"'
_ACQUISITIONS = ("linearized", "joint")
_PHASE1_KEY = "goucb_phase1"  # meta keys of recorded fits [#state-from-history-and-rebuild]
_REFIT_KEY = "goucb_refit"
# D x budget below which a run stays within 2 GiB: 500 evaluations at D = 5000 peaked at
# 3.1 GiB (the n x d_w gradient rows grow as D x n), scaled down [#large-d]
MEASURED_SCALE_GOUCB = 1_500_000


def _import_torch() -> Any:
    try:
        import torch
        import torch.func  # noqa: F401
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return torch


def default_model(dim: int, hidden: int = 25) -> Any:
    """The paper's model [Sec. 6]: ``Linear(dim, hidden) -> Sigmoid -> Linear(hidden, 1)``."""
    torch = _import_torch()
    return torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.Sigmoid(),
                               torch.nn.Linear(hidden, 1))


class _FlatModel:
    """A module evaluated as ``f(w, x)`` with a flat parameter vector ``w`` (torch.func)."""

    def __init__(self, module: Any, torch: Any, device: Any) -> None:
        self.torch = torch
        self.module = module.to(device=device, dtype=torch.float64)
        params = [(n, p) for n, p in self.module.named_parameters() if p.requires_grad]
        if not params:
            raise ValueError("model_factory: the module has no trainable parameters")
        self.names = [n for n, _ in params]
        self.shapes = [p.shape for _, p in params]
        self.sizes = [p.numel() for _, p in params]
        self.d_w = int(sum(self.sizes))
        fc, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad

        def single(w: Any, x: Any) -> Any:
            out = fc(self.module, self._unflatten(w), (2.0 * x[None] - 1.0,))
            return out.reshape(())

        self.single = single
        self.values = vmap(single, in_dims=(None, 0))            # f_x(w) for many x
        self.values_rowwise = vmap(single, in_dims=(0, 0))       # f_{x_k}(w_k)
        self.grads = vmap(grad(single), in_dims=(None, 0))       # grad_w f_x(w), (B, d_w)
        self.grad_one = torch.func.grad_and_value(single)
        self.two_layer = _is_two_layer_sigmoid(self.module, torch)

    def values_per_row(self, W: Any, X: Any) -> Any:
        """``f_{x_k}(w_k)`` for rows ``w_k`` of W (B, d_w) and ``x_k`` of X (B, D)."""
        if not self.two_layer:
            return self.values_rowwise(W, X)
        B, (H, D) = W.shape[0], self.shapes[0]
        W1 = W[:, : H * D].reshape(B, H, D)
        b1, v, d = W[:, H * D: H * D + H], W[:, H * D + H: -1], W[:, -1]
        h = self.torch.sigmoid(self.torch.einsum("bhd,bd->bh", W1, 2.0 * X - 1.0) + b1)
        return (h * v).sum(1) + d

    def values_and_grads(self, w: Any, X: Any) -> tuple[Any, Any]:
        """``f_x(w)`` (B,) and ``grad_w f_x(w)`` (B, d_w) for the rows of X, differentiable in X.

        The default two-layer sigmoid model has closed-form gradients (plain
        tensor ops, much cheaper than ``torch.func`` when differentiated again
        in x); any other module goes through ``torch.func.vmap(grad)``.
        """
        if not self.two_layer:
            return self.values(w, X), self.grads(w, X)
        W1, b1, v, _ = self._unflatten(w).values()
        a = (2.0 * X - 1.0) @ W1.T + b1
        h = self.torch.sigmoid(a)
        s = v.reshape(1, -1) * h * (1.0 - h)  # d f / d a
        B = X.shape[0]
        grads = self.torch.cat([(s[:, :, None] * (2.0 * X - 1.0)[:, None, :]).reshape(B, -1),
                                s, h, self.torch.ones((B, 1), dtype=X.dtype, device=X.device)],
                               dim=1)
        return h @ v.reshape(-1) + w[-1], grads

    def _unflatten(self, w: Any) -> dict[str, Any]:
        chunks = self.torch.split(w, self.sizes)
        return {n: c.reshape(s) for n, c, s in zip(self.names, chunks, self.shapes, strict=True)}

    def flat_params(self) -> Any:
        return self.torch.cat([p.detach().reshape(-1) for _, p in self.module.named_parameters()
                               if p.requires_grad]).clone()


def _is_two_layer_sigmoid(module: Any, torch: Any) -> bool:
    """Whether ``module`` is exactly ``Linear(D, H) -> Sigmoid -> Linear(H, 1)`` (the default)."""
    nn = torch.nn
    return (type(module) is nn.Sequential and len(module) == 3
            and type(module[0]) is nn.Linear and module[0].bias is not None
            and type(module[1]) is nn.Sigmoid
            and type(module[2]) is nn.Linear and module[2].bias is not None
            and module[2].out_features == 1
            and all(p.requires_grad for p in module.parameters()))


class _LowRankBall:
    """``Sigma = lambda I + G^T G`` through ``K = lambda I_m + G G^T`` and its Cholesky factor."""

    def __init__(self, torch: Any, d_w: int, lam: float, device: Any) -> None:
        self.torch, self.lam, self.device = torch, lam, device
        self._G = torch.zeros((8, d_w), dtype=torch.float64, device=device)
        self._L = torch.zeros((8, 8), dtype=torch.float64, device=device)
        self.m = 0

    @property
    def G(self) -> Any:
        return self._G[: self.m]

    @property
    def L(self) -> Any:
        return self._L[: self.m, : self.m]

    def copy(self) -> _LowRankBall:
        new = _LowRankBall.__new__(_LowRankBall)
        new.torch, new.lam, new.device, new.m = self.torch, self.lam, self.device, self.m
        new._G, new._L = self._G.clone(), self._L.clone()
        return new

    @classmethod
    def from_rows(cls, torch: Any, G: Any, lam: float, device: Any) -> _LowRankBall:
        """The ball of all rows of G (m, d_w) at once (one Cholesky factorisation)."""
        new = cls(torch, G.shape[1], lam, device)
        m = G.shape[0]
        cap = max(8, 2 * m)
        new._G = torch.zeros((cap, G.shape[1]), dtype=torch.float64, device=device)
        new._L = torch.zeros((cap, cap), dtype=torch.float64, device=device)
        new._G[:m] = G
        K = G @ G.T + lam * torch.eye(m, dtype=torch.float64, device=device)
        L, info = torch.linalg.cholesky_ex(K)
        if int(info):  # only for a tiny lam: jitter keeps the factorisation defined
            L = torch.linalg.cholesky(K + 1e-9 * float(K.diagonal().max()) * torch.eye(
                m, dtype=torch.float64, device=device))
        new._L[:m, :m] = L
        new.m = m
        return new

    def append(self, g: Any) -> None:
        """Rank-one update ``Sigma += g g^T`` (eq. 3): one new row of G and of chol(K)."""
        torch, m = self.torch, self.m
        if m == self._G.shape[0]:
            cap = 2 * m
            G = torch.zeros((cap, self._G.shape[1]), dtype=torch.float64, device=self.device)
            L = torch.zeros((cap, cap), dtype=torch.float64, device=self.device)
            G[:m], L[:m, :m] = self._G, self._L
            self._G, self._L = G, L
        k = self.G @ g
        diag = g @ g + self.lam
        if m:
            ell = torch.linalg.solve_triangular(self.L, k[:, None], upper=False)[:, 0]
            self._L[m, :m] = ell
            diag = diag - ell @ ell
        self._L[m, m] = torch.sqrt(torch.clamp(diag, min=1e-9 * self.lam))
        self._G[m] = g
        self.m = m + 1

    def _k_solve(self, V: Any) -> Any:
        """``K^{-1} V`` for V (m, k)."""
        return self.torch.cholesky_solve(V, self.L, upper=False)

    def inv_apply(self, v: Any) -> Any:
        """``Sigma^{-1} v`` (Woodbury), v (d_w,)."""
        if not self.m:
            return v / self.lam
        return (v - self.G.T @ self._k_solve((self.G @ v)[:, None])[:, 0]) / self.lam

    def inv_norm_sq(self, Gx: Any) -> Any:
        """``||g||^2_{Sigma^{-1}}`` for the rows g of Gx (B, d_w), differentiable."""
        sq = (Gx * Gx).sum(1)
        if not self.m:
            return sq / self.lam
        proj = self.torch.linalg.solve_triangular(self.L, self.G @ Gx.T, upper=False)
        return (sq - (proj * proj).sum(0)) / self.lam

    def inv_sqrt_operator(self) -> Callable[[Any], Any]:
        """A function ``V -> V Sigma^{-1/2}`` for rows V (B, d_w) (``Sigma`` is symmetric)."""
        torch, lam = self.torch, self.lam
        if not self.m:
            return lambda V: V / math.sqrt(lam)
        s2, U = torch.linalg.eigh(self.G @ self.G.T)
        keep = s2 > 1e-12 * max(float(s2.max()), 1.0)
        s2, U = s2[keep], U[:, keep]
        basis = (self.G.T @ U) / torch.sqrt(s2)  # orthonormal columns spanning row(G)
        shrink = 1.0 / torch.sqrt(s2 + lam) - 1.0 / math.sqrt(lam)
        return lambda V: V / math.sqrt(lam) + ((V @ basis) * shrink) @ basis.T


@dataclass(frozen=True)
class GOUCBOptions(Options):
    """Options of :class:`GOUCB`; field defaults are the practical preset (paper preset in
    brackets where it differs).

    n_init: Phase I size n; None is the design-size rule from ceil(sqrt(T)), at least 2
        [practical: the axis design's max(ceil(sqrt(T)), min(2 D + 1, T // 4)), 21 when its
        first probes find no effect (:mod:`hdbo_engine.design`); paper: ceil(sqrt(T))
        uniform points, no centre].
    hidden: hidden units of the default model [25, Sec. 6].
    model_factory: ``D -> torch.nn.Module`` replacing the default model
        (input: points of ``[-1, 1]^D`` of shape (1, D); output: one number) [None].
    lam: lambda of eqs. (3)-(5), None = sqrt(T) log(T)^2 [None, App. D.1].
    beta: "practical", "paper" or a positive float ["practical" (paper "paper")].
    beta_scale: multiplier of the practical beta_t [1.0].
    acquisition: "linearized" or "joint" (step 5) ["linearized"].
    n_candidates: points scored per ask before refinement [256].
    restarts: best candidates refined by L-BFGS-B per ask; 0 takes the best
        candidate as it is [0 (paper 4)].
    fit_restarts, fit_maxiter: oracle initialisations (first fit) and L-BFGS
        iterations per fit [4, 500].
    refit_maxiter: L-BFGS iterations of each warm-started refit [100 (paper 500)].
    refit_every: refit the oracle on all told points after every this many
        Phase II observations, warm-started; 0 fits once, after Phase I [10 (paper 0)].
    trust_region: confine step 5 to a :class:`TrustRegion` around the
        incumbent [True (paper False)].
    failure_tol: consecutive failures that halve the trust region [10].
    joint_steps, joint_lr: Adam steps and step size of the joint ascent [200, 0.01].
    device: torch device for the model and the linear algebra ["cpu"].
    """

    init_design: str = "axis"
    hidden: int = 25
    model_factory: Callable[[int], Any] | None = None
    lam: float | None = None
    beta: str | float = "practical"
    beta_scale: float = 1.0
    acquisition: str = "linearized"
    n_candidates: int = 256
    restarts: int = 0
    fit_restarts: int = 4
    fit_maxiter: int = 500
    refit_maxiter: int = 100
    refit_every: int = 10
    trust_region: bool = True
    failure_tol: int = 10
    joint_steps: int = 200
    joint_lr: float = 0.01
    device: str | Any = "cpu"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("hidden", self.hidden, 1)
        check_int("n_candidates", self.n_candidates, 1)
        check_int("restarts", self.restarts, 0)
        check_int("fit_restarts", self.fit_restarts, 1)
        check_int("fit_maxiter", self.fit_maxiter, 1)
        check_int("refit_every", self.refit_every, 0)
        check_int("refit_maxiter", self.refit_maxiter, 1)
        check_int("failure_tol", self.failure_tol, 1)
        check_int("joint_steps", self.joint_steps, 1)
        if self.model_factory is not None and not callable(self.model_factory):
            raise TypeError(f"model_factory: expected a callable D -> torch.nn.Module, "
                            f"got {self.model_factory!r}")
        if self.lam is not None and not (is_finite_number(self.lam) and self.lam > 0):
            raise ValueError(f"lam: expected a positive number or None, got {self.lam!r}")
        beta = self.beta
        if isinstance(beta, str):
            if beta not in ("practical", "paper"):
                raise ValueError(f"beta: expected 'practical', 'paper' or a positive number, "
                                 f"got {beta!r}")
        elif not (is_finite_number(beta) and beta > 0):
            raise ValueError(f"beta: expected 'practical', 'paper' or a positive number, "
                             f"got {beta!r}")
        if not (is_finite_number(self.beta_scale) and self.beta_scale > 0):
            raise ValueError(f"beta_scale: expected a positive number, "
                             f"got {self.beta_scale!r}")
        check_bool("trust_region", self.trust_region)
        if self.acquisition not in _ACQUISITIONS:
            raise ValueError(f"acquisition: expected one of {_ACQUISITIONS}, "
                             f"got {self.acquisition!r}")
        if not (is_finite_number(self.joint_lr) and self.joint_lr > 0):
            raise ValueError(f"joint_lr: expected a positive number, got {self.joint_lr!r}")


PRESETS: dict[str, GOUCBOptions] = {
    "practical": GOUCBOptions(),
    "paper": GOUCBOptions(beta="paper", restarts=4, refit_every=0, refit_maxiter=500,
                          trust_region=False, init_centre=False, init_design="uniform"),
}


class GOUCB(Optimizer):
    """GO-UCB (Liu & Wang, ICML 2023, Algorithm 1); see the module docstring.

    Options: :class:`GOUCBOptions` (by name, or ``options=``). Presets (:data:`PRESETS`;
    docs/algorithms/goucb.md, "Presets"): ``"paper"`` is App. D.1's configuration:
    ``beta="paper"``, ``n_init`` = ceil(sqrt(T)) uniform points (``init_centre=False``), the
    25-unit sigmoid network fitted once after Phase I by least squares (``refit_every=0``),
    the closed-form linearised step 5 over the whole cube, no trust region.
    ``"practical"`` [default]: see the module docstring for its values and their
    measurements. ``budget``: the horizon T of Theorem 4.1 [None:
    :data:`~hdbo_engine.design.DEFAULT_HORIZON`].
    """

    name = "goucb"
    default_n_init = 10
    options_class = GOUCBOptions
    presets: ClassVar[dict[str, Options]] = PRESETS

    def _uniform_n_init(self) -> int:
        """Phase I size with uniform draws, ``n = ceil(sqrt(T))`` (App. D.1), at least 2."""
        return max(2, math.ceil(math.sqrt(self.horizon)))

    def __init__(self, space: Space | int, *, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: GOUCBOptions | None = None, **overrides: Any) -> None:
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         **overrides)
        warn_beyond_measured_scale(type(self).__name__, "goucb", self.dim, self.budget,
                                   MEASURED_SCALE_GOUCB)
        o = self.options
        torch = _import_torch()
        try:
            self.device = torch.device(o.device)
        except (RuntimeError, TypeError, ValueError):
            raise ValueError(f"device: expected a torch device such as 'cpu' or 'cuda', "
                             f"got {o.device!r}") from None
        self.torch = torch
        horizon = self.horizon
        self.lam = float(o.lam) if o.lam is not None else math.sqrt(horizon) * math.log(
            horizon) ** 2
        self.lam = max(self.lam, 1e-6)
        if o.trust_region:
            self.trust_region = TrustRegion(self.dim, failure_tol=int(o.failure_tol))
        self.model = _FlatModel(self._make_module(0), torch, self.device)
        self._check_model()
        self._phase1: dict[str, Any] | None = None  # cached oracle fit (Phase I)
        self._anchor: dict[str, Any] | None = None  # latest fit: w0, mean, std
        self._ball: _LowRankBall | None = None      # Phase II state after n_done tells
        self._n_done = 0
        self._w: Any = None
        self._b: Any = None

    # ---------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        """Pickle without torch objects that cannot travel; the Phase I fit is kept."""
        state = self.__dict__.copy()
        for key in ("torch", "model", "_anchor", "_ball", "_w", "_b"):
            state[key] = None
        state["_n_done"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.torch = _import_torch()
        self.model = _FlatModel(self._make_module(0), self.torch, self.device)

    # ---------------------------------------------------------------- model
    def _make_module(self, restart: int) -> Any:
        """A fresh module, initialised under a torch generator seeded by (seed, restart)."""
        torch = _import_torch()
        seq = np.random.SeedSequence(self.seed, spawn_key=(GOUCB_INIT, restart))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seq.generate_state(1, dtype=np.uint64)[0] % (2**63)))
            factory = self.options.model_factory
            if factory is None:
                return default_model(self.dim, int(self.options.hidden))
            module = factory(self.dim)
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"model_factory: expected it to return a torch.nn.Module, "
                            f"got {type(module).__name__}")
        return module

    def _check_model(self) -> None:
        torch = self.torch
        x = torch.full((1, self.dim), 0.5, dtype=torch.float64, device=self.device)
        try:
            out = self.model.module(2.0 * x - 1.0)
        except Exception as exc:
            raise ValueError(f"model_factory: the module failed on an input of shape "
                             f"(1, {self.dim}): {exc}") from exc
        if out.numel() != 1:
            raise ValueError(f"model_factory: the module must return one number per input row, "
                             f"got shape {tuple(out.shape)}")

    @property
    def d_w(self) -> int:
        """Number of model parameters."""
        return self.model.d_w

    def _tensor(self, a: np.ndarray) -> Any:
        return self.torch.as_tensor(np.asarray(a, dtype=float), dtype=self.torch.float64,
                                    device=self.device)

    @staticmethod
    def _standardise(y: np.ndarray) -> tuple[float, float]:
        mean, std = float(y.mean()), float(y.std())
        return mean, (std if std > 1e-12 * max(1.0, abs(mean)) else 1.0)

    # -------------------------------------------------------------- Phase I
    def _fit_phase1(self, end: int) -> dict[str, Any]:
        """Regression oracle, eq. (2), on the first ``end`` told points (cached)."""
        X, y = self.X[:end], impute_failures(self.model_values[:end])
        cached = self._phase1
        if cached is not None and np.array_equal(cached["X"], X) and np.array_equal(cached["y"], y):
            return cached
        mean, std = self._standardise(y)
        z = -(y - mean) / std
        Xt, zt = self._tensor(X), self._tensor(z)
        best_w, best_loss = None, math.inf
        hit = latest_record(meta_records(self.metas, _PHASE1_KEY), end - 1, end,
                            self._fingerprint, self._read_fit)
        if hit is not None:  # recorded by an earlier ask on this history (docstring)
            best_w, best_loss = hit[2]
        for r in range(0 if best_w is not None else self.options.fit_restarts):
            w0 = self.model.flat_params() if r == 0 else \
                _FlatModel(self._make_module(r), self.torch, self.device).flat_params()
            w, loss = self._least_squares(w0, Xt, zt)
            if loss < best_loss:
                best_w, best_loss = w, loss
        if best_w is None:  # every restart diverged: keep the initial weights
            best_w = self.model.flat_params()
        self._phase1 = {"X": X.copy(), "y": y.copy(), "mean": mean, "std": std,
                        "w0": best_w, "loss": best_loss, "F": float(np.abs(z).max())}
        self._anchor, self._ball, self._n_done, self._w, self._b = None, None, 0, None, None
        return self._phase1

    def _least_squares(self, w_init: Any, X: Any, z: Any, maxiter: int | None = None
                       ) -> tuple[Any, float]:
        """Full-batch L-BFGS (strong Wolfe) on mean((f_w(x_j) - z_j)^2), eq. (2)."""
        torch = self.torch
        w = w_init.clone().requires_grad_(True)
        opt = torch.optim.LBFGS([w], lr=1.0, max_iter=maxiter or int(self.options.fit_maxiter),
                                history_size=50, tolerance_grad=1e-10, tolerance_change=1e-14,
                                line_search_fn="strong_wolfe")

        def objective() -> Any:
            return ((self.model.values(w, X) - z) ** 2).mean()

        def closure() -> Any:
            opt.zero_grad()
            loss = objective()
            loss.backward()
            return loss

        opt.step(closure)
        with torch.no_grad():
            loss = float(objective())
        if not math.isfinite(loss) or not bool(torch.isfinite(w).all()):
            return w_init, math.inf
        return w.detach(), loss

    # ------------------------------------------------------------- Phase II
    def _sync(self) -> dict[str, Any] | None:
        """Bring the Phase II state up to date with the told history (replay, cached): from
        the latest refit recorded for this history, each later told point enters eqs. (3)
        and (5) (:meth:`_observe`), and the oracle is refitted every ``refit_every`` of them
        (:meth:`_refit`; one due in a run of points told without a meta: at the run's end)."""
        end = self._design_end()
        if end is None:
            return None
        p1 = self._fit_phase1(end)
        if self._ball is None:  # no Phase II point yet: Sigma_t = lambda I, w_t = w_0
            self._anchor = {"w0": p1["w0"], "mean": p1["mean"], "std": p1["std"]}
            self._ball = _LowRankBall(self.torch, self.d_w, self.lam, self.device)
            self._n_done, self._w, self._b = 0, p1["w0"].clone(), self.torch.zeros_like(p1["w0"])
        y_all = impute_failures(self.model_values)
        bare = told_without_meta(self.metas)
        self._restore_refit(end, y_all, bare)
        every = int(self.options.refit_every)
        while (i := end + self._n_done) < self.n_told:
            due = end + every * (self._n_done // every + 1) if every else self.n_told + 1
            if due <= self.n_told and bare[i:due].all():  # a refit due in a run: at its end
                n = run_end(due, bare)
                self._refit(n, y_all[:n], self._anchor["w0"])
                self._n_done = n - end
                continue
            self._observe(self.X[i], y_all[i])
            if every and self._n_done % every == 0:
                self._refit(i + 1, y_all[: i + 1])
        return p1

    def _observe(self, x: np.ndarray, y: float) -> None:
        """One told Phase II point ``(x, y)``: its gradient at ``w_t`` enters ``Sigma_t``
        (eq. 3) and ``w_t`` is eq. (5) in closed form, regularised towards ``w_0``."""
        a = self._anchor
        g, f = self.model.grad_one(self._w, self._tensor(x))  # gradient and value at (x, w_t)
        z = -(y - a["mean"]) / a["std"]
        self._ball.append(g)                                          # eq. (3)
        self._b = self._b + g * (g @ self._w + z - f)
        self._w = self._ball.inv_apply(self._b + self.lam * a["w0"])  # eq. (5)
        self._n_done += 1

    def _refit(self, n: int, y: np.ndarray, start: Any = None) -> None:
        """Refit the oracle on the first ``n`` told points and restart eq. (3)-(5) from it.

        The fit (eq. 2, ``refit_maxiter`` iterations) starts from ``start``, by default the
        current ``w_t``; then ``Sigma`` holds every told point's gradient at the new ``w_0``
        and ``w_t`` is eq. (5) as if all of them had been observed at ``w_0``.

        A refit due inside a run of points told without a meta happens once, at the run's
        end (:func:`~hdbo_engine.gp.run_end`), started from the latest fit's ``w_0``: the
        per-point steps of the run are not taken, since the refit replaces them.
        """
        mean, std = self._standardise(y)
        Xt, zt = self._tensor(self.X[:n]), self._tensor(-(y - mean) / std)
        w0, loss = self._least_squares(self._w if start is None else start, Xt, zt,
                                       int(self.options.refit_maxiter))
        if not math.isfinite(loss):
            w0 = self._anchor["w0"]
        self._anchor_at(n, y, w0)

    def _anchor_at(self, n: int, y: np.ndarray, w0: Any) -> None:
        """Restart eq. (3)-(5) from the oracle ``w0`` fitted on the first ``n`` told points
        (values ``y``): ``Sigma`` from every gradient at ``w0``, ``w_t`` by eq. (5)."""
        torch = self.torch
        mean, std = self._standardise(y)
        Xt, zt = self._tensor(self.X[:n]), self._tensor(-(y - mean) / std)
        with torch.no_grad():
            f, G = self.model.values_and_grads(w0, Xt)
            self._ball = _LowRankBall.from_rows(torch, G, self.lam, self.device)
            self._b = G.T @ (G @ w0 + zt - f)
            self._w = self._ball.inv_apply(self._b + self.lam * w0)
        self._anchor = {"w0": w0, "mean": mean, "std": std, "n": n}

    # ------------------------------------------------------- recorded fits
    def _fingerprint(self, n: int) -> str:
        """Hash of the settings that shape the fits and of the first n told points."""
        o = self.options
        settings = repr((self.seed, self.dim, int(o.hidden), repr(o.model_factory),
                         int(o.fit_restarts), int(o.fit_maxiter), int(o.refit_maxiter),
                         int(o.refit_every), self.lam, self.n_init))
        return history_fingerprint(settings, self.X[:n], self.model_values[:n])

    def _record(self, n: int, w: Any, loss: float = math.nan) -> dict[str, Any]:
        """A fit on the first ``n`` told points: ``{"n", "w", "loss", "fp"}`` (module
        docstring)."""
        return make_record(n, self._fingerprint(n), w=[float(v) for v in w.cpu().numpy()],
                           loss=float(loss))

    def _read_fit(self, record: dict[str, Any]) -> tuple[Any, float] | None:
        """A recorded fit's ``(w, loss)``; None unless ``w`` holds ``d_w`` finite numbers."""
        w = np.asarray(record["w"], dtype=float)
        if w.shape != (self.d_w,) or not np.isfinite(w).all():
            return None
        return self._tensor(w), float(record["loss"])

    def _restore_refit(self, end: int, y_all: np.ndarray, bare: np.ndarray) -> None:
        """Jump to the latest refit recorded for this history ahead of the replay, at a refit
        position or inside a run of points told without a meta (:meth:`_refit`); never when
        the first value is a failure, whose imputation is not prefix-consistent."""
        every = int(self.options.refit_every)
        if not every or not np.isfinite(self.model_values[0]):
            return
        hit = latest_record(meta_records(self.metas, _REFIT_KEY), end + self._n_done,
                            self.n_told, self._fingerprint, self._read_fit,
                            at=lambda n: (n - end) % every == 0 or bool(bare[n - 1]))
        if hit is not None:
            n, _, (w0, _) = hit
            self._anchor_at(n, y_all[:n], w0)
            self._n_done = n - end

    def _records(self) -> dict[str, dict[str, Any]]:
        """What this ask records in its first proposal's meta: the Phase I fit and the latest
        refit, each unless a told or pending meta already holds it (module docstring)."""
        metas = [*self.metas, *(p.meta for p in self._pending)]
        fits = {_PHASE1_KEY: (self._design_end(), self._phase1["w0"], self._phase1["loss"]),
                _REFIT_KEY: (self._anchor.get("n"), self._anchor["w0"], math.nan)}
        return {key: self._record(n, w, loss) for key, (n, w, loss) in fits.items()
                if n is not None and not has_record(meta_records(metas, key),
                                                    self._fingerprint(n))}

    def beta(self, t: int) -> float:
        """beta_t of eq. (6) for Phase II round t (module docstring)."""
        o = self.options
        if o.beta == "practical":
            return float(o.beta_scale) * (1.0 + t / self.horizon)
        if o.beta == "paper":
            F = self._phase1["F"] if self._phase1 is not None else 1.0
            return float(self.d_w) ** 3 * F**4 * t / self.horizon
        return float(o.beta)

    def paper_output(self, seed: int | None = None) -> np.ndarray | None:
        """The paper's output: a Phase II query drawn uniformly (Algorithm 1, "Output")."""
        end = self._design_end()
        if end is None or end >= self.n_told:
            return None
        i = np.random.default_rng(seed).integers(end, self.n_told)
        return self.X[i].copy()

    # ------------------------------------------------------------- proposal
    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        p1 = self._sync()
        if p1 is None:  # Phase I not complete (its points are still pending)
            return [(rng.random(self.dim), {"phase": 1}) for _ in range(n)]
        ball = self._ball.copy()
        w = self._w
        pending = self.pending
        if len(pending):
            for g in self.model.values_and_grads(w, self._tensor(pending))[1]:
                ball.append(g)
        out = []
        records = self._records()
        for k in range(n):
            t = self._n_done + len(pending) + k + 1  # Phase II points told or pending, plus one
            beta = self.beta(t)
            x, value = self._select(ball, w, beta, rng)
            meta = {"phase": 2, "t": int(t), "ucb": float(value)}
            out.append((x, {**meta, **records} if k == 0 else meta))
            ball.append(self.model.values_and_grads(w, self._tensor(x[None]))[1][0])
        return out

    def _ucb(self, ball: _LowRankBall, w: Any, beta: float, X: Any) -> Any:
        """Closed-form inner maximum of the linearised model (module docstring)."""
        f, grads = self.model.values_and_grads(w, X)
        q = ball.inv_norm_sq(grads)
        return f + math.sqrt(beta) * self.torch.sqrt(self.torch.clamp(q, min=1e-300))

    def _region(self) -> tuple[np.ndarray, np.ndarray]:
        """Where step 5 searches: the trust region around the incumbent, or the cube
        (:func:`search_box`)."""
        best = self.incumbent
        return search_box(self.dim, None if best is None else best[0], self.trust_region)

    def _candidates(self, rng: np.random.Generator, lower: np.ndarray,
                    upper: np.ndarray) -> np.ndarray:
        """Step 5's starting points in [lower, upper] (module docstring)."""
        c = self.options.n_candidates
        incumbent = self.incumbent
        centre = incumbent[0] if incumbent is not None else rng.random(self.dim)
        if self.trust_region is not None:
            return perturbation_candidates(centre, lower, upper, c, rng)
        return incumbent_candidates(centre, lower, upper, c, rng)

    def _select(self, ball: _LowRankBall, w: Any, beta: float,
                rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """Step 5 of Phase II: ``argmax_x max_{w in Ball_t} f_x(w)`` (over the region)."""
        torch = self.torch
        lower, upper = self._region()
        cand = self._candidates(rng, lower, upper)

        def score(C: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                s = torch.cat([self._ucb(ball, w, beta, self._tensor(C[k:k + 256]))
                               for k in range(0, len(C), 256)]).cpu().numpy()
            return np.where(np.isfinite(s), s, -np.inf)

        def acq(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            Xt = self._tensor(Y).requires_grad_(True)
            val = self._ucb(ball, w, beta, Xt)
            (grad,) = torch.autograd.grad(val.sum(), Xt)
            return val.detach().cpu().numpy(), grad.cpu().numpy()

        def refine(starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if self.options.acquisition == "joint":
                x, value = self._joint_ascent(ball, w, beta, starts, lower, upper)
                return x[None], np.array([value])
            return lbfgsb_batch(acq, starts, lower, upper)

        X, vals = maximize_candidates(cand, score, self.options.restarts, refine)
        k = int(np.argmax(vals))
        return X[k], float(vals[k])

    def _joint_ascent(self, ball: _LowRankBall, w: Any, beta: float, starts: np.ndarray,
                      lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, float]:
        """The paper's joint gradient ascent over (x, w in Ball_t), projected (App. D.1)."""
        torch = self.torch
        inv_sqrt = ball.inv_sqrt_operator()
        radius = math.sqrt(beta)
        X0 = self._tensor(starts)
        lo, hi = self._tensor(lower), self._tensor(upper)
        with torch.no_grad():  # start u at the linearised maximiser Sigma^{-1/2} g / ||.||
            U0 = inv_sqrt(self.model.values_and_grads(w, X0)[1])
            U0 = U0 / torch.clamp(U0.norm(dim=1, keepdim=True), min=1e-300)
        X = X0.clone().requires_grad_(True)
        U = U0.clone().requires_grad_(True)
        opt = torch.optim.Adam([X, U], lr=float(self.options.joint_lr))
        best_val = torch.full((len(starts),), -math.inf, dtype=torch.float64, device=self.device)
        best_X = X0.clone()
        for _ in range(self.options.joint_steps + 1):
            W = w[None] + radius * inv_sqrt(U)
            val = self.model.values_per_row(W, X)
            with torch.no_grad():
                better = torch.isfinite(val) & (val > best_val)
                best_val = torch.where(better, val, best_val)
                best_X[better] = X[better]
            opt.zero_grad()
            (-val.sum()).backward()
            opt.step()
            with torch.no_grad():  # project onto the region and the unit ball
                X.clamp_(lo, hi)
                U.div_(torch.clamp(U.norm(dim=1, keepdim=True), min=1.0))
        k = int(torch.argmax(best_val))
        return best_X[k].cpu().numpy(), float(best_val[k])

