"""``preset="paper"`` / ``"practical"``: every algorithm, in the engine and all three adapters."""

from __future__ import annotations

import dataclasses

import numpy as np
import optuna
import pytest

from hdbo_adapters import nevergrad as ng_adapter
from hdbo_adapters import optuna as optuna_adapter
from hdbo_adapters import skopt as skopt_adapter
from hdbo_engine import get_algorithm

ALGOS = {"msucb": "MSUCB", "cobbo": "CobBO", "goucb": "GOUCB", "bkb": "BKB"}
PRESETS = ["practical", "paper"]
D, N_TRIALS = 4, 6


def _sphere(x: list[float]) -> float:
    return float(np.sum((np.asarray(x) - 0.3) ** 2))


def _check_engine(engine: object, preset: str) -> None:
    assert engine.preset == preset
    # every paper draws its whole initial design uniformly; the practical presets start at
    # the centre (base module docstring, "Initial design")
    assert engine.options.init_centre is (preset == "practical")
    assert engine.options.init_design == ("axis" if preset == "practical" else "uniform")
    assert engine.line_search is (preset == "practical")
    assert engine.n_told == N_TRIALS


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_engine_presets_run_and_differ_from_each_other(algo: str, preset: str) -> None:
    cls = get_algorithm(algo)
    opt = cls(D, seed=0, budget=20, preset=preset)
    for _ in range(N_TRIALS):
        (p,) = opt.ask()
        opt.tell(p.x, _sphere(p.x))
    _check_engine(opt, preset)
    assert cls.presets["paper"] != cls.presets["practical"]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_optuna_sampler_passes_the_preset(algo: str, preset: str) -> None:
    sampler = getattr(optuna_adapter, f"{ALGOS[algo]}Sampler")(seed=0, preset=preset)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: _sphere([t.suggest_float(f"x{i}", 0, 1) for i in range(D)]),
                   n_trials=N_TRIALS + 1)
    _check_engine(sampler._cache.optimizer, preset)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_skopt_optimizer_passes_the_preset(algo: str, preset: str) -> None:
    cls = getattr(skopt_adapter, f"{ALGOS[algo]}Optimizer")
    opt = cls([(0.0, 1.0)] * D, random_state=0, preset=preset)
    assert opt.n_initial_points_ == get_algorithm(algo).preset_n_init(preset, dim=D)
    for _ in range(N_TRIALS):
        x = opt.ask()
        opt.tell(x, _sphere(x))
    _check_engine(opt.engine, preset)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_nevergrad_family_passes_the_preset(algo: str, preset: str) -> None:
    family = ng_adapter.families()[ALGOS[algo]](seed=0, preset=preset)
    assert f"preset={preset!r}" in family.name
    opt = family(parametrization=D, budget=20)
    for _ in range(N_TRIALS):
        cand = opt.ask()
        opt.tell(cand, _sphere(np.clip(cand.value, 0, 1)))
    _check_engine(opt.engine, preset)


def test_unknown_preset_is_rejected_with_the_choices() -> None:
    for algo in ALGOS:
        with pytest.raises(ValueError, match=r"preset: expected one of \['paper', 'practical'\]"):
            get_algorithm(algo)(D, preset="fast")


@pytest.mark.parametrize("algo", [*sorted(ALGOS), "gpucb", "auto"])
def test_presets_are_options_objects_and_overrides_replace_them(algo: str) -> None:
    cls = get_algorithm(algo)
    if algo == "goucb":
        pytest.importorskip("torch")
    full = {"d": D} if algo == "gpucb" else {}  # GP-UCB is MS-UCB with d = D
    for preset, options in cls.presets.items():
        assert isinstance(options, cls.options_class)
        given = cls(D, seed=0, preset=preset, n_init=3)
        assert given.options == dataclasses.replace(options, n_init=3, **full)
        assert given.n_init == 3
        whole = cls(D, seed=0, options=dataclasses.replace(options, n_init=3))
        assert whole.options == given.options


@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_an_unknown_option_is_named_with_the_valid_ones(algo: str) -> None:
    cls = get_algorithm(algo)
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['tr_failure_tol'\]"
                                        r".*'failure_tol'"):
        cls(D, seed=0, tr_failure_tol=3)
    with pytest.raises(TypeError, match="options: expected a"):
        cls(D, seed=0, options={"n_init": 3})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cls.presets["practical"].n_init = 3  # type: ignore[misc]


def test_every_algorithm_names_the_trust_region_tolerance_failure_tol() -> None:
    for algo in ALGOS:
        assert "failure_tol" in get_algorithm(algo).options_class.names()
