"""Auto: one optimizer that runs the shared initial design once, then lets MS-UCB, CobBO,
GO-UCB and BKB take turns on one history, choosing each turn by Thompson sampling on how
often each one's proposals improved the best value; with fewer than ten evaluations per
dimension, COBYLA runs first.

Why a portfolio: after the shared design no single algorithm of the four is best on every
problem (``docs/algorithms/auto.md``), and every one's state is a function of the told
history, so all four can work on one history at the cost of one.

Rules
-----
* **Design** (base module: centre, axis pass, line search; ``n_init`` by
  :func:`~hdbo_engine.design.design_size` with a uniform size of 20): run once, by Auto itself.
  Every member is built with the same ``seed``, ``budget`` and ``n_init``, so each agrees
  that the design is over.
* **Members** [``("goucb", "msucb", "bkb", "cobbo")``; GO-UCB is left out where torch is
  missing]: practical presets. Above :data:`LARGE_D` [2000] columns, CobBO alone: at
  D = 5000 the four ended behind random search and passed 2 GiB [auto.md#large-d].
  A member is told the history lazily, when it is next chosen:
  its own proposals with their metas, the design's points with theirs, the other members'
  points with a meta naming their member alone (proposed by an ask, so a member's model
  takes them in as it would its own: ``hdbo_engine.gp.run_end``), each with its
  constraints when there are any. Its pending points are Auto's.
* **Choice** (each model ask): a member's record is its last ``window`` [10] told model
  proposals, each a success when its value is below every finite value told before it.
  With constraints, a success is a feasible value below every finite feasible value told
  before it. Auto draws ``s_k ~ Beta(1 + successes_k, 1 + failures_k)`` for each member
  from the ask's generator and asks the member with the largest draw (Thompson sampling for
  Bernoulli bandits; Thompson, Biometrika 1933; the sliding window follows Garivier &
  Moulines, ALT 2011, for rewards that drift as the search narrows).
* **Constraints**: once constraints were told and a feasible point has a finite value, a
  fifth arm, constrained expected improvement (``"cei"``,
  :func:`~hdbo_engine.constraints.constrained_ei`), takes part in the choice with a record
  of its own: it proposes the maximiser of ``log EI(x) + log PoF(x)`` (Schonlau, Welch &
  Jones 1998; Gardner et al., ICML 2014) in the box of half-width ``r`` around the feasible
  incumbent. ``r`` (:meth:`Auto.cei_radius`) starts at :data:`CEI_RADIUS` [0.1], doubles on
  a success up to :data:`CEI_MAX_RADIUS` [0.2] and halves after :data:`CEI_FAILURES` [2]
  failures in a row down to :data:`CEI_MIN_RADIUS` [1e-6], read from the told metas. Its
  proposals pass the shared proposal step like the members'. Departure from the members'
  design: under constraints most of their proposals are steered, which gives up their own
  acquisition's choice; this arm's acquisition weighs feasibility itself
  [constraints.md#constrained-ei].
* **Flat design** (:meth:`Auto.flat_design`): where the design ended early because its probes
  found no effect, a further arm, an evolution strategy (``"es"``), takes part in the choice
  with a record of its own. It proposes the incumbent plus ``sigma * N(0, I)``, every
  coordinate moved, reflected into the unit cube: a Gaussian step is blind to the
  coordinates the objective ignores, so it searches the few that matter as if they were all
  there were. ``sigma`` (:meth:`Auto.es_state`) follows the (1+1)-ES's one-fifth success
  rule, ``sigma <- sigma exp((1[success] - 1/5) / 2.4)`` (e^(1/3) up, e^(-1/12) down; Auger &
  Hansen, arXiv:1310.8397), from :data:`ES_SIGMA` [0.2], at most :data:`ES_MAX_SIGMA` [0.5].
  Below :data:`ES_MIN_SIGMA` [0.2 / 128] the arm restarts, as TuRBO's regions do: its next
  proposal is a uniform point (meta ``"start"``), and from then on its parent is the best
  point of the restarted search and a success beats that search's best. All of it is read
  from the told metas. Departure from the (1+1)-ES: before the first restart the parent is
  Auto's incumbent, which any arm may have moved [auto.md#flat-design].
* **Few evaluations per dimension** (:meth:`Auto.cobyla_phase`): with a budget below
  :data:`COBYLA_PER_DIM` [10] evaluations per effective dimension (the n = 10 d sample size
  below which a GP is not expected to fit a function of d inputs; Loeppky, Sacks & Welch,
  Technometrics 51(4), 2009), where the effective dimension (:meth:`Auto.effective_dim`) is
  D times the share of the design's probed coordinates whose axis probes changed the value,
  at most :data:`LARGE_D` columns, every dimension Real, no constraints, and no noise
  declared or observed, each model ask of one point goes to COBYLA (Powell 1994; SciPy's
  PRIMA implementation, :class:`~hdbo_engine.cobyla.AskTellCobyla`): linear models of the
  objective on a simplex inside a trust region, started from the best told point with a
  radius of :data:`COBYLA_RHOBEG` [1/6 of the box] that shrinks to 1e-8 (both radii the
  paper leaves to the user); its run ends there or after ``budget`` values. Its proposals
  carry ``{"algorithm": "cobyla", "x0": i}``, ``i`` the index of its start; the told values
  of its points are fed back in told order (a NaN or infinite value as the largest finite
  value fed so far). When its run ends, the members take their turns as above. A batch
  ask, or one while a COBYLA point is pending, goes to the members. Departure from the
  portfolio: COBYLA is not an arm chosen by its record, since its first D steps build its
  simplex and seldom improve on the design's best [auto.md#few-evaluations-per-dimension].
* **Metas**: each proposal's meta names the member that made it (``"algorithm"``), on top of
  the member's own meta (``"cei"`` and ``"radius"`` for the constrained-EI arm, ``"es"``,
  ``"sigma"``, ``"restarts"`` and on a restart's first point ``"start"`` for the evolution
  strategy, ``"x0"`` for COBYLA); design points carry the base design's metas.
* **Noise** (:meth:`Auto.noise_observed`): with ``noisy`` None [default], Auto's first model
  ask (every told and pending point a design point, at least :data:`RECOMMEND_MIN` [10]
  finite values) fits a GP to the design's values; if it estimates a noise standard
  deviation of at least 20% of the values' (noise variance >= :data:`NOISY_VAR` = 0.04 on
  the standardised scale), that ask proposes the design's best point again (meta
  ``{"algorithm": "auto", "replicate": i}``, ``i`` the index of the told point it repeats;
  the one proposal that repeats a told point; none in a space the engine enumerates, after
  a batch ask that spans the design's end, or when points other than the design's were
  told first). The objective is noisy iff
  a told replicate's value differs from its original's (relative tolerance 1e-9): a GP
  cannot tell noise from a rugged deterministic function, a replicate can [auto.md#noise].
* **Recommendation** (:meth:`Auto.recommend`): with ``noisy`` True, or None and noise
  observed, the told point of lowest posterior :data:`RECOMMEND_QUANTILE` [0.9] quantile
  ``mu(x) + Phi^-1(0.9) sigma(x)`` of a GP fitted to the told values (the
  :data:`RECOMMEND_MAX` [400] nearest the best point; the kriging quantile of Picheny,
  Ginsbourger, Richet & Caplin, Technometrics 55(1), 2013: a low mean that the data support,
  not an isolated one); otherwise the best told point. With constraints, both choose among
  feasible points only (:attr:`Optimizer.best`'s rule) [auto.md#recommendation].

Proposals are a pure function of the constructor arguments, the told history with metas and
the pending points, so :meth:`Optimizer.from_history` rebuilds Auto exactly.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.special import ndtri

from ..base import Optimizer, Proposal
from ..cobyla import AskTellCobyla
from ..constraints import (
    best_index,
    constrained_ei,
    constraint_models,
    has_feasible_value,
    steer,
)
from ..gp import GP
from ..options import Options
from ..registry import get_algorithm
from ..space import Real, Space
from ..util import is_int

MEMBERS = ("goucb", "msucb", "bkb", "cobbo")
LARGE_D = 2000  # above this many columns, CobBO alone (auto.md#large-d)
LARGE_D_MEMBERS = ("cobbo",)
WINDOW = 10
NOISY_VAR = 0.04  # estimated noise variance (standardised) above which values count as noisy
RECOMMEND_MIN, RECOMMEND_MAX = 10, 400  # told points the recommendation's GP needs / keeps
RECOMMEND_QUANTILE = 0.9  # posterior quantile a noisy recommendation minimises
REPLICATE = "replicate"  # meta key of Auto's replicate: the index of the told point it repeats
_KEY = "algorithm"
CEI = "cei"  # the constrained-EI arm's name in metas and records
CEI_RADIUS, CEI_MAX_RADIUS, CEI_MIN_RADIUS = 0.1, 0.2, 1e-6  # its box's half-width
CEI_FAILURES = 2  # failures in a row that halve the box
ES = "es"  # the evolution-strategy arm's name in metas and records
ES_SIGMA, ES_MAX_SIGMA = 0.2, 0.5  # its step's standard deviation: first, largest
ES_MIN_SIGMA = ES_SIGMA * 2.0**-7  # below this the arm restarts from a uniform point
ES_START = "start"  # meta key of a restart's uniform first point
ES_UP, ES_DOWN = np.exp(1.0 / 3.0), np.exp(-1.0 / 12.0)  # the 1/5 rule's factors
COBYLA = "cobyla"  # the COBYLA phase's name in metas
COBYLA_X0 = "x0"  # meta key of a COBYLA point: the index of the told point its run starts from
COBYLA_PER_DIM = 10  # budgets below this many evaluations per dimension run the COBYLA phase
COBYLA_RHOBEG = 1.0 / 6.0  # COBYLA's first trust-region radius, in unit-cube widths


def default_members(dim: int | None = None) -> tuple[str, ...]:
    """:data:`MEMBERS`, without GO-UCB where torch is not installed; above :data:`LARGE_D`
    columns (``dim``), :data:`LARGE_D_MEMBERS`."""
    if dim is not None and dim > LARGE_D:
        return LARGE_D_MEMBERS
    has_torch = importlib.util.find_spec("torch") is not None
    return tuple(m for m in MEMBERS if m != "goucb" or has_torch)


class _CobylaCache:
    """The COBYLA phase's live solver, kept between asks; it is a cache of what the told
    history determines, so a copy or a pickle starts empty and replays."""

    def __init__(self) -> None:
        self.run: AskTellCobyla | None = None
        self.x0: np.ndarray = np.empty(0)
        self.fed: list[float] = []  # the told values fed, in told order (before replacement)
        self.known: dict[bytes, float] = {}  # the points the run was given values for
        self.worst = -np.inf  # the largest finite value fed

    def __reduce__(self) -> tuple:
        return (_CobylaCache, ())


@dataclass(frozen=True)
class EsState:
    """The evolution-strategy arm's state: ``sigma``, the number of ``restarts`` so far, and
    the ``parent`` of a restarted search (None: Auto's incumbent before the first restart,
    a uniform start after one until the start is told)."""

    sigma: float
    restarts: int
    parent: np.ndarray | None


@dataclass(frozen=True)
class AutoOptions(Options):
    """Options of :class:`Auto` (the practical preset's values in brackets).

    members: registered names of the algorithms that take turns, None =
        ``default_members(D)`` [None].
    window: how many of a member's latest model proposals its record keeps [10].
    noisy: whether the objective is noisy (True), deterministic (False), or unknown and
        judged from one replicate when the design's values look noisy [None] (module
        docstring, "Noise").
    n_init, init_centre, init_design, line_search: :class:`~hdbo_engine.options.Options` [the
        design-size rule from 20 points, the centre, the axis design].
    """

    init_design: str = "axis"
    members: Sequence[str] | None = None
    window: int = WINDOW
    noisy: bool | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        noisy, members, window = self.noisy, self.members, self.window
        if noisy is not None and not isinstance(noisy, (bool, np.bool_)):
            raise TypeError(f"noisy: expected True, False or None, got {noisy!r}")
        if members is not None:
            names = tuple(members)
            if not names or isinstance(members, str):
                raise ValueError(f"members: expected a non-empty sequence of algorithm "
                                 f"names, got {members!r}")
            if "auto" in names or len(set(names)) != len(names):
                raise ValueError(f"members: expected distinct algorithm names other than "
                                 f"'auto', got {members!r}")
        if not is_int(window) or window < 1:
            raise ValueError(f"window: expected an int >= 1, got {window!r}")


class Auto(Optimizer):
    """The recommended optimizer: the shared design, then a portfolio of the four algorithms
    on one history (module docstring).

    Options: :class:`AutoOptions` (by name, or ``options=``); only the ``"practical"``
    preset exists.
    """

    name = "auto"
    default_n_init = 20
    options_class = AutoOptions
    presets: ClassVar[dict[str, Options]] = {"practical": AutoOptions()}

    def __init__(self, space: Space | int, *, seed: int | None = None,
                 budget: int | None = None, preset: str = "practical",
                 options: AutoOptions | None = None, **overrides: Any) -> None:
        super().__init__(space, seed=seed, budget=budget, preset=preset, options=options,
                         **overrides)
        o = self.options
        self.noisy = None if o.noisy is None else bool(o.noisy)
        self.window = int(o.window)
        names = default_members(self.dim) if o.members is None else tuple(o.members)
        self.members = {n: get_algorithm(n)(self.space, seed=self.seed, budget=self.budget,
                                             n_init=self.n_init)
                        for n in names}
        self._cobyla = _CobylaCache()

    def recommend(self) -> np.ndarray | None:
        """The told point to report as the answer (module docstring, "Recommendation")."""
        best = self.recommendable_best()
        noisy = self.noisy if self.noisy is not None else bool(self.noise_observed())
        if best is None or not noisy:
            return None if best is None else best[0]
        ok = np.isfinite(self._y) & self.feasible
        X, y = self._X[ok], self._y[ok]
        if len(y) < RECOMMEND_MIN:
            return best[0]
        if len(y) > RECOMMEND_MAX:
            near = np.argsort(np.abs(X - best[0]).sum(axis=1), kind="stable")[:RECOMMEND_MAX]
            X, y = X[near], y[near]
        mean, var = GP(self.dim).fit(X, y).predict(X)
        quantile = mean + ndtri(RECOMMEND_QUANTILE) * np.sqrt(np.maximum(var, 0.0))
        return X[int(np.argmin(quantile))].copy()

    # ---------------------------------------------------------------- noise
    def noise_observed(self) -> bool | None:
        """Whether a told replicate's value differs from its original's (relative tolerance
        1e-9); None while no replicate with finite values was told (module docstring,
        "Noise")."""
        observed = None
        for y, meta in zip(self._y, self._metas, strict=True):
            i = meta.get(REPLICATE)
            if not is_int(i) or not 0 <= i < self.n_told:
                continue
            if np.isfinite(y) and np.isfinite(self._y[i]):
                differs = not np.isclose(y, self._y[i], rtol=1e-9, atol=0.0)
                observed = bool(observed) or differs
        return observed

    def _replicate(self) -> Proposal | None:
        """The replicate of the best design point, when this is the run's first model ask and
        a GP fitted to the design's values estimates noise (module docstring, "Noise")."""
        n_points = self.space.n_points
        if self.noisy is not None or (n_points is not None
                                      and n_points <= self.enumerate_limit):
            return None  # an enumerated space repeats no point (base module docstring)
        if any(not m.get("init") for m in self._metas) or any(
                not p.meta.get("init") for p in self._pending):
            return None
        design = np.flatnonzero(np.isfinite(self._y))
        if len(design) < RECOMMEND_MIN:
            return None
        y = self._y[design]
        if GP(self.dim).fit(self._X[design], y).params.noise_var < NOISY_VAR:
            return None
        i = int(design[best_index(y, None if self._c is None else self._c[design])])
        return Proposal(self._X[i].copy(), {_KEY: self.name, REPLICATE: i})

    # ---------------------------------------------------------------- choice
    def _outcomes(self) -> dict[str, list[bool]]:
        """Per name in the told metas' ``"algorithm"``, whether each of its told proposals,
        in told order, was a success: a feasible value below every finite feasible value
        told before it (NaN and +inf never succeed)."""
        outcomes: dict[str, list[bool]] = {}
        best = np.inf
        for y, ok, meta in zip(self._y, self.feasible, self._metas, strict=True):
            if _KEY in meta:
                outcomes.setdefault(meta[_KEY], []).append(bool(ok and y < best))
            if ok and np.isfinite(y):
                best = min(best, float(y))
        return outcomes

    def cei_radius(self) -> float:
        """Half-width of the constrained-EI arm's box (module docstring, "Constraints")."""
        radius, failures = CEI_RADIUS, 0
        for success in self._outcomes().get(CEI, []):
            if success:
                radius, failures = min(2.0 * radius, CEI_MAX_RADIUS), 0
            else:
                failures += 1
                if failures == CEI_FAILURES:
                    radius, failures = max(0.5 * radius, CEI_MIN_RADIUS), 0
        return radius

    def _cei(self, n: int, rng: np.random.Generator, *, steered: bool
             ) -> list[tuple[np.ndarray, dict]]:
        """The constrained-EI arm's proposals, through the shared proposal step if
        ``steered`` (else the caller's ask applies it)."""
        incumbent, value = self.best
        radius = self.cei_radius()
        models = constraint_models(self._X, self._c, incumbent)
        points = constrained_ei(self._X, self.model_values, models, incumbent, value, radius,
                                self.pending, n, rng)
        made = [(x, {_KEY: CEI, "radius": radius}) for x in points]
        return steer(self._X, self._c, incumbent, made, rng, models) if steered else made

    def flat_design(self) -> bool:
        """Whether the design ended early because its probes found no effect (base module:
        :meth:`~hdbo_engine.design.InitialDesign._design_length`)."""
        return self._design_length() < self.n_init

    def es_state(self) -> EsState:
        """The evolution-strategy arm's step size, restart count and parent, replayed from the
        told history (module docstring, "Flat design")."""
        sigma, chain, chain_best, parent = ES_SIGMA, 0, np.inf, None
        best = np.inf
        for x, y, ok, meta in zip(self._X, self._y, self.feasible, self._metas, strict=True):
            finite = bool(ok and np.isfinite(y))
            if meta.get(_KEY) == ES:
                success = finite and y < (best if chain == 0 else chain_best)
                if chain and finite and y < chain_best:
                    chain_best, parent = float(y), x
                if not meta.get(ES_START):
                    sigma = min(sigma * ES_UP, ES_MAX_SIGMA) if success else sigma * ES_DOWN
                if sigma < ES_MIN_SIGMA:
                    sigma, chain, chain_best, parent = ES_SIGMA, chain + 1, np.inf, None
            if finite:
                best = min(best, float(y))
        return EsState(sigma, chain, None if parent is None else parent.copy())

    def _es(self, n: int, rng: np.random.Generator, *, steered: bool
            ) -> list[tuple[np.ndarray, dict]]:
        """The evolution-strategy arm's proposals: the parent plus a Gaussian step in every
        coordinate, reflected into the unit cube, or a restart's uniform start; through the
        shared proposal step if ``steered``."""
        state = self.es_state()
        meta = {_KEY: ES, "sigma": state.sigma, "restarts": state.restarts}
        if state.restarts and state.parent is None:
            made = [(rng.random(self.dim), {**meta, ES_START: True}) for _ in range(n)]
        else:
            parent = self.best[0] if state.parent is None else state.parent
            made = []
            for _ in range(n):
                x = np.mod(parent + state.sigma * rng.standard_normal(self.dim), 2.0)
                made.append((np.where(x > 1.0, 2.0 - x, x), dict(meta)))
        if steered and self._c is not None:
            return steer(self._X, self._c, self.best[0], made, rng)
        return made

    def effective_dim(self) -> float | None:
        """``D`` times the share of the design's probed coordinates whose axis probes changed
        the value (:meth:`~hdbo_engine.design.InitialDesign._design_effects`): how many
        coordinates the objective depends on, as the design saw it; None before the design
        ends or when it probed no coordinate."""
        end = self._design_end()
        if end is None:
            return None
        _, probed, changed = self._design_effects(end)
        if not probed.any():
            return None
        return self.dim * float(changed[probed].mean())

    def cobyla_phase(self) -> bool:
        """Whether model asks go to COBYLA: a budget of fewer than :data:`COBYLA_PER_DIM`
        evaluations per effective dimension (:meth:`effective_dim`), at most :data:`LARGE_D`
        columns, every dimension Real, no constraints told, and no noise declared or observed
        (module docstring, "Few evaluations per dimension"). The phase ends with COBYLA's run."""
        if self.budget is None or self.dim > LARGE_D or self._c is not None:
            return False
        if any(type(d) is not Real for d in self.space.dimensions):
            return False
        d_eff = self.effective_dim()
        if d_eff is None or self.budget >= COBYLA_PER_DIM * d_eff:
            return False
        return not (self.noisy or (self.noisy is None and self.noise_observed()))

    def _cobyla_next(self) -> tuple[np.ndarray, int] | None:
        """COBYLA's next point and the index of the told point its run starts from, replayed
        from the told COBYLA points' values (the live solver is reused while the history
        extends the one it was fed); None once its run has ended."""
        rows = [i for i, m in enumerate(self._metas) if m.get(_KEY) == COBYLA]
        start = self._metas[rows[0]].get(COBYLA_X0) if rows else best_index(self._y, None)
        if not is_int(start) or not 0 <= start < self.n_told or not np.isfinite(self._y[start]):
            return None  # a history whose COBYLA points name no usable start
        start = int(start)
        values = [float(self._y[i]) for i in rows]
        cache = self._cobyla
        if (cache.run is None or not np.array_equal(cache.x0, self._X[start])
                or not np.array_equal(cache.fed, values[:len(cache.fed)], equal_nan=True)):
            self._cobyla = cache = _CobylaCache()
            cache.x0 = self._X[start].copy()
            cache.run = AskTellCobyla(cache.x0, rhobeg=COBYLA_RHOBEG, max_evals=self.budget)
            cache.known[cache.x0.tobytes()] = cache.worst = float(self._y[start])
        run = cache.run
        while run.point is not None:
            key = run.point.tobytes()
            if key in cache.known:  # its start, or a point it was given a value for
                run.tell(cache.known[key])
                continue
            if len(cache.fed) == len(values):
                return run.point.copy(), start
            told = values[len(cache.fed)]
            cache.fed.append(told)
            if np.isfinite(told):
                cache.worst = max(cache.worst, told)
            value = told if np.isfinite(told) else cache.worst  # a failure: the worst fed
            cache.known[key] = value
            run.tell(value)
        return None

    def _arm(self, name: str) -> Callable[..., list[tuple[np.ndarray, dict]]] | None:
        """The proposal method of Auto's own arm ``name`` (constrained EI, evolution
        strategy), or None for a member."""
        return {CEI: self._cei, ES: self._es}.get(name)

    def records(self) -> dict[str, tuple[int, int]]:
        """``(successes, failures)`` among each member's (and, once eligible, the
        constrained-EI and evolution-strategy arms') last ``window`` told proposals (a
        success: a feasible value below every finite feasible value before it)."""
        arms = list(self.members)
        if self._c is not None and has_feasible_value(self._y, self._c):
            arms.append(CEI)
        if self.flat_design():
            arms.append(ES)
        outcomes = self._outcomes()
        recent = {n: outcomes.get(n, [])[-self.window:] for n in arms}
        return {n: (sum(r), len(r) - sum(r)) for n, r in recent.items()}

    def _choice_rng(self, salt: int | None) -> np.random.Generator:
        """The ask's generator keyed as if no replicate had been told or were pending, so that
        the member choices of a run are those it would make without its replicate."""
        told = sum(REPLICATE in m for m in self._metas)
        pending = sum(REPLICATE in p.meta for p in self._pending)
        return self._keyed_rng(self.n_told - told, len(self._pending) - pending, salt)

    def _choose(self, rng: np.random.Generator) -> str:
        records = self.records()
        draws = {n: rng.beta(1 + s, 1 + f) for n, (s, f) in records.items()}
        return max(draws, key=lambda n: draws[n])

    # ---------------------------------------------------------------- members
    def _sync(self, name: str) -> Optimizer:
        """Tell member ``name`` the history it has not seen, replicates left out; give it
        Auto's pending points other than a replicate."""
        member = self.members[name]
        rows = np.flatnonzero([REPLICATE not in m for m in self._metas])[member.n_told:]
        if len(rows):
            metas = [m if m.get(_KEY, name) == name else {_KEY: m[_KEY]}
                     for m in (self._metas[i] for i in rows)]
            C = None if self._c is None else self._c[rows]
            member.tell(self._X[rows], self._y[rows], metas, constraints=C)
        member.clear_pending()
        for p in self._pending:
            if REPLICATE not in p.meta:
                member.add_pending(p.x, p.meta if p.meta.get(_KEY, name) == name else {})
        return member

    def ask(self, n: int = 1, *, salt: int | None = None) -> list[Proposal]:
        self._check_ask(n, salt)
        in_design = self._n_random(n) > 0 or (salt is None and self._line_point() is not None)
        if in_design:
            return super().ask(n, salt=salt)
        replicate = self._replicate()
        out = [] if replicate is None else [replicate]
        self._pending.extend(out)
        if (n == 1 and not out and self.cobyla_phase()
                and not any(p.meta.get(_KEY) == COBYLA for p in self._pending)):
            made = self._cobyla_next()
            if made is not None:
                x, start = made
                meta = {_KEY: COBYLA, COBYLA_X0: start}
                return [self._accept(x, meta, self._choice_rng(salt))]
        if n > len(out):
            rng = self._choice_rng(salt)
            name = self._choose(rng)
            arm = self._arm(name)
            if arm is not None:
                made = arm(n - len(out), rng, steered=True)
                out += [self._accept(x, meta, rng) for x, meta in made]
                return out
            made = [Proposal(p.x, {**p.meta, _KEY: name})
                    for p in self._sync(name).ask(n - len(out), salt=salt)]
            self._pending.extend(made)
            out += made
        return out

    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        """The model part of an ask that began in the design (a batch across its end)."""
        name = self._choose(rng)
        arm = self._arm(name)
        if arm is not None:
            return arm(n, rng, steered=False)
        member = self._sync(name)
        return [(x, {**meta, _KEY: name}) for x, meta in member._propose(n, rng)]
