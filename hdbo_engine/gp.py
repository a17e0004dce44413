"""Exact Gaussian process with a Matern-5/2 ARD kernel (or, optionally, a Gaussian one).

Model (Rasmussen & Williams, ch. 2 and 4):
``k(x, x') = s2 * (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r)``, ``r = ||(x - x') / ell||``,
observations ``y = f(x) + eps``, ``eps ~ N(0, noise)``, on standardised outputs.
``GP(..., kernel_type="rbf")`` uses the Gaussian (squared-exponential) ARD kernel
``k = s2 exp(-r^2 / 2)`` instead (R&W eq. 4.9); everything else is unchanged.

Choices the papers leave open, made here:

* **Outputs** are standardised (mean 0, std 1; std 1 when y is constant).
* **Hyperparameters** follow the dimension-scaled recipe of Hvarfner et al.
  (2024), which keeps ARD well posed with few points in high dimension:
  MAP with ``log ell ~ N(sqrt2 + log(D)/2, sqrt3)`` per lengthscale,
  ``log noise ~ N(-4, 1)``, and the signal variance fixed at ``s2 = 1`` on the
  standardised outputs. Box bounds ``ell in [1e-3, 1e3 sqrt(D)]``,
  ``noise in [1e-6, 0.5]``. The MAP is over the logs; BoTorch, whose models
  implement the recipe, takes it over the values themselves (modes
  ``exp(mu - sigma^2)``: a lengthscale of 0.71 against 14 at D = 12), measured and
  not adopted in ``docs/algorithms/auto.md``, "Alternatives considered".
  Without the noise prior and with a free ``s2`` the fit often settles on
  "everything is noise" (s2 at its lower bound, noise at its upper bound) with
  few points, and the UCB then only chases variance into the corners of the box.
  The optimiser is L-BFGS-B with the analytic gradient, started from the prior
  mode on the first fit; later fits start from the previous optimum
  (``prior_start=True`` adds the prior mode, ``restarts > 1`` jittered
  prior-mode starts); the best optimum wins. From the prior's mode the fit can stay
  with long lengthscales and the noise at its bound; a second start from short
  lengthscales was measured and not adopted (the same section of ``auto.md``).
* **Numerics**: Cholesky with escalating jitter (1e-8 .. 1e-2 of the signal
  variance), so duplicate points and constant outputs never raise. Kernel
  values beyond a scaled distance where they fall under 1e-60 of the signal
  variance, and Cholesky entries under 1e-60 of its scale, are exact zeros:
  subnormal numbers, in the inputs or produced inside a triangular solve from
  tiny ones, slow every product and solve several times. Values this small
  change no posterior mean or variance by more than rounding.

Posterior mean/variance and their gradients w.r.t. the inputs are available
on axis-aligned subspaces through :class:`SubspacePosterior`, the workhorse of
acquisition maximisation (the full space is the subspace with every
coordinate free).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular
from scipy.optimize import minimize

from .records import history_fingerprint, latest_record, make_record

SQRT5 = np.sqrt(5.0)
NOISE_PRIOR_MU = -4.0  # log noise variance ~ N(-4, 1) (Hvarfner et al. 2024)
_JITTERS = (0.0, 1e-8, 1e-6, 1e-4, 1e-2)


@dataclass
class GPParams:
    """Kernel hyperparameters (on the standardised output scale)."""

    lengthscales: np.ndarray
    signal_var: float = 1.0
    noise_var: float = 1e-4

    def to_vector(self) -> np.ndarray:
        return np.concatenate(
            [np.log(self.lengthscales), [np.log(self.signal_var), np.log(self.noise_var)]]
        )

    @classmethod
    def from_vector(cls, theta: np.ndarray) -> GPParams:
        return cls(np.exp(theta[:-2]), float(np.exp(theta[-2])), float(np.exp(theta[-1])))


# Beyond these scaled distances a kernel value is below 1e-60 of the signal
# variance and is set to exactly 0: exp() returning subnormal numbers, and
# matrix products reading them, are several times slower than on normal ones
# (measured: the Matern values for an MS-UCB scoring batch at D = 100, 5x),
# and values just above the subnormal range still produce subnormals inside
# triangular solves (below).
MATERN52_CUTOFF = 66.0
RBF_CUTOFF = 16.7

# Kernel entries per block in SubspacePosterior.grid (about 2 MB of float64).
_GRID_BLOCK = 1 << 18


def matern52(r: np.ndarray, signal_var: float) -> np.ndarray:
    """Matern-5/2 kernel value as a function of the scaled distance ``r``."""
    rc = np.minimum(r, MATERN52_CUTOFF)
    k = signal_var * (1.0 + SQRT5 * rc + (5.0 / 3.0) * rc**2) * np.exp(-SQRT5 * rc)
    return np.where(r < MATERN52_CUTOFF, k, 0.0)


def _matern52_q(r: np.ndarray, signal_var: float) -> np.ndarray:
    """``-dk/dr / r``: with it, ``dk/dx = -q (x - x') / ell^2``."""
    rc = np.minimum(r, MATERN52_CUTOFF)
    q = signal_var * (5.0 / 3.0) * (1.0 + SQRT5 * rc) * np.exp(-SQRT5 * rc)
    return np.where(r < MATERN52_CUTOFF, q, 0.0)


def rbf(r: np.ndarray, signal_var: float) -> np.ndarray:
    """Gaussian (squared-exponential) kernel value as a function of the scaled distance ``r``."""
    rc = np.minimum(r, RBF_CUTOFF)
    return np.where(r < RBF_CUTOFF, signal_var * np.exp(-0.5 * rc**2), 0.0)


def _rbf_q(r: np.ndarray, signal_var: float) -> np.ndarray:
    """``-dk/dr / r`` of the Gaussian kernel (equal to the kernel value)."""
    return rbf(r, signal_var)


# kernel_type -> (k(r, s2), -dk/dr / r)
KERNELS = {"matern52": (matern52, _matern52_q), "rbf": (rbf, _rbf_q)}


KernelFn = Callable[[np.ndarray, float], np.ndarray]


def kernel_functions(kernel_type: str) -> tuple[KernelFn, KernelFn]:
    """``(k, q)`` for a kernel name in :data:`KERNELS`; ``ValueError`` names the options."""
    try:
        return KERNELS[kernel_type]
    except (KeyError, TypeError):
        raise ValueError(f"kernel_type: expected one of {sorted(KERNELS)}, "
                         f"got {kernel_type!r}") from None


def scaled_sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between rows of A and B (already scaled)."""
    d2 = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d2, 0.0)


def robust_cholesky(K: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of K, adding diagonal jitter until it succeeds.

    Entries below ``1e-60`` of the factor's scale are set to 0: far-apart
    points leave tiny or subnormal numbers in the factor, and triangular
    solves multiplying them produce subnormals and run several times slower
    (measured on MS-UCB histories at D = 100: with a 1e-150 flush, 18% of a
    Levy history's factor lay below 1e-60 and an 8192-column solve took
    70 ms instead of 27 ms; without any flush, cho_solve 3.4 ms instead of 0.9 ms).
    """
    scale = max(float(np.mean(np.diag(K))), 1e-12)
    for jitter in _JITTERS:
        try:
            L = cholesky(K + jitter * scale * np.eye(len(K)), lower=True, check_finite=False)
            break
        except LinAlgError:
            continue
    else:  # last resort: eigenvalue clipping keeps the factor usable
        w, V = np.linalg.eigh(K)
        w = np.maximum(w, 1e-2 * scale)
        L = cholesky((V * w) @ V.T, lower=True, check_finite=False)
    L[np.abs(L) < 1e-60 * np.sqrt(scale)] = 0.0
    return L


class GP:
    """Exact GP regression with Matern-5/2 ARD kernel (see module docstring).

    Parameters
    ----------
    dim: input dimension D.
    noise_bounds: bounds on the noise variance (standardised scale), default (1e-6, 0.5).
    fit_maxiter: L-BFGS-B iterations per hyperparameter start, default 60.
    kernel_type: "matern52" (Matern-5/2 ARD) or "rbf" (Gaussian ARD), default "matern52".
    """

    def __init__(
        self,
        dim: int,
        noise_bounds: tuple[float, float] = (1e-6, 0.5),
        fit_maxiter: int = 60,
        kernel_type: str = "matern52",
    ) -> None:
        self._k, self._q = kernel_functions(kernel_type)
        self.kernel_type = kernel_type
        self.dim = dim
        self.prior_mu = np.sqrt(2.0) + 0.5 * np.log(dim)
        self.prior_sigma = np.sqrt(3.0)
        self.noise_bounds = noise_bounds
        self.fit_maxiter = fit_maxiter
        self.params = GPParams(np.full(dim, np.exp(self.prior_mu)), 1.0, np.exp(NOISE_PRIOR_MU))
        self.X = np.empty((0, dim))
        self.extra_noise = np.zeros(0)
        self.y_mean, self.y_std = 0.0, 1.0
        self.fitted = False

    # ------------------------------------------------------------------ data
    def set_data(self, X: np.ndarray, y: np.ndarray, noise: np.ndarray | None = None) -> GP:
        """Condition on (X, y) with the current hyperparameters.

        ``noise`` (optional, shape (n,)): extra per-point noise variance added to
        the fitted homoscedastic noise, in units of the standardised output
        variance (e.g. for estimated rather than observed values). Default: none.
        """
        self.X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if noise is None:
            self.extra_noise = np.zeros(len(y))
        else:
            extra = np.asarray(noise, dtype=float)
            if extra.shape != y.shape or not np.all(np.isfinite(extra)) or (extra < 0).any():
                raise ValueError(f"noise: expected {len(y)} finite values >= 0, "
                                 f"got shape {extra.shape}")
            self.extra_noise = extra
        self.y_mean = float(y.mean()) if len(y) else 0.0
        std = float(y.std()) if len(y) > 1 else 0.0
        self.y_std = std if std > 1e-12 * max(1.0, abs(self.y_mean)) else 1.0
        self.z = (y - self.y_mean) / self.y_std
        self._factorize()
        return self

    def _factorize(self) -> None:
        p = self.params
        Xs = self.X / p.lengthscales
        K = self._k(np.sqrt(scaled_sqdist(Xs, Xs)), p.signal_var)
        K[np.diag_indices_from(K)] += p.noise_var + self.extra_noise
        self.L = robust_cholesky(K)
        self.alpha = cho_solve((self.L, True), self.z, check_finite=False)
        self._K_inv: np.ndarray | None = None

    @property
    def K_inv(self) -> np.ndarray:
        """``(K + noise I)^-1``, formed once per conditioning on first use.

        Gradient-based acquisition calls multiply it with a few dozen kernel
        columns per call: one matrix product instead of two triangular solves,
        2.5x faster at n = 250, m = 60 (measured; rounding-level differences).
        """
        if self._K_inv is None:
            self._K_inv = cho_solve((self.L, True), np.eye(len(self.L)), check_finite=False)
        return self._K_inv

    # --------------------------------------------------------------- fitting
    def _bounds(self) -> list[tuple[float, float]]:
        ell = [(np.log(1e-3), np.log(1e3 * np.sqrt(self.dim)))] * self.dim
        return ell + [(0.0, 0.0), tuple(np.log(self.noise_bounds))]  # s2 fixed at 1

    def _neg_log_posterior(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log marginal likelihood (R&W eq. 2.30) minus log prior, and gradient."""
        X, z, n = self.X, self.z, len(self.z)
        ell = np.exp(theta[:-2])
        s2, noise = np.exp(theta[-2]), np.exp(theta[-1])
        Xs = X / ell
        r = np.sqrt(scaled_sqdist(Xs, Xs))
        K = self._k(r, s2)
        K[np.diag_indices_from(K)] += noise + self.extra_noise
        try:
            L = cholesky(K, lower=True, check_finite=False)
        except LinAlgError:
            return 1e10, np.zeros_like(theta)
        alpha = cho_solve((L, True), z, check_finite=False)
        Kinv = cho_solve((L, True), np.eye(n), check_finite=False)
        nll = 0.5 * z @ alpha + np.log(np.diag(L)).sum() + 0.5 * n * np.log(2 * np.pi)
        W = np.outer(alpha, alpha) - Kinv  # dNLL/dK = -W/2 (R&W eq. 5.9)
        G = W * self._q(r, s2)  # dK/dlog ell_j = q * (dx_j / ell_j)^2
        g_ell = ((G.sum(1) @ (Xs**2)) - (Xs * (G @ Xs)).sum(0))  # 0.5 sum_ik G_ik dx_ikj^2 * 2/2
        grad = np.empty_like(theta)
        grad[:-2] = -g_ell
        Kf = K.copy()
        Kf[np.diag_indices_from(Kf)] -= noise + self.extra_noise
        grad[-2] = -0.5 * np.sum(W * Kf)
        grad[-1] = -0.5 * noise * np.trace(W)
        # log-normal priors on lengthscales and noise
        dev = (theta[:-2] - self.prior_mu) / self.prior_sigma
        nll += 0.5 * np.sum(dev**2) + 0.5 * (theta[-1] - NOISE_PRIOR_MU) ** 2
        grad[:-2] += dev / self.prior_sigma
        grad[-1] += theta[-1] - NOISE_PRIOR_MU
        return float(nll), grad

    def fit(self, X: np.ndarray, y: np.ndarray, restarts: int = 1,
            noise: np.ndarray | None = None, prior_start: bool = False) -> GP:
        """MAP hyperparameter fit, then condition.

        Starts from the previous optimum once fitted, else from the prior mode;
        ``restarts > 1`` adds jittered prior-mode starts. The best optimum wins.

        ``noise``: optional per-point extra noise variance, as in :meth:`set_data`.
        ``prior_start``: when already fitted, also start from the prior mode, ahead of
        the previous optimum (so it wins ties).
        """
        self.set_data(X, y, noise)
        if len(self.z) < 2:
            return self
        bounds = self._bounds()
        lo, hi = np.array(bounds).T
        default = GPParams(np.full(self.dim, np.exp(self.prior_mu)), 1.0,
                           np.exp(NOISE_PRIOR_MU)).to_vector()
        starts = [np.clip(self.params.to_vector() if self.fitted else default, lo, hi)]
        if prior_start and self.fitted:
            starts.insert(0, np.clip(default, lo, hi))
        rng = np.random.default_rng(len(self.z))
        for _ in range(max(0, restarts - 1)):
            starts.append(np.clip(default + rng.normal(0, 0.5, default.shape), lo, hi))
        best_f, best_theta = np.inf, starts[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for theta0 in starts:
                res = minimize(
                    self._neg_log_posterior, theta0, jac=True, method="L-BFGS-B",
                    bounds=bounds, options={"maxiter": self.fit_maxiter},
                )
                if np.isfinite(res.fun) and res.fun < best_f:
                    best_f, best_theta = res.fun, res.x
        self.params = GPParams.from_vector(best_theta)
        self.fitted = True
        self._factorize()
        return self

    # ------------------------------------------------------------- posterior
    def predict(self, Xq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of f at Xq (original output scale)."""
        Xq = np.atleast_2d(Xq)
        p = self.params
        Kq = self._k(np.sqrt(scaled_sqdist(Xq / p.lengthscales, self.X / p.lengthscales)),
                     p.signal_var)
        mean, var = self._mean_var(Kq)
        return self.y_mean + self.y_std * mean, var * self.y_std**2

    def _mean_var(self, Kq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Standardised posterior mean and variance from kernel rows ``Kq`` (m, n).

        One triangular solve: ``k^T K^-1 k = |L^-1 k|^2``.
        """
        v = solve_triangular(self.L, Kq.T, lower=True, check_finite=False)
        return Kq @ self.alpha, np.maximum(self.params.signal_var - (v**2).sum(0), 1e-12)

    def subspace(self, free: np.ndarray, base: np.ndarray) -> SubspacePosterior:
        """Posterior restricted to axis-aligned subspaces (see SubspacePosterior)."""
        return SubspacePosterior(self, free, base)


class SubspacePosterior:
    """Posterior on axis-aligned subspaces ``{x : x[fixed] = base[fixed]}``.

    ``free`` are the d free coordinates (shared by all subspaces) and ``base``
    (s, D) holds one point per subspace supplying the fixed coordinates. The
    squared scaled distance from a subspace point to training point i splits
    into a fixed part, computed once here in O(s n D), and a d-dimensional
    part, so each evaluation costs O(m n d) instead of O(m n D).
    """

    def __init__(self, gp: GP, free: np.ndarray, base: np.ndarray) -> None:
        self.gp = gp
        self.free = np.asarray(free, dtype=int)
        p = gp.params
        fixed = np.setdiff1d(np.arange(gp.dim), self.free)
        base = np.atleast_2d(base)
        self.base = base
        if fixed.size:
            ls = p.lengthscales[fixed]
            self.F = scaled_sqdist(base[:, fixed] / ls, gp.X[:, fixed] / ls)  # (s, n)
        else:
            self.F = np.zeros((len(base), len(gp.X)))
        self.ls_free = p.lengthscales[self.free]
        self.Xf = gp.X[:, self.free] / self.ls_free  # (n, d)

    def full_points(self, Y: np.ndarray, which: np.ndarray) -> np.ndarray:
        """Embed free-coordinate values Y (m, d) of subspaces ``which`` into R^D."""
        X = self.base[which].copy()
        X[:, self.free] = Y
        return X

    def grid(self, Y: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (standardised scale) at every (subspace, row of Y) pair.

        ``rows`` selects subspaces (default: all). Returns two (len(rows), c)
        arrays. The free-coordinate distances of the ``c`` shared points are
        computed once and broadcast against each subspace's fixed part, in
        blocks small enough to stay in cache.
        """
        gp, p = self.gp, self.gp.params
        F = self.F if rows is None else self.F[rows]
        G = scaled_sqdist(Y / self.ls_free, self.Xf)  # (c, n)
        c, n = G.shape
        mean, var = np.empty((len(F), c)), np.empty((len(F), c))
        block = max(1, _GRID_BLOCK // max(c * n, 1))
        for i in range(0, len(F), block):
            Kq = gp._k(np.sqrt(F[i:i + block, None, :] + G[None, :, :]), p.signal_var)
            m_block, v_block = gp._mean_var(Kq.reshape(-1, n))
            mean[i:i + block], var[i:i + block] = m_block.reshape(-1, c), v_block.reshape(-1, c)
        return mean, var

    def __call__(
        self, Y: np.ndarray, which: np.ndarray, grad: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Mean, variance (standardised scale) and their gradients w.r.t. Y.

        Y: (m, d) free-coordinate values; which: (m,) subspace index of each row.
        Returns mean (m,), var (m,), dmean (m, d), dvar (m, d) (None without grad).
        """
        gp, p = self.gp, self.gp.params
        Ys = Y / self.ls_free
        r2 = self.F[which] + scaled_sqdist(Ys, self.Xf)
        r = np.sqrt(r2)
        Kq = gp._k(r, p.signal_var)  # (m, n)
        if not grad:
            return *gp._mean_var(Kq), None, None
        mean = Kq @ gp.alpha
        Kinv_k = gp.K_inv @ Kq.T  # (n, m)
        var = np.maximum(p.signal_var - np.einsum("mn,nm->m", Kq, Kinv_k), 1e-12)
        Q = gp._q(r, p.signal_var)  # dk/dy = -Q (y - x_i) / ell^2
        # sum_i c_i * dk_i/dy = -(sum_i c_i Q_i y - sum_i c_i Q_i x_i) / ell^2
        QA = Q * gp.alpha[None, :]
        dmean = -(QA.sum(1)[:, None] * Ys - QA @ self.Xf) / self.ls_free
        QB = Q * Kinv_k.T
        dvar = 2.0 * (QB.sum(1)[:, None] * Ys - QB @ self.Xf) / self.ls_free
        return mean, var, dmean, dvar


def next_refit(n_fitted: int, refit_growth: float) -> int:
    """The refit checkpoint after one at ``n_fitted`` told points, the schedule that
    :class:`HyperparameterChain` and BKB share: ``n + max(1, floor(refit_growth * n))``."""
    return n_fitted + max(1, int(refit_growth * n_fitted))


def told_without_meta(metas: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Which told points came with an empty meta (n,): points no ask proposed (a warm start,
    enqueued trials, another sampler's points), which carry no record of a fit."""
    return np.array([not m for m in metas], dtype=bool)


def run_end(n: int, bare: np.ndarray | None) -> int:
    """Where a fit due at ``n`` told points happens when runs of points told without a meta
    (``bare``, from :func:`told_without_meta`) are taken in one step: at ``n`` unless the
    n-th point is bare, else at the end of its run (the first later point told with a meta,
    or the end of ``bare``, i.e. the history at the ask).

    No proposal was made from a fit due inside such a run, so nothing depends on it; fitting
    once at the run's end replaces the fits the schedule would make inside it (at D = 100
    and 300 such points, one fit instead of about 45). A history whose points all carry
    metas (every point proposed by an ask) is unchanged: ``run_end(n, bare) == n``.
    """
    if bare is None or n < 1 or n > len(bare) or not bare[n - 1]:
        return n
    later = np.flatnonzero(~bare[n:])
    return n + int(later[0]) if len(later) else len(bare)


class HyperparameterChain:
    """Warm-started hyperparameter refits at fixed points of the told history.

    Refits happen when the history reaches ``n_k`` points, with
    ``n_{k+1} = n_k + max(1, floor(refit_growth * n_k))`` (:func:`next_refit`; every step early on,
    about every 10% of the history later). The fit at ``n_k`` uses the first
    ``n_k`` told points (failures imputed as in ``util.impute_failures``) and
    is warm-started from the fit at ``n_{k-1}``. Because the checkpoints and
    the data at each are functions of the told history alone, an optimizer
    rebuilt from history replays the same chain and reaches the same
    hyperparameters as the uninterrupted one.

    Refits start from the previous optimum only. A chain can then stay on a
    plateau: at D = 100 some MS-UCB histories end with one or two lengthscales
    near 0.005, where the posterior is the prior almost everywhere and the
    gradient is about 0. Also starting every refit from the prior mode (the
    better posterior wins, ``GP.fit(prior_start=True)``) leaves it, but did not
    help the searches (d100 suite, seeds 0-1, 2026-11-22): MS-UCB better in 6
    of 10 cells, equal in 2 and worse on both Hartmann6 cells (-1.63 and -2.22
    against -2.85 and -2.68); GP-UCB worse in 7 of 8, e.g. Levy 595 and 583
    against 525 and 464. With it, MS-UCB also lost the 10-D Styblinski-Tang
    unit test to random search (median -189 against -204).

    Rebuilding from a long history replays every refit (at D = 100 and 300
    points, about 45 fits). To skip them, an algorithm records :meth:`state`
    (the latest checkpoint and a fingerprint of the history prefix it was fitted
    on) in a proposal's meta and passes the recorded states back to
    :meth:`params`; the chain then starts from the latest checkpoint of the same
    history instead of from scratch, with the same result.

    Points told without a meta (``bare``; a warm start, enqueued trials) carry no
    record, and no proposal was made from a fit due among them: a checkpoint due inside
    a run of them moves to the run's end (:func:`run_end`), so 300 such points cost one
    fit. An ask inside a run fits at the history's end and records it in its proposal,
    which is how a rebuild, whose run may have grown since, takes the same fit.
    """

    def __init__(self, dim: int, refit_growth: float = 0.1, **gp_kwargs: object) -> None:
        if refit_growth < 0:
            raise ValueError(f"refit_growth: expected >= 0, got {refit_growth}")
        self.gp = GP(dim, **gp_kwargs)
        self.refit_growth = refit_growth
        self.n_fitted = 0
        self._fingerprint: str | None = None
        gp = self.gp
        self._config = repr((dim, refit_growth, gp.noise_bounds, gp.fit_maxiter, gp.kernel_type))

    def _next_checkpoint(self) -> int:
        return next_refit(self.n_fitted, self.refit_growth)

    def fingerprint(self, X: np.ndarray, y_raw: np.ndarray) -> str:
        """Hash of the chain's settings and a history prefix (what a checkpoint depends on)."""
        return history_fingerprint(self._config, X, y_raw)

    def params(self, X: np.ndarray, y_raw: np.ndarray,
               states: Sequence[dict[str, Any]] = (),
               bare: np.ndarray | None = None) -> GPParams:
        """Hyperparameters for a history of ``len(X)`` points (replaying refits as needed).

        ``states``: checkpoints recorded by :meth:`state` (e.g. in told metas); the
        chain first jumps to the latest one that is ahead of it and belongs to this
        history (:meth:`restore`), then replays only the refits after it.
        ``bare``: which points were told without a meta (:func:`told_without_meta`; None:
        none); a checkpoint due inside a run of them moves to its end (class docstring).
        """
        from .util import impute_failures

        self.restore(states, X, y_raw)
        while self._next_checkpoint() <= len(X):
            n = run_end(self._next_checkpoint(), bare)
            y = impute_failures(y_raw[:n])
            if np.isfinite(y_raw[:n]).sum() >= 2:
                self.gp.fit(X[:n], y)
            self.n_fitted = n
            self._fingerprint = None
        return self.gp.params

    def state(self, X: np.ndarray, y_raw: np.ndarray) -> dict[str, Any] | None:
        """The latest checkpoint as a record for a proposal's meta (None before any).

        ``{"n", "fitted", "lengthscales", "signal_var", "noise_var", "fp"}``
        (:func:`~hdbo_engine.records.make_record`); ``fp`` is :meth:`fingerprint` of the
        first ``n`` points of ``(X, y_raw)``.
        """
        if self.n_fitted == 0:
            return None
        if self._fingerprint is None:
            self._fingerprint = self.fingerprint(X[:self.n_fitted], y_raw[:self.n_fitted])
        p = self.gp.params
        return make_record(self.n_fitted, self._fingerprint, fitted=self.gp.fitted,
                           lengthscales=[float(v) for v in p.lengthscales],
                           signal_var=float(p.signal_var), noise_var=float(p.noise_var))

    def restore(self, states: Sequence[object], X: np.ndarray, y_raw: np.ndarray) -> None:
        """Jump to the latest of ``states`` with ``n_fitted < n <= len(X)`` recorded for this
        history's first ``n`` points (:func:`~hdbo_engine.records.latest_record`); malformed
        or foreign states are skipped.

        A checkpoint depends only on the settings and the first ``n`` points, so the
        chain continues exactly as if it had replayed every refit up to it.
        """
        hit = latest_record(states, self.n_fitted, len(X),
                            lambda n: self.fingerprint(X[:n], y_raw[:n]), self._read)
        if hit is not None:
            self.n_fitted, self._fingerprint, (self.gp.params, self.gp.fitted) = hit

    def _read(self, state: dict[str, Any]) -> tuple[GPParams, bool] | None:
        """A recorded checkpoint's hyperparameters and whether they were fitted (None when
        the lengthscales are not D positive numbers)."""
        ls = np.asarray(state["lengthscales"], dtype=float)
        if ls.shape != (self.gp.dim,) or not np.all(ls > 0):
            return None
        return (GPParams(ls, float(state["signal_var"]), float(state["noise_var"])),
                bool(state["fitted"]))

    def model(self, X: np.ndarray, y_raw: np.ndarray, sign: float = -1.0,
              states: Sequence[dict[str, Any]] = (), bare: np.ndarray | None = None) -> GP:
        """A GP with the chain's hyperparameters conditioned on ``sign * impute(y_raw)``.

        ``sign=-1`` (default) models the negated objective, for maximisation;
        ``states`` and ``bare`` as in :meth:`params`.
        """
        from .util import impute_failures

        params = self.params(X, y_raw, states, bare)
        gp = GP(self.gp.dim, self.gp.noise_bounds, self.gp.fit_maxiter, self.gp.kernel_type)
        gp.params = params
        return gp.set_data(X, sign * impute_failures(y_raw))
