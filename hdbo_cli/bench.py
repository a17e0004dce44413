"""``hdbo bench``: our algorithms against the optimizers users would pick instead.

A *suite* (TOML, committed under ``hdbo_cli/suites/`` or given as a path)
lists groups of cells; a cell is one (problem, dimension, budget, method,
seed). Every method optimises the same problem on the unit cube with the same
budget and seeds, through its own library's ask/tell interface:

* ours, through the engine: every public algorithm of
  :mod:`hdbo_engine.registry` (``auto``, ``msucb``, ``cobbo``, ``goucb``,
  ``bkb``, ...; default preset), ``<name>-paper`` for each whose presets
  include ``"paper"`` (each paper's exact configuration), and the registry's
  other algorithms, the baselines ``gpucb`` and ``random`` (random search);
* peers: ``optuna-tpe`` (TPESampler, multivariate), ``optuna-gp`` (GPSampler),
  ``optuna-cmaes`` (CmaEsSampler), ``skopt-gp`` (``skopt.Optimizer`` with its
  GP), ``ng-ngopt`` and ``ng-cma`` (Nevergrad NGOpt and CMA), and ``botorch``
  (vanilla BoTorch as its documentation sets it up: ``SingleTaskGP`` with its
  default priors and a standardised outcome, ``qLogNoisyExpectedImprovement``,
  ``optimize_acqf`` with 10 restarts from 512 raw samples, after a scrambled
  Sobol design of 20 points; double precision).

Optimizer time per evaluation is ask plus tell (skopt fits its model in
``tell``, Nevergrad's CMA updates there); the objective is never inside it.
Each cell runs in a fresh worker process (``spawn``), so the peak resident
memory reported for a cell is that cell's alone. Output layout under ``OUT``::

    suite.toml                      the suite definition the run used
    command.txt                     the commands that ran cells here, one per line
    cells/<group>/<method>/seed<k>.csv    evaluation, value, best_so_far, ask_s, tell_s,
                                          ask_cpu_s, tell_cpu_s
    cells/<group>/<method>/seed<k>.json   status, totals, peak memory, machine, versions;
                                          noisy problems: final_true_value, true_trace

A cell is finished when its JSON exists; re-running the same command skips
finished cells (resume). Both files are written to a temporary name and
renamed, so an interrupted cell leaves nothing and is run again. A suite may
set ``cell_time_limit_s`` (and a group its own, which wins for its cells):
a cell whose optimizer *CPU* time exceeds it
stops and is recorded with status ``timeout`` and the evaluations it
reached. CPU time, not wall time, so a busy machine does not cut cells
short; every cell runs with one BLAS/torch thread (unless the caller's
environment sets ``OMP_NUM_THREADS``), so the two agree on an idle core and
times compare algorithms, not parallelism.

Problems are :mod:`hdbo_cli.problems` names (including the random-instance
families ``shifted_*``, ``rotated_*``, ``scattered_*`` and the real tasks of
:mod:`hdbo_cli.tasks`, whose instance is the cell's seed and is recorded
in the cell's JSON under ``problem_info``) or ``bbob-f<k>`` (COCO's
noiseless BBOB function ``k``, instance 1, on ``[-5, 5]^D``, via
``coco-experiment``; D in {2, 3, 5, 10, 20, 40}) and ``bbob-f<k>-seeded``
(the same function, instance ``seed + 1``: its optimum, rotation and optimal
value drawn anew for each seed, seed 0 being instance 1). coco-experiment does
not expose BBOB's optimal value, so for ``bbob-f<k>`` the report measures
regret from the lowest value any method reached; ``bbob-f<k>-seeded`` reports
``f - f_opt`` (minimum 0 on every instance, so values compare across seeds),
``f_opt`` read from the header COCO's own logger writes (:func:`_bbob_fopt`).

Noisy problems (``noisy_*``: each evaluation one noisy draw) are scored by
the noise-free value of the point a method *recommends*, not by its luckiest
draw. Every ``budget // 20`` evaluations and at a cell's last one, the
method's recommendation is evaluated without noise (that time is outside the
optimizer time and the time limit) and recorded as ``true_trace``
(evaluation, noise-free value) pairs; ``final_true_value`` is the last. What
each method recommends: ours and the engine baselines
``Optimizer.recommend()`` (random search: its best draw), Optuna its
``study.best_trial``, Nevergrad ``provide_recommendation()``, BoTorch the
evaluated point of highest posterior mean, skopt its best draw. The CSV keeps
the noisy draws.

Constrained problems (:mod:`hdbo_cli.constrained`: constraint values c_j,
feasible iff every c_j <= 0) are scored by the *best feasible value*: the
lowest objective value among the feasible evaluated points, infinite when
there is none. Every method is told the constraint values of each point
through its own library's interface: ours ``Optimizer.tell(x, y,
constraints=c)``; Optuna ``trial.set_constraint`` before ``study.tell``
(what TPESampler and GPSampler read, the same values ``constraints_func``
would give; Optuna 5 deprecates ``constraints_func`` for it); Nevergrad
``tell(candidate, y, constraint_violation=c)``. Random search is told none
(the engine's ``RandomSearch`` would steer its draws with the constraint models,
which random search does not do).
CmaEsSampler, skopt and vanilla BoTorch take no constraints here, so a suite
listing them for a constrained problem is rejected. The CSV's
``best_so_far`` is then the best feasible value so far (``inf`` before the
first feasible point) and it has the columns ``feasible`` (1 or 0) and
``c1..cm``; the JSON has ``feasible_found``, ``n_feasible``,
``first_feasible`` (evaluation), ``least_violation`` (the lowest total
violation sum_j max(c_j, 0) reached) and ``recommended_feasible`` (whether
the point the method recommends at the end is feasible; None without a
recommendation).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import re
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from hdbo_cli.problems import Problem, make_problem
from hdbo_engine.loop import Step, drive

SUITE_DIR = Path(__file__).with_name("suites")
PEERS = ("optuna-tpe", "optuna-gp", "optuna-cmaes", "skopt-gp", "ng-ngopt", "ng-cma",
         "botorch")
UNCONSTRAINED_PEERS = ("optuna-cmaes", "skopt-gp", "botorch")  # told no constraints here
UNIFORM_BASELINES = ("random",)  # told no constraints: their draws stay uniform
# Auto's parts that are not an engine algorithm of their own: name -> Auto's options.
# (Its members alone are the algorithms themselves: msucb, cobbo, goucb, bkb.)
AUTO_PARTS = {"auto-cobyla": {"arms": ("cobyla",)}}  # the design, then COBYLA with restarts


def ours() -> tuple[str, ...]:
    """Our algorithms: the engine registry's public ones present in this installation, in
    registration order (``auto`` first)."""
    from hdbo_engine.registry import available, entries

    present = set(available())
    return tuple(e.name for e in entries(public=True) if e.name in present)


def paper_methods() -> tuple[str, ...]:
    """``<name>-paper`` (``preset="paper"``) for each of :func:`ours` that has that preset."""
    from hdbo_engine import get_algorithm

    return tuple(f"{n}-paper" for n in ours() if "paper" in get_algorithm(n).presets)


def baselines() -> tuple[str, ...]:
    """The engine's baselines: the registry's algorithms that are not public (GP-UCB and
    random search), run as yardsticks, not as ours."""
    from hdbo_engine.registry import available, entries

    present = set(available())
    return tuple(e.name for e in entries(public=False) if e.name in present)


def methods() -> tuple[str, ...]:
    """Every method name ``hdbo bench`` runs: ours, their paper presets, Auto's parts,
    baselines, peers."""
    return (*ours(), *paper_methods(), *AUTO_PARTS, *baselines(), *PEERS)


@dataclass(frozen=True)
class Cell:
    """One run: ``method`` on ``problem`` at ``dim`` with ``budget`` evaluations and ``seed``."""

    problem: str
    dim: int
    budget: int
    method: str
    seed: int
    time_limit_s: float | None = None  # optimizer CPU seconds; None: no limit
    workers: int = 1  # points asked together and told together (synchronous batches)

    @property
    def group(self) -> str:
        workers = f"-w{self.workers}" if self.workers > 1 else ""
        return f"{self.problem}-D{self.dim}-n{self.budget}{workers}"

    def paths(self, out: Path) -> tuple[Path, Path]:
        base = out / "cells" / self.group / self.method / f"seed{self.seed}"
        return base.with_suffix(".csv"), base.with_suffix(".json")


@dataclass(frozen=True)
class Suite:
    """A parsed suite definition (see the module docstring and ``suites/*.toml``)."""

    name: str
    description: str
    seeds: int
    cells_by_seed: tuple[Cell, ...]  # every cell for seed 0, per group; seed is set later
    cell_time_limit_s: float | None
    text: str

    def cells(self, seeds: int | None = None, methods: list[str] | None = None,
              first_seed: int = 0) -> list[Cell]:
        """All cells (of ``methods`` only, if given) for seeds ``first_seed`` ..
        ``first_seed + seeds - 1``, seed-major (all of one seed before any of the next), then
        in the suite's method order, so cheap methods listed first finish first."""
        n = self.seeds if seeds is None else seeds
        if methods is not None:
            unknown = sorted(set(methods) - {c.method for c in self.cells_by_seed})
            if unknown:
                raise ValueError(f"--methods: {unknown} not in suite {self.name!r}")
        return [Cell(c.problem, c.dim, c.budget, c.method, s, c.time_limit_s, c.workers)
                for s in range(first_seed, first_seed + n) for c in self.cells_by_seed
                if methods is None or c.method in methods]


def suite_names() -> list[str]:
    """Names of the committed suites."""
    return sorted(p.stem for p in SUITE_DIR.glob("*.toml"))


def _require(table: dict, key: str, kind: type, where: str) -> Any:
    if key not in table:
        raise ValueError(f"suite: {where} needs {key!r}")
    value = table[key]
    if not isinstance(value, kind):
        raise ValueError(f"suite: {where}.{key} must be {kind.__name__}, got {value!r}")
    return value


def load_suite(name_or_path: str) -> Suite:
    """Load a committed suite by name, or a suite TOML file by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SUITE_DIR / f"{name_or_path}.toml"
        if not path.exists():
            raise ValueError(f"--suite: unknown suite {name_or_path!r}; expected one of "
                             f"{suite_names()} or a path to a .toml file")
    elif not path.exists():
        raise ValueError(f"--suite: no such file {str(path)!r}")
    text = path.read_text()
    data = tomllib.loads(text)
    groups = _require(data, "group", list, "the suite")
    cells = []
    suite_limit = data.get("cell_time_limit_s")
    for i, g in enumerate(groups):
        where = f"group[{i}]"
        budget = _require(g, "budget", int, where)
        if budget < 1:
            raise ValueError(f"suite: {where}.budget must be >= 1, got {budget}")
        for method in _require(g, "methods", list, where):
            if method not in methods():
                raise ValueError(f"suite: {where}.methods: unknown method {method!r}; "
                                 f"expected names from {list(methods())}")
        pairs = [(problem, int(dim)) for problem in _require(g, "problems", list, where)
                 for dim in _require(g, "dims", list, where)]
        for problem, dim in pairs:
            bench_problem = make_bench_problem(problem, dim)  # fail early on a bad name or dim
            blind = [m for m in g["methods"] if m in UNCONSTRAINED_PEERS]
            if bench_problem.n_constraints and blind:
                raise ValueError(f"suite: {where}.methods: {blind} take no constraints, and "
                                 f"{problem} is constrained")
        limit = g.get("cell_time_limit_s", suite_limit)
        limit = None if limit is None else float(limit)
        workers = g.get("workers", 1)
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"suite: {where}.workers must be an int >= 1, got {workers!r}")
        if workers > 1 and any(make_bench_problem(p, d).n_constraints for p, d in pairs):
            raise ValueError(f"suite: {where}.workers: constrained problems run one worker")
        cells += [Cell(problem, dim, budget, m, 0, limit, workers)
                  for m in g["methods"] for problem, dim in pairs]
    return Suite(name=data.get("name", path.stem), description=data.get("description", ""),
                 seeds=int(data.get("seeds", 5)), cells_by_seed=tuple(cells),
                 cell_time_limit_s=None if suite_limit is None else float(suite_limit),
                 text=text)


# ---------------------------------------------------------------- problems


@dataclass(frozen=True)
class BenchProblem:
    """A minimisation problem on the unit cube with its known minimum (``None``: unknown).

    ``evaluate_true_unit`` is a noisy problem's noise-free value (scoring only); ``None``
    for a deterministic one. ``constraints_unit`` gives a constrained problem's
    ``n_constraints`` values at a point (feasible where all are ``<= 0``); ``f_min`` is then
    the best feasible value.
    """

    name: str
    dim: int
    f_min: float | None
    evaluate_unit: Callable[[np.ndarray], float]
    info: dict[str, Any] = field(default_factory=dict)
    evaluate_true_unit: Callable[[np.ndarray], float] | None = None
    constraints_unit: Callable[[np.ndarray], np.ndarray] | None = None
    n_constraints: int = 0


def _bbob_suite(cocoex: Any, fid: int, dim: int, instance: int) -> Any:
    """A COCO suite holding BBOB function ``fid``, instance ``instance``, at ``dim`` alone (the
    suite-instance option takes any instance; the suite option ``instance_indices`` stops at
    15). The caller keeps the suite while it uses the problem: an observed problem whose
    suite was freed crashes the interpreter."""
    return cocoex.Suite("bbob", f"instances: {instance}",
                        f"dimensions: {dim} function_indices: {fid}")


def _bbob_fopt(cocoex: Any, fid: int, dim: int, instance: int) -> float:
    """BBOB's optimal value of function ``fid``, instance ``instance``, at ``dim``: the
    ``Fopt (...)`` that COCO's ``bbob`` logger writes in its data files' header, from one
    logged evaluation in a temporary folder (coco-experiment has no call that returns it)."""
    level = cocoex.log_level("warning")  # no "results will be output to" line per cell
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = _bbob_suite(cocoex, fid, dim, instance)
            problem = next(iter(suite))
            problem.observe_with(cocoex.Observer("bbob", f"outer_folder: {tmp} result_folder: f"))
            problem(np.zeros(dim))
            problem.free()
            header = next(Path(tmp).rglob("*.tdat")).read_text()
    finally:
        cocoex.log_level(level)
    found = re.search(r"Fopt \(([-+0-9.eE]+)\)", header)
    if found is None:
        raise RuntimeError(f"no Fopt in COCO's log header for f{fid}, instance {instance}")
    return float(found.group(1))


def make_bench_problem(name: str, dim: int, seed: int = 0) -> BenchProblem:
    """An engine problem by name (instance ``seed``), ``bbob-f<k>`` (COCO BBOB function k,
    instance 1 for every seed) or ``bbob-f<k>-seeded`` (instance ``seed + 1``)."""
    if name.startswith("bbob-f"):
        try:
            import cocoex
        except ImportError as err:
            raise ImportError("BBOB problems need coco-experiment: pip install "
                              "coco-experiment") from err
        match = re.fullmatch(r"bbob-f(\d+)(-seeded)?", name)
        if match is None or not 1 <= int(match.group(1)) <= 24 or dim not in (2, 3, 5, 10, 20, 40):
            raise ValueError(f"problem: {name} at D={dim}: expected bbob-f<k> or "
                             "bbob-f<k>-seeded with k in 1..24, and dimensions 2, 3, 5, 10, 20, 40")
        fid, seeded = int(match.group(1)), match.group(2) is not None
        instance = seed + 1 if seeded else 1
        suite = _bbob_suite(cocoex, fid, dim, instance)
        coco = next(iter(suite))
        lower, upper = np.asarray(coco.lower_bounds), np.asarray(coco.upper_bounds)
        info: dict[str, Any] = {"instance": instance, "coco_id": coco.id}
        offset = 0.0
        if seeded:
            offset = info["f_opt"] = _bbob_fopt(cocoex, fid, dim, instance)

        def evaluate(u: np.ndarray) -> float:
            return float(coco(lower + np.asarray(u) * (upper - lower))) - offset

        return BenchProblem(name, dim, 0.0 if seeded else None, evaluate, info)
    prob: Problem = make_problem(name, dim, seed)
    true_value = None
    if prob.noisy:
        def true_value(u: np.ndarray) -> float:
            return float(prob.noise_free_unit(np.asarray(u))[0])
    constraints = None
    if prob.n_constraints:
        def constraints(u: np.ndarray) -> np.ndarray:
            return prob.constraints_unit(np.asarray(u))[0]
    return BenchProblem(name, dim, prob.f_min,
                        lambda u: float(prob.evaluate_unit(np.asarray(u))[0]), prob.info,
                        true_value, constraints, prob.n_constraints)


# ---------------------------------------------------------------- methods
# Each factory returns a Runner: ask() -> (x in [0, 1]^D, token); tell(token, x, y,
# constraints=None), constraints the point's values c (m,) on a constrained problem;
# recommend() -> the method's answer so far (a unit-cube point), or None before any tell.


class Runner(NamedTuple):
    """A method's ask, tell and recommend (see the comment above); ``ask_batch(n)`` asks for
    ``n`` points at once in the method's own batch mode (None: ``n`` asks in a row, each
    seeing the earlier ones pending)."""

    ask: Callable[[], tuple[np.ndarray, Any]]
    tell: Callable[..., None]
    recommend: Callable[[], np.ndarray | None]
    ask_batch: Callable[[int], list[tuple[np.ndarray, Any]]] | None = None


def _engine(name: str, dim: int, budget: int, seed: int) -> Runner:
    from hdbo_engine import get_algorithm

    base, paper = name.removesuffix("-paper"), name.endswith("-paper")
    options = {"preset": "paper"} if paper else AUTO_PARTS.get(name, {})
    opt = get_algorithm("auto" if name in AUTO_PARTS else base)(dim, seed=seed, budget=budget,
                                                                **options)

    def ask() -> tuple[np.ndarray, Any]:
        (proposal,) = opt.ask()
        return proposal.x, None

    def tell(_token: Any, x: np.ndarray, y: float, constraints: np.ndarray | None = None
             ) -> None:
        if constraints is None or base in UNIFORM_BASELINES:
            opt.tell(x, y)  # the pending proposal at x gives its meta
        else:
            opt.tell(x, y, constraints=constraints)

    def ask_batch(n: int) -> list[tuple[np.ndarray, Any]]:
        return [(p.x, None) for p in opt.ask(n)]

    return Runner(ask, tell, opt.recommend, ask_batch)


def _optuna(kind: str, dim: int, budget: int, seed: int, workers: int = 1) -> Runner:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {  # with workers, TPE's batch mode: running trials as the worst value
        "optuna-tpe": lambda: optuna.samplers.TPESampler(multivariate=True, seed=seed,
                                                         **({"constant_liar": True}
                                                            if workers > 1 else {})),
        "optuna-gp": lambda: optuna.samplers.GPSampler(seed=seed),
        "optuna-cmaes": lambda: optuna.samplers.CmaEsSampler(seed=seed),
    }
    study = optuna.create_study(sampler=samplers[kind]())
    names = [f"x{i:04d}" for i in range(dim)]
    dists = {n: optuna.distributions.FloatDistribution(0.0, 1.0) for n in names}

    def ask() -> tuple[np.ndarray, Any]:
        trial = study.ask(dists)
        return np.array([trial.params[n] for n in names]), trial

    def tell(trial: optuna.Trial, _x: np.ndarray, y: float,
             constraints: np.ndarray | None = None) -> None:
        for j, value in enumerate([] if constraints is None else constraints, start=1):
            trial.set_constraint(f"c{j}", float(value))
        study.tell(trial, y)

    def recommend() -> np.ndarray | None:
        if not any(all(v <= 0 for v in t.constraints.values()) for t in study.trials):
            return None  # nothing told, or no feasible trial (study.best_trial would raise)
        params = study.best_trial.params
        return np.array([params[n] for n in names])

    return Runner(ask, tell, recommend)


def _skopt_gp(dim: int, budget: int, seed: int) -> Runner:
    from skopt import Optimizer

    opt = Optimizer([(0.0, 1.0)] * dim, base_estimator="GP", random_state=seed)

    def ask() -> tuple[np.ndarray, Any]:
        x = opt.ask()
        return np.asarray(x, dtype=float), x

    def recommend() -> np.ndarray | None:
        return np.asarray(opt.Xi[int(np.argmin(opt.yi))], dtype=float) if opt.yi else None

    def ask_batch(n: int) -> list[tuple[np.ndarray, Any]]:
        return [(np.asarray(x, dtype=float), x) for x in opt.ask(n_points=n)]

    return Runner(ask, lambda x, _x, y: opt.tell(x, y), recommend, ask_batch)


def _nevergrad_numpy_shim() -> None:
    """Nevergrad 1.0.12's meta-model (which NGOpt picks with several workers at D = 12-16)
    calls ``float`` on a one-element array, which NumPy 2.4 refuses
    (facebookresearch/nevergrad#1612); that module's ``float`` takes the element, as NumPy
    before 2.4 did, and is ``float`` for everything else."""
    from nevergrad.optimization import metamodel

    def element_float(x: Any) -> float:
        return float(np.asarray(x).reshape(-1)[0]) if np.size(x) == 1 else float(x)

    metamodel.float = element_float  # type: ignore[attr-defined]


def _nevergrad(kind: str, dim: int, budget: int, seed: int, workers: int = 1) -> Runner:
    import nevergrad as ng

    _nevergrad_numpy_shim()
    param = ng.p.Array(shape=(dim,), lower=0.0, upper=1.0)
    param.random_state = np.random.RandomState(seed)
    opt = ng.optimizers.registry[{"ng-ngopt": "NGOpt", "ng-cma": "CMA"}[kind]](
        parametrization=param, budget=budget, num_workers=workers)

    def ask() -> tuple[np.ndarray, Any]:
        cand = opt.ask()
        return np.clip(np.asarray(cand.value, dtype=float), 0.0, 1.0), cand

    def tell(cand: ng.p.Parameter, _x: np.ndarray, y: float,
             constraints: np.ndarray | None = None) -> None:
        if constraints is None:
            opt.tell(cand, y)
        else:
            opt.tell(cand, y, constraint_violation=np.asarray(constraints, dtype=float))

    def recommend() -> np.ndarray | None:
        if opt.num_tell == 0:
            return None
        return np.clip(np.asarray(opt.provide_recommendation().value, dtype=float), 0.0, 1.0)

    return Runner(ask, tell, recommend)


BOTORCH_SOBOL_POINTS = 20


def _botorch(dim: int, budget: int, seed: int) -> Runner:
    """Vanilla BoTorch (module docstring) on the unit cube; BoTorch maximises ``-y``."""
    import torch
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood

    torch.manual_seed(seed)
    design = torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed).draw(
        min(BOTORCH_SOBOL_POINTS, budget), dtype=torch.double)
    bounds = torch.stack([torch.zeros(dim, dtype=torch.double),
                          torch.ones(dim, dtype=torch.double)])
    X: list[np.ndarray] = []
    Y: list[float] = []
    asked = 0

    def fitted() -> tuple[SingleTaskGP, torch.Tensor]:
        train_X = torch.tensor(np.array(X), dtype=torch.double)
        train_Y = -torch.tensor(Y, dtype=torch.double).unsqueeze(-1)
        model = SingleTaskGP(train_X, train_Y, outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return model, train_X

    def ask_batch(n: int) -> list[tuple[np.ndarray, Any]]:
        """``n`` points: the Sobol design's next, then one qLogNEI batch of the rest."""
        nonlocal asked
        out = [(design[i].numpy(), None) for i in range(asked, min(asked + n, len(design)))]
        asked += len(out)
        if len(out) < n:
            model, train_X = fitted()
            acq = qLogNoisyExpectedImprovement(model, X_baseline=train_X, prune_baseline=True)
            candidates, _ = optimize_acqf(acq, bounds=bounds, q=n - len(out), num_restarts=10,
                                          raw_samples=512, options={"sample_around_best": True})
            out += [(c.detach().numpy(), None) for c in candidates]
            asked += len(candidates)
        return out

    def ask() -> tuple[np.ndarray, Any]:
        return ask_batch(1)[0]

    def tell(_token: Any, x: np.ndarray, y: float) -> None:
        X.append(np.asarray(x, dtype=float))
        Y.append(float(y))

    def recommend() -> np.ndarray | None:
        """The evaluated point of highest posterior mean (of ``-y``)."""
        if not X:
            return None
        model, train_X = fitted()
        with torch.no_grad():
            mean = model.posterior(train_X).mean.squeeze(-1)
        return X[int(torch.argmax(mean))].copy()

    return Runner(ask, tell, recommend, ask_batch)


def make_runner(method: str, dim: int, budget: int, seed: int, workers: int = 1) -> Runner:
    """The :class:`Runner` of ``method`` for a ``dim``-dimensional unit-cube problem, set up
    for ``workers`` points asked at a time where the method has a setting for it."""
    if method in (*ours(), *paper_methods(), *AUTO_PARTS, *baselines()):
        return _engine(method, dim, budget, seed)
    if method.startswith("optuna-"):
        return _optuna(method, dim, budget, seed, workers)
    if method == "skopt-gp":
        return _skopt_gp(dim, budget, seed)
    if method.startswith("ng-"):
        return _nevergrad(method, dim, budget, seed, workers)
    if method == "botorch":
        return _botorch(dim, budget, seed)
    raise ValueError(f"method: unknown name {method!r}; expected one of {list(methods())}")


# ---------------------------------------------------------------- running


def machine_info() -> dict[str, Any]:
    """CPU model, core count, memory and Python version of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kib = next(int(line.split()[1]) for line in
                       Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal"))
    except (OSError, StopIteration):
        mem_kib = 0
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem_kib / 2**20, 1),
            "python": platform.python_version(), "platform": platform.platform(),
            "vector_isa": vector_isa()}


# The libraries whose versions decide a cell's numbers, recorded with each cell.
VERSIONED = ("hdbo", "numpy", "scipy", "torch", "optuna", "nevergrad", "botorch")


def library_versions() -> dict[str, str | None]:
    """The installed version of each of :data:`VERSIONED` (None where not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def vector_isa() -> str:
    """The widest vector instruction set NumPy and the BLAS dispatch to on this CPU
    (``"x86-64-avx512f"``, ``"x86-64-avx2"``, else ``platform.machine()``): runs diverge in
    their last bits between these, and from there in their proposals."""
    from numpy._core._multiarray_umath import __cpu_features__

    for feature in ("AVX512F", "AVX2"):
        if __cpu_features__.get(feature):
            return f"x86-64-{feature.lower()}"
    return platform.machine()


def run_cell(cell: Cell, out: Path) -> dict[str, Any]:
    """Run one cell and write its CSV and JSON (temporary names, then renamed).

    A cell finished meanwhile (by another run on the same folder) is not run
    again: its summary is returned as it is.
    """
    json_path = cell.paths(out)[1]
    if json_path.exists():
        return json.loads(json_path.read_text())
    problem = make_bench_problem(cell.problem, cell.dim, cell.seed)
    start = time.perf_counter()
    runner = make_runner(cell.method, cell.dim, cell.budget, cell.seed, cell.workers)
    setup_s = time.perf_counter() - start
    rows, opt_time, opt_cpu, status = [], 0.0, 0.0, "done"
    best = np.inf
    true_trace: list[tuple[int, float]] = []
    recommended: np.ndarray | None = None
    recommend_cpu = 0.0
    every = max(1, cell.budget // 20)
    constrained = Constrained(problem) if problem.n_constraints else None

    def on_step(step: Step, recommend: Callable[[], np.ndarray | None] = runner.recommend
                ) -> bool:
        nonlocal best, opt_time, opt_cpu, recommended, recommend_cpu, status
        extra = ""
        if constrained is None:
            best = min(best, step.y)
        else:
            feasible, c = constrained.record(step.evaluation, step.y)
            if feasible:
                best = min(best, step.y)
            extra = f",{int(feasible)}," + ",".join(repr(float(v)) for v in c)
        rows.append(f"{step.evaluation},{step.y!r},{best!r},{step.ask_s:.6f},{step.tell_s:.6f},"
                    f"{step.ask_cpu_s:.6f},{step.tell_cpu_s:.6f}{extra}")
        opt_time += step.ask_s + step.tell_s
        opt_cpu += step.ask_cpu_s + step.tell_cpu_s
        stop = (cell.time_limit_s is not None and opt_cpu > cell.time_limit_s
                and step.evaluation < cell.budget)
        if problem.evaluate_true_unit is not None and (
                step.evaluation % every == 0 or stop or step.evaluation == cell.budget):
            c0 = time.process_time()
            recommended = recommend()
            recommend_cpu += time.process_time() - c0
            if recommended is not None:
                true_trace.append((step.evaluation, problem.evaluate_true_unit(recommended)))
        if stop:
            status = "timeout"
        return stop

    if cell.workers > 1:
        drive_batches(runner, problem.evaluate_unit, cell.budget, cell.workers, on_step)
    elif constrained is None:
        drive(runner.ask, runner.tell, problem.evaluate_unit, cell.budget, on_step)
    else:
        drive(runner.ask, constrained.tell(runner.tell), constrained.evaluate, cell.budget,
              on_step)
        constrained.check_recommendation(runner.recommend)
    del runner, on_step  # Nevergrad's recast optimizers stop their thread when collected
    gc.collect()
    csv_path, json_path = cell.paths(out)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = csv_path.with_suffix(".csv.tmp")
    header = "evaluation,value,best_so_far,ask_s,tell_s,ask_cpu_s,tell_cpu_s"
    if constrained is not None:
        header += ",feasible," + ",".join(f"c{j}" for j in range(1, problem.n_constraints + 1))
    tmp.write_text(header + "\n" + "\n".join(rows) + "\n")
    tmp.replace(csv_path)
    summary = {**asdict(cell), "group": cell.group, "status": status,
               "evaluations": len(rows), "best": float(best), "f_min": problem.f_min,
               "optimizer_time_s": opt_time, "optimizer_cpu_s": opt_cpu, "setup_s": setup_s,
               "wall_time_s": time.perf_counter() - start,
               "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               "problem_info": problem.info,
               **({} if problem.evaluate_true_unit is None else {
                   "final_true_value": true_trace[-1][1] if true_trace else None,
                   "recommended": None if recommended is None else recommended.tolist(),
                   "true_trace": true_trace, "recommend_cpu_s": recommend_cpu}),
               **({} if constrained is None else constrained.summary()),
               "machine": machine_info(),
               "versions": library_versions(),
               "load_average_1min": os.getloadavg()[0],
               "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=1) + "\n")
    tmp.replace(json_path)
    return summary


def drive_batches(runner: Runner, evaluate: Callable[[np.ndarray], float], budget: int,
                  workers: int, on_step: Callable[[Step], bool | None]) -> int:
    """:func:`~hdbo_engine.loop.drive` for ``workers`` workers in step: each round asks for
    ``workers`` points (the last round for what the budget leaves), evaluates them all, then
    tells them all; a round's ask and tell times are shared equally among its points. Stops
    after the round in which ``on_step`` returns True. Returns the evaluations made."""
    done = 0
    while done < budget:
        k = min(workers, budget - done)
        c0, t0 = time.process_time(), time.perf_counter()
        asked = (runner.ask_batch(k) if runner.ask_batch is not None
                 else [runner.ask() for _ in range(k)])
        t1, c1 = time.perf_counter(), time.process_time()
        values = [evaluate(x) for x, _ in asked]
        c2, t2 = time.process_time(), time.perf_counter()
        for (x, token), y in zip(asked, values, strict=True):
            runner.tell(token, x, y)
        t3, c3 = time.perf_counter(), time.process_time()
        stop = False
        for (x, _), y in zip(asked, values, strict=True):
            done += 1
            step = Step(done, x, y, (t1 - t0) / k, (t3 - t2) / k, (c1 - c0) / k, (c3 - c2) / k)
            stop = bool(on_step(step)) or stop
        if stop:
            break
    return done


class Constrained:
    """A constrained cell's bookkeeping (module docstring): evaluates the constraints with the
    objective (outside the optimizer's timings), tells them to the method, and records
    feasibility and violation per evaluation."""

    def __init__(self, problem: BenchProblem) -> None:
        assert problem.constraints_unit is not None
        self.problem = problem
        self.last: np.ndarray | None = None  # the constraint values of the latest point
        self.n_feasible = 0
        self.first_feasible: int | None = None
        self.least_violation = np.inf
        self.recommended_feasible: bool | None = None

    def evaluate(self, x: np.ndarray) -> float:
        """The objective at ``x``; its constraint values are kept for :meth:`tell`."""
        assert self.problem.constraints_unit is not None
        self.last = np.asarray(self.problem.constraints_unit(x), dtype=float)
        return self.problem.evaluate_unit(x)

    def tell(self, tell: Callable[..., None]) -> Callable[[Any, np.ndarray, float], None]:
        """``tell`` with the latest point's constraint values passed on."""
        return lambda token, x, y: tell(token, x, y, constraints=self.last)

    def record(self, evaluation: int, y: float) -> tuple[bool, np.ndarray]:
        """Whether the latest point is feasible (finite value, every c_j <= 0), and its
        constraint values."""
        assert self.last is not None
        c = self.last
        violation = float(np.maximum(c, 0.0).sum()) if not np.isnan(c).any() else np.inf
        feasible = bool(violation == 0.0 and np.isfinite(y))
        self.least_violation = min(self.least_violation, violation)
        if feasible:
            self.n_feasible += 1
            if self.first_feasible is None:
                self.first_feasible = evaluation
        return feasible, c

    def check_recommendation(self, recommend: Callable[[], np.ndarray | None]) -> None:
        """Whether the method's final recommendation is feasible (None: it has none)."""
        assert self.problem.constraints_unit is not None
        x = recommend()
        self.recommended_feasible = (
            None if x is None else bool((self.problem.constraints_unit(x) <= 0).all()))

    def summary(self) -> dict[str, Any]:
        return {"constraints": self.problem.n_constraints,
                "feasible_found": self.n_feasible > 0, "n_feasible": self.n_feasible,
                "first_feasible": self.first_feasible,
                "least_violation": self.least_violation,
                "recommended_feasible": self.recommended_feasible}


def _set_threads(threads: int) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))


def run_suite(suite: Suite, out: Path, seeds: int | None = None, jobs: int = 1,
              progress: bool = True, command: str | None = None,
              methods: list[str] | None = None, first_seed: int = 0) -> list[dict[str, Any]]:
    """Run every unfinished cell of ``suite`` (seed-major), ``jobs`` worker processes at a time.

    ``seeds`` seeds from ``first_seed`` on (a seed is both the problem instance and the
    method's seed, so ``first_seed=100`` runs instances never used before).

    ``methods`` restricts the run to some of the suite's methods (two runs on
    the same folder with disjoint ``methods`` can go on side by side).
    Worker processes run single-threaded (BLAS and torch) unless the
    caller's environment says otherwise. ``command`` (how the run was
    started) is kept in ``out/command.txt`` for the report. Returns the
    summaries of the cells run now; finished cells on disk are skipped.
    """
    from tqdm.auto import tqdm

    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {jobs}")
    out.mkdir(parents=True, exist_ok=True)
    suite_copy = out / "suite.toml"
    if suite_copy.exists() and suite_copy.read_text() != suite.text:
        raise ValueError(f"--out: {out} holds a run of a different suite definition; "
                         "use a new directory")
    suite_copy.write_text(suite.text)
    if command is not None:
        with open(out / "command.txt", "a") as fh:
            fh.write(command + "\n")
    cells = suite.cells(seeds, methods, first_seed)
    todo = [c for c in cells if not c.paths(out)[1].exists()]
    n_all = len(cells)
    _set_threads(1)
    results = []
    with tqdm(total=sum(c.budget for c in todo), unit="eval", disable=not progress,
              desc=f"{suite.name}: {len(todo)} of {n_all} cells to run") as bar, \
            ProcessPoolExecutor(jobs, mp_context=get_context("spawn"),
                                max_tasks_per_child=1) as pool:
        futures = {pool.submit(run_cell, c, out): c for c in todo}
        for future in as_completed(futures):
            cell = futures[future]
            try:
                summary = future.result()
            except Exception as err:  # a failing method must not lose the other cells
                bar.write(f"FAILED {cell.group} {cell.method} seed{cell.seed}: {err!r}")
                continue
            results.append(summary)
            bar.update(cell.budget)
            bar.set_postfix_str(f"{cell.method} {cell.group} s{cell.seed} "
                                f"best {summary['best']:.4g}")
    return results
