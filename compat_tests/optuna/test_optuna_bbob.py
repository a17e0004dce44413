"""BBOB (COCO, via ``coco-experiment``) in Optuna: our samplers vs RandomSampler and TPESampler.

The functions OptunaHub's ``bbob`` benchmark wraps: ``cocoex.Suite("bbob")``
problems on ``[-5, 5]^D``, instance 1. Every method runs on every (function,
dimension, seed) in the same test; per problem the best values are
normalised to [0, 1] across the methods (0 = best method, 1 = worst), and a
sampler's aggregate is its mean normalised value. Each of our samplers must
beat RandomSampler on that aggregate. The default suite runs a small
version; ``-m slow`` runs more functions, seeds and a larger budget.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import optuna
import pytest
from _optuna_samplers import NAMED, missing_reason

from hdbo_cli.bench import vector_isa

cocoex = pytest.importorskip("cocoex")

N_STARTUP = 10

# Known shortfalls at the default size (strict: an unexpected pass fails, so a fixed shortfall
# is noticed); the adapter reproduces the engine's own ask/tell loop exactly
# (tests/test_optuna_adapter.py::test_matches_the_native_engine_loop). GO-UCB and BKB beat
# random search here (2026-11-26: mean normalised best 0.45 and 0.34 against random's 0.99
# and 0.87) and carry no marker. MS-UCB's margin is thin enough that the last bits of the CPU's
# vector kernels decide it: its shortfall was measured where the proposal hashes of
# tests/test_behaviour_lock.py for AVX-512 were recorded, and it beats random search on a CPU
# with AVX2 alone (2026-11-27: 0.662 against random's 0.689; f2 D=20 8.50e6 instead of
# 1.23e7), so its marker applies with AVX-512 only.
AVX512 = vector_isa() == "x86-64-avx512f"
KNOWN_SHORTFALL = {
    "msucb": "engine MS-UCB fixes D - d of the D coordinates to random values in every"
             " proposal, and the design's line search costs 2-5 of the 20 model trials; it wins"
             " the sphere f1 but loses the ill-conditioned f2 to random search by 2x. Measured"
             " 2026-11-26 (AVX-512): mean normalised best 0.662 against random's 0.644 (f1 D=20"
             " 183.6 vs 187.4, f1 D=40 358.2 vs 407.2, f2 D=20 1.23e7 vs 5.04e6, f2 D=40 1.86e7"
             " vs 8.71e6); a thin margin, decided by f1 D=20",
    "cobbo": "the engine's design (here the 10 startup trials) is the centre and greedy axis"
             " probes of 1/6 of the box, so after 30 trials CobBO has moved a few coordinates"
             " near the centre while random search has spread 30 points. Measured 2026-11-26:"
             " mean normalised best 0.75 against random's 0.62 (f1 D=20 134.6 vs 187.4, f1 D=40"
             " 423.5 vs 407.2, f2 D=20 8.35e6 vs 5.04e6, f2 D=40 1.54e7 vs 8.71e6)",
}
if not AVX512:
    del KNOWN_SHORTFALL["msucb"]


def bbob_best(make_sampler: Callable[[], optuna.samplers.BaseSampler], function: int, dim: int,
              budget: int) -> float:
    suite = cocoex.Suite("bbob", "", f"dimensions:{dim} function_indices:{function} "
                                     "instance_indices:1")
    problem = next(iter(suite))
    lower, upper = problem.lower_bounds, problem.upper_bounds

    def objective(trial: optuna.Trial) -> float:
        x = np.array([trial.suggest_float(f"x{i:02d}", lower[i], upper[i]) for i in range(dim)])
        return float(problem(x))

    study = optuna.create_study(sampler=make_sampler())
    study.optimize(objective, n_trials=budget)
    return study.best_value


def compare(name: str, functions: list[int], dims: list[int], seeds: list[int],
            budget: int) -> dict[str, float]:
    """Mean normalised best value of ``name``, RandomSampler and TPESampler (module docstring)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    methods: dict[str, Callable[[int], optuna.samplers.BaseSampler]] = {
        name: lambda s: NAMED[name](seed=s, n_startup_trials=N_STARTUP),
        "random": lambda s: optuna.samplers.RandomSampler(seed=s),
        "tpe": lambda s: optuna.samplers.TPESampler(seed=s, n_startup_trials=N_STARTUP),
    }
    scores: dict[str, list[float]] = {m: [] for m in methods}
    for function in functions:
        for dim in dims:
            for seed in seeds:
                best = {m: bbob_best(lambda f=f, s=seed: f(s), function, dim, budget)
                        for m, f in methods.items()}
                lo, hi = min(best.values()), max(best.values())
                for m, value in best.items():
                    scores[m].append((value - lo) / (hi - lo) if hi > lo else 0.0)
                print(f"f{function} D={dim} seed={seed}: "
                      + ", ".join(f"{m} {v:.4g}" for m, v in best.items()))
    aggregate = {m: float(np.mean(v)) for m, v in scores.items()}
    print("mean normalised best (0 = best):", aggregate)
    return aggregate


def _params(shortfalls: dict[str, str]) -> list:
    out = []
    for name in NAMED:
        reason = missing_reason(name)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        if name in shortfalls:
            marks.append(pytest.mark.xfail(reason=shortfalls[name], raises=AssertionError,
                                          strict=True))
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name", _params(KNOWN_SHORTFALL))
def test_beats_random_on_small_bbob(name: str) -> None:
    agg = compare(name, functions=[1, 2], dims=[20, 40], seeds=[0], budget=30)
    assert agg[name] < agg["random"]


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("name", _params({}))
def test_beats_random_on_bbob(name: str) -> None:
    """The larger run asks every sampler to beat random search; it has no recorded
    measurement, so it carries no expected failures."""
    agg = compare(name, functions=[1, 2, 8, 15], dims=[20, 40], seeds=[0, 1], budget=80)
    assert agg[name] < agg["random"]
