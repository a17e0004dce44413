"""Registering one algorithm makes it appear in Optuna, skopt, Nevergrad, ``hdbo run`` and
``hdbo bench`` (docs/ARCHITECTURE.md, "The registry")."""

from __future__ import annotations

from collections.abc import Iterator

import nevergrad as ng
import numpy as np
import optuna
import pytest

import hdbo_adapters.nevergrad as ng_adapter
from hdbo_adapters import optuna as optuna_adapter
from hdbo_adapters import skopt as skopt_adapter
from hdbo_cli import bench
from hdbo_cli.cli import build_parser
from hdbo_engine import registry
from hdbo_engine.base import Optimizer


class Dummy(Optimizer):
    """Proposes the point ``0.25`` in every coordinate, then uniform draws."""

    name = "dummy"
    default_n_init = 1

    def _propose(self, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, dict]]:
        return [(rng.random(self.dim), {"dummy": True}) for _ in range(n)]


@pytest.fixture()
def dummy() -> Iterator[registry.Entry]:
    entry = registry.register("dummy", Dummy, nevergrad_name="DummyHDBO")
    ng_adapter.register()
    try:
        yield entry
    finally:
        registry.unregister("dummy")
        ng.optimizers.registry.unregister("DummyHDBO")


def _sphere(x: np.ndarray) -> float:
    return float(np.sum((np.asarray(x, dtype=float) - 0.3) ** 2))


def test_a_registered_algorithm_appears_everywhere(dummy: registry.Entry) -> None:
    # Optuna
    sampler = optuna_adapter.DummySampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: _sphere([t.suggest_float(f"x{i}", 0, 1) for i in range(3)]),
                   n_trials=4)
    assert type(sampler._cache.optimizer) is Dummy
    assert sampler._cache.optimizer.n_told == 3  # the last trial is told at the next sample
    # skopt
    opt = skopt_adapter.DummyOptimizer([(0.0, 1.0)] * 3, random_state=0)
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, _sphere(x))
    assert type(opt.engine) is Dummy
    result = skopt_adapter.dummy_minimize(_sphere, [(0.0, 1.0)] * 3, n_calls=3, random_state=0)
    assert len(result.func_vals) == 3
    # Nevergrad
    ng_opt = ng.optimizers.registry["DummyHDBO"](parametrization=3, budget=4)
    for _ in range(4):
        cand = ng_opt.ask()
        ng_opt.tell(cand, _sphere(np.clip(cand.value, 0, 1)))
    assert type(ng_opt.engine) is Dummy
    # hdbo run and hdbo bench
    args = build_parser().parse_args(["run", "--algo", "dummy"])
    assert args.algo == "dummy"
    assert "dummy" in bench.ours()


def test_unregistered_names_are_gone(dummy: registry.Entry) -> None:
    registry.unregister("dummy")
    with pytest.raises(AttributeError):
        optuna_adapter.DummySampler  # noqa: B018
    with pytest.raises(ValueError, match="algorithm: unknown name 'dummy'"):
        registry.get_algorithm("dummy")


def test_register_rejects_bad_names() -> None:
    with pytest.raises(ValueError, match="name: expected a lower-case name"):
        registry.register("My_Algo", Dummy)
    with pytest.raises(TypeError, match="target: expected 'module:Class' or a class"):
        registry.register("x", 3)  # type: ignore[arg-type]


def test_public_algorithms_and_their_framework_names() -> None:
    public = {e.name: (e.class_name, e.nevergrad_name) for e in registry.entries(public=True)}
    assert public == {"auto": ("Auto", "HDBO"), "msucb": ("MSUCB", "MSUCB"),
                      "cobbo": ("CobBO", "CobBO"), "goucb": ("GOUCB", "GOUCB"),
                      "bkb": ("BKB", "BKB")}
    assert {"AutoSampler", "MSUCBSampler", "CobBOSampler", "GOUCBSampler",
            "BKBSampler"} <= set(dir(optuna_adapter))
    assert {"AutoOptimizer", "auto_minimize", "bkb_minimize"} <= set(dir(skopt_adapter))
    assert isinstance(ng.optimizers.registry["HDBO"], ng_adapter.families()["HDBO"])
