"""Unit tests of hdbo_adapters.optuna: codec, study semantics, state, threads."""

from __future__ import annotations

import math
import warnings

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from hdbo_adapters.optuna import (
    ATTR_ASKING,
    ATTR_PROPOSAL,
    AutoSampler,
    BKBSampler,
    CobBOSampler,
    GOUCBSampler,
    HDBOSampler,
    MSUCBSampler,
    TrialSeededRandomSampler,
    _jsonable,
)
from hdbo_engine import get_algorithm
from hdbo_engine.space import Real, Space

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAST = {"n_optimize": 4, "restarts": 1, "n_candidates": 16}


def msucb(seed: int = 0, n_startup_trials: int = 3, **kw) -> MSUCBSampler:
    return MSUCBSampler(seed=seed, n_startup_trials=n_startup_trials, **{**FAST, **kw})


def quadratic(trial: optuna.Trial) -> float:
    return sum((trial.suggest_float(f"x{i}", -2.0, 2.0) - 0.5) ** 2 for i in range(3))


def test_named_samplers_are_thin_subclasses():
    for cls, name in [(MSUCBSampler, "msucb"), (CobBOSampler, "cobbo"),
                      (GOUCBSampler, "goucb"), (BKBSampler, "bkb")]:
        sampler = cls(seed=3, n_startup_trials=4, budget=50)
        assert isinstance(sampler, HDBOSampler) and isinstance(sampler, optuna.samplers.BaseSampler)
        assert sampler.algorithm == name and sampler.seed == 3


def test_generic_sampler_runs_any_registered_algorithm():
    # the first trial is stored as the engine's centre where its design starts there
    for name, stored in (("gpucb", 8), ("random", 7)):
        study = optuna.create_study(sampler=HDBOSampler(name, seed=0, n_startup_trials=3))
        study.optimize(quadratic, n_trials=8)
        assert len(study.trials) == 8
        assert sum(ATTR_PROPOSAL in t.system_attrs for t in study.trials) == stored


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="seed"):
        MSUCBSampler(seed=-1)
    with pytest.raises(ValueError, match="n_startup_trials"):
        MSUCBSampler(n_startup_trials=0)
    with pytest.raises(TypeError, match="independent_sampler"):
        MSUCBSampler(independent_sampler="random")
    with pytest.raises(TypeError, match="algorithm"):
        HDBOSampler(3)
    study = optuna.create_study(sampler=HDBOSampler("nope", seed=0))
    with pytest.raises(ValueError, match="algorithm: unknown name 'nope'"):
        study.optimize(quadratic, n_trials=1)  # the first trial asks where the design starts


STEPPED = {
    "a": FloatDistribution(-10.2, 10.2, step=0.1),
    "b": FloatDistribution(0.0, 0.9, step=0.3),
    "c": IntDistribution(-10, 8, step=3),
    "d": IntDistribution(1, 1000, log=True),
    "e": FloatDistribution(1e-5, 1.0, log=True),
    "f": CategoricalDistribution([None, True, 2, 3.5, "s"]),
    "g": IntDistribution(0, 3),
}


def test_relative_values_satisfy_their_distributions_exactly():
    study = optuna.create_study(sampler=msucb(n_startup_trials=4))
    for _ in range(12):
        trial = study.ask(STEPPED)
        study.tell(trial, float(trial.number % 5))
    for t in study.trials[1:]:
        assert ATTR_PROPOSAL in t.system_attrs  # relative sampling, not the fallback
    for t in study.trials:
        for name, dist in STEPPED.items():
            value = t.params[name]
            assert dist._contains(dist.to_internal_repr(value)), (name, value)
            assert type(value) is {FloatDistribution: float, IntDistribution: int}.get(
                type(dist), type(value))
    params = study.sampler.sample_relative(study, study.ask()._cached_frozen_trial, STEPPED)
    assert set(params) == set(STEPPED)
    assert all(not isinstance(v, (np.floating, np.integer)) for v in params.values())


def test_grid_index_mapping_round_trips_every_grid_value():
    dist = FloatDistribution(-1.0, 1.0, step=0.25)
    study = optuna.create_study(sampler=msucb())
    for v in np.arange(-1.0, 1.0001, 0.25):
        study.enqueue_trial({"x": float(v)})
    for _ in range(9):
        trial = study.ask({"x": dist})
        study.tell(trial, 1.0)
    trial = study.ask({"x": dist})  # every grid value is told: the engine must still answer
    assert dist._contains(trial.params["x"])


def test_maximize_is_negated_for_the_engine():
    sampler = msucb()
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(lambda t: -quadratic(t), n_trials=6)
    engine = sampler._cache.optimizer
    values = {t.number: t.value for t in study.trials}
    told = [e.y for e in sampler._cache.told]
    assert told == [-values[e.number] for e in sampler._cache.told]
    assert engine.n_told == 5  # trials 0..4 were told before trial 5 was asked


def test_fail_is_ignored_pruned_is_a_failure_and_nonfinite_values_survive():
    sampler = msucb()
    study = optuna.create_study(sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        value = quadratic(trial)
        if trial.number == 2:
            raise RuntimeError("boom")
        if trial.number == 3:
            raise optuna.TrialPruned()
        if trial.number == 4:
            return float("inf")
        if trial.number == 5:
            return float("nan")  # Optuna stores this as FAIL
        return value

    study.optimize(objective, n_trials=9, catch=(RuntimeError,))
    states = [t.state for t in study.trials]
    assert states[2] == TrialState.FAIL and states[3] == TrialState.PRUNED
    assert states[5] == TrialState.FAIL and states[8] == TrialState.COMPLETE
    told = {e.number: e.y for e in sampler._cache.told}
    assert 2 not in told and 5 not in told
    assert math.isnan(told[3]) and told[4] == math.inf
    assert study.best_value == min(t.value for t in study.trials
                                   if t.state == TrialState.COMPLETE)


def test_enqueued_and_partially_fixed_params_are_respected_and_told():
    sampler = msucb()
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=4)
    study.enqueue_trial({"x0": 1.25, "x1": -1.5, "x2": 0.0})
    study.enqueue_trial({"x1": 0.75})
    study.optimize(quadratic, n_trials=3)
    full, partial = study.trials[4], study.trials[5]
    assert full.params == {"x0": 1.25, "x1": -1.5, "x2": 0.0}
    assert partial.params["x1"] == 0.75
    assert np.allclose(partial.system_attrs[ATTR_PROPOSAL]["x"][1], (0.75 + 2) / 4)
    told = {e.number: e.x for e in sampler._cache.told}
    assert np.allclose(told[4], [(1.25 + 2) / 4, (-1.5 + 2) / 4, 0.5])
    assert np.allclose(told[5][1], (0.75 + 2) / 4)


def test_multi_objective_is_rejected_clearly():
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=msucb())
    with pytest.raises(ValueError, match="single-objective"):
        study.optimize(lambda t: (quadratic(t), 1.0), n_trials=1)


def _params(study: optuna.Study) -> list[list[float]]:
    return [list(t.params.values()) for t in study.trials]


def test_same_seed_same_trials_and_reseed_changes_them():
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=msucb(seed=11))
        study.optimize(quadratic, n_trials=7)
        runs.append(_params(study))
    assert runs[0] == runs[1]
    sampler = msucb(seed=11)
    old_seed = sampler.seed
    sampler.reseed_rng()
    assert sampler.seed != old_seed
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=7)
    assert _params(study) != runs[0]



def test_a_study_keeps_the_seed_of_its_first_proposal():
    uninterrupted = optuna.create_study(sampler=msucb(seed=11, n_startup_trials=6))
    uninterrupted.optimize(quadratic, n_trials=8)
    sampler = msucb(seed=11, n_startup_trials=6)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=4)
    sampler.reseed_rng()  # what Optuna does for every trial of n_jobs > 1
    study.optimize(quadratic, n_trials=4)
    assert _params(study) == _params(uninterrupted)
    storage = optuna.storages.InMemoryStorage()  # two workers with other seeds take turns
    first = optuna.create_study(study_name="s", storage=storage,
                                sampler=msucb(seed=11, n_startup_trials=6))
    second = optuna.load_study(study_name="s", storage=storage,
                               sampler=msucb(seed=12, n_startup_trials=6))
    first.optimize(quadratic, n_trials=2)  # trial 0 is the independent sampler's
    for _ in range(3):
        second.optimize(quadratic, n_trials=1)
        first.optimize(quadratic, n_trials=1)
    assert _params(first) == _params(uninterrupted)



def test_the_first_trial_is_the_centre_the_design_starts_from():
    def objective(trial: optuna.Trial) -> float:
        trial.suggest_float("lin", -2.0, 6.0)
        trial.suggest_float("log", 1e-4, 1.0, log=True)
        trial.suggest_int("k", 1, 9)
        trial.suggest_categorical("act", ["relu", "tanh", "gelu"])
        return 0.0

    study = optuna.create_study(sampler=msucb(seed=3))
    study.optimize(objective, n_trials=2)
    first = study.trials[0].params
    assert first["lin"] == 2.0 and first["k"] == 5 and first["act"] == "relu"
    assert math.isclose(first["log"], 1e-2)  # the geometric middle
    assert study.trials[1].params != first
    for no_centre in (HDBOSampler("random", seed=3), msucb(seed=3, preset="paper")):
        other = optuna.create_study(sampler=no_centre)  # designs that never start there
        other.optimize(objective, n_trials=1)
        assert other.trials[0].params["lin"] != 2.0
    own = optuna.create_study(sampler=msucb(
        seed=3, independent_sampler=optuna.samplers.RandomSampler(seed=0)))
    own.optimize(objective, n_trials=1)  # a sampler the user passes draws every first trial
    assert own.trials[0].params["lin"] != 2.0

def test_concurrent_trials_follow_the_axis_design():
    space = {f"x{i}": FloatDistribution(-2.0, 2.0) for i in range(3)}
    study = optuna.create_study(sampler=msucb(seed=5, n_startup_trials=7))
    study.enqueue_trial({name: 0.0 for name in space})  # the centre, told first
    centre = study.ask(fixed_distributions=space)
    study.tell(centre, 1.0)
    batch = [study.ask(fixed_distributions=space) for _ in range(4)]  # four workers at once
    steps = np.array([[t.params[f"x{i}"] for i in range(3)] for t in batch])
    assert [centre.params[f"x{i}"] for i in range(3)] == [0.0, 0.0, 0.0]
    moved = np.abs(steps) > 0
    assert (moved.sum(axis=1) == 1).all()  # each probe steps along one axis
    axes = moved.argmax(axis=1)
    assert axes[0] == axes[1] != axes[2] == axes[3]  # both signs of two coordinates
    probes = steps[np.arange(4), axes]
    np.testing.assert_allclose(probes[[0, 2]], -probes[[1, 3]])
    assert ((np.abs(probes) >= 4 / 6 * 0.75) & (np.abs(probes) <= 4 / 6 * 1.25)).all()

def _algorithms() -> list:
    out = []
    for name in ("msucb", "cobbo", "goucb", "bkb"):
        try:
            get_algorithm(name)
            marks = []
        except ImportError as err:
            marks = [pytest.mark.skip(reason=f"engine algorithm {name!r} not importable: {err}")]
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name", _algorithms())
def test_matches_the_native_engine_loop(name: str):
    """Same seed, same continuous problem: the study's trials are the engine loop's points,
    from its first (the centre) on, with the engine's metas."""
    dim, seed, n_init = 4, 5, 4
    kwargs = FAST if name == "msucb" else {}
    space = {f"x{i}": FloatDistribution(-5.0, 5.0) for i in range(dim)}

    def f(values: list[float]) -> float:
        return float(sum((v - 1.0) ** 2 for v in values))

    sampler = HDBOSampler(name, seed=seed, n_startup_trials=n_init, budget=14, **kwargs)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: f([t.suggest_float(n, -5.0, 5.0) for n in space]), n_trials=14)

    engine = get_algorithm(name)(Space([Real(-5.0, 5.0)] * dim), seed=seed, n_init=n_init,
                                 budget=14, **kwargs)
    for t in study.trials:  # the first trial included: the engine's centre
        (proposal,) = engine.ask()
        values = engine.space.decode(proposal.x)[0]
        assert values == [t.params[n] for n in space]
        assert t.system_attrs[ATTR_PROPOSAL]["meta"] == _jsonable(proposal.meta)
        engine.tell(proposal.x, f(values))



def test_auto_judges_noise_through_optuna_as_the_engine_does():
    """A noisy objective: the study replicates the design's best point as the engine loop
    does, the first trial (the centre) counted as a design point."""
    dim, seed, n_init, budget = 3, 4, 12, 24
    names = [f"x{i}" for i in range(dim)]

    def noisy(values: list[float], count: list[int]) -> float:
        count.append(1)
        return float(sum(v * v for v in values) + 10.0 * math.sin(7.0 * len(count)))

    count_study: list[int] = []
    study = optuna.create_study(sampler=AutoSampler(seed=seed, n_startup_trials=n_init,
                                                    budget=budget))
    study.optimize(lambda t: noisy([t.suggest_float(n, -2.0, 2.0) for n in names], count_study),
                   n_trials=budget)
    engine = get_algorithm("auto")(Space([Real(-2.0, 2.0)] * dim), seed=seed, n_init=n_init,
                                   budget=budget)
    count_engine: list[int] = []
    for t in study.trials:
        (proposal,) = engine.ask()
        values = engine.space.decode(proposal.x)[0]
        assert values == [t.params[n] for n in names]
        engine.tell(proposal.x, noisy(values, count_engine), proposal.meta)
    replicates = [t for t in study.trials if "replicate" in t.system_attrs[ATTR_PROPOSAL]["meta"]]
    assert len(replicates) == 1 and engine.noise_observed()


def test_the_recommended_trial_is_the_engines_recommendation():
    """Under noise the engine's pick (lowest posterior quantile), not the luckiest draw; without
    noise the best trial."""
    dim, seed, budget = 3, 6, 40
    names = [f"x{i}" for i in range(dim)]

    def noisy(values: list[float], number: int) -> float:
        draw = np.random.default_rng(number).normal(0.0, 2.0) - 20.0 * (number == 5)
        return float(sum((v - 0.5) ** 2 for v in values) + draw)  # trial 5: a lucky draw

    sampler = AutoSampler(seed=seed, budget=budget, noisy=True)
    study = optuna.create_study(sampler=sampler)
    assert sampler.recommended_trial(study) is None
    study.optimize(lambda t: noisy([t.suggest_float(n, -2.0, 2.0) for n in names], t.number),
                   n_trials=budget)
    engine = get_algorithm("auto")(Space([Real(-2.0, 2.0)] * dim), seed=seed, budget=budget,
                                   noisy=True)
    for number in range(budget):
        (proposal,) = engine.ask()
        engine.tell(proposal.x, noisy(engine.space.decode(proposal.x)[0], number),
                    proposal.meta)
    picked = sampler.recommended_trial(study)
    assert [picked.params[n] for n in names] == engine.space.decode(engine.recommend())[0]
    assert study.best_trial.number == 5 and picked.number != 5
    plain = optuna.create_study(sampler=msucb(seed=1))
    plain.optimize(quadratic, n_trials=12)
    assert plain.sampler.recommended_trial(plain).number == plain.best_trial.number

def test_cache_is_extended_not_rebuilt_and_rebuild_gives_the_same_proposal():
    sampler = msucb(seed=2)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=6)
    engine = sampler._cache.optimizer
    study.optimize(quadratic, n_trials=3)
    assert sampler._cache.optimizer is engine and engine.n_told == 8

    trial = study.ask()
    space = sampler.infer_relative_search_space(study, trial._cached_frozen_trial)
    cached = sampler.sample_relative(study, trial._cached_frozen_trial, space)
    fresh = msucb(seed=2)  # a new process: state only from the study
    assert fresh.sample_relative(study, trial._cached_frozen_trial, space) == cached

    # A trial that finished "earlier" than the last ones: the history is no longer an
    # extension of what the cache told, so the sampler rebuilds, like a new process would.
    first = study.trials[0]
    early = optuna.trial.FrozenTrial(
        number=0, state=TrialState.COMPLETE, value=0.0, values=None,
        datetime_start=first.datetime_start, datetime_complete=first.datetime_complete,
        params={"x0": 0.1, "x1": 0.2, "x2": 0.3}, distributions=space, user_attrs={},
        system_attrs={}, intermediate_values={}, trial_id=0)
    study.add_trial(early)
    nxt = study.ask()._cached_frozen_trial
    rebuilt = sampler.sample_relative(study, nxt, space)
    assert sampler._cache.optimizer is not engine
    assert msucb(seed=2).sample_relative(study, nxt, space) == rebuilt


def test_running_trials_are_pending_points():
    sampler = msucb(seed=4)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=5)
    asked = [study.ask() for _ in range(4)]
    for trial in asked:
        quadratic(trial)  # suggest, do not tell
    engine = sampler._cache.optimizer
    assert len(engine.pending) == 4  # three RUNNING trials + the last proposal itself
    points = {tuple(t.params.values()) for t in asked}
    assert len(points) == 4
    other = msucb(seed=4)  # another process sees the same pending points
    trial = study.ask()
    space = other.infer_relative_search_space(study, trial._cached_frozen_trial)
    other.sample_relative(study, trial._cached_frozen_trial, space)
    assert len(other._cache.optimizer.pending) == 5
    assert all(ATTR_PROPOSAL in t.system_attrs for t in study.trials[5:9])


def test_threads_share_one_sampler_safely():
    study = optuna.create_study(sampler=msucb(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(quadratic, n_trials=24, n_jobs=4)
    assert len(study.trials) == 24
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert len({tuple(p) for p in _params(study)}) == 24


def test_dynamic_search_space_falls_back_and_rebuilds():
    sampler = msucb()
    study = optuna.create_study(sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -1, 1)
        if trial.number >= 5:
            return x**2 + trial.suggest_int("k", 0, 4)
        return x**2

    study.optimize(objective, n_trials=10)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert all(ATTR_PROPOSAL in t.system_attrs for t in study.trials[1:])


def test_sampler_pickles():
    import pickle

    sampler = msucb(seed=9)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=5)
    clone = pickle.loads(pickle.dumps(sampler))
    assert clone.seed == 9 and clone._cache is None


def _foreign_ask_in_progress(study: optuna.Study, age_s: float) -> optuna.Trial:
    """A RUNNING trial that another process has started sampling ``age_s`` seconds ago."""
    import time

    trial = study.ask()
    study._storage.set_trial_system_attr(trial._trial_id, ATTR_ASKING,
                                         ["another-process", time.time() - age_s])
    return trial


class _CountingClock:
    """The adapter's ``time`` module with ``sleep`` counted (and still slept)."""

    def __init__(self) -> None:
        import time

        self.time, self.sleeps = time.time, 0
        self._sleep = time.sleep

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self._sleep(seconds)


def test_an_ask_waits_for_an_earlier_ask_of_another_process(monkeypatch):
    import threading
    import time

    import hdbo_adapters.optuna as adapter

    sampler = msucb(seed=1)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=5)
    other = _foreign_ask_in_progress(study, age_s=0.0)
    foreign_x = [0.1, 0.2, 0.3]
    events: list[str] = []
    clock = _CountingClock()
    monkeypatch.setattr(adapter, "time", clock)

    def finish_other() -> None:
        time.sleep(0.3)
        events.append("other stores its proposal")  # before it can be seen
        study._storage.set_trial_system_attr(other._trial_id, ATTR_PROPOSAL, {
            "x": foreign_x, "meta": {"foreign": True},
            "space": _space_key(sampler)})

    thread = threading.Thread(target=finish_other)
    thread.start()
    quadratic(study.ask())
    events.append("this ask returned")
    thread.join()
    # it waited for the other proposal ...
    assert events == ["other stores its proposal", "this ask returned"] and clock.sleeps > 0
    pending = sampler._cache.optimizer.pending
    assert any(np.allclose(p, foreign_x) for p in pending)  # ... and avoided it


def _space_key(sampler: HDBOSampler) -> str:
    return sampler._cache.key[0]


def test_a_stale_or_own_ask_mark_does_not_block(monkeypatch):
    import hdbo_adapters.optuna as adapter

    sampler = msucb(seed=1)
    sampler.pending_wait_s = 5.0
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=5)
    _foreign_ask_in_progress(study, age_s=10.0)  # its worker died mid-ask
    clock = _CountingClock()
    monkeypatch.setattr(adapter, "time", clock)
    study.optimize(quadratic, n_trials=2)
    assert clock.sleeps == 0  # neither ask waited for the stale mark nor for its own
    assert len(study.get_trials(states=(TrialState.COMPLETE,))) == 7


def test_run_optuna_refuses_a_mismatched_study(tmp_path):
    import argparse

    from hdbo_cli.optuna_run import run_optuna

    args = argparse.Namespace(algo="random", problem="ackley", dim=3, budget=3, seed=0,
                              out=str(tmp_path), storage=str(tmp_path / "j.log"),
                              study_name="s", workers=1, heartbeat=30, quiet=True)
    assert run_optuna(args) == 0
    assert (tmp_path / "summary.json").exists()
    with pytest.raises(ValueError, match="study_name"):
        run_optuna(argparse.Namespace(**{**vars(args), "dim": 4}))
    with pytest.raises(ValueError, match="storage"):
        run_optuna(argparse.Namespace(**{**vars(args), "storage": str(tmp_path / "x.db")}))


def test_run_optuna_joins_a_study_whose_settings_another_worker_is_still_writing(tmp_path):
    import argparse

    import optuna

    from hdbo_cli.optuna_run import make_storage, run_optuna

    storage = str(tmp_path / "j.log")
    args = argparse.Namespace(algo="random", problem="ackley", dim=3, budget=2, seed=0,
                              out=str(tmp_path), storage=storage, study_name="s", workers=1,
                              heartbeat=30, quiet=True)
    study = optuna.create_study(study_name="s", storage=make_storage(storage))
    study.set_user_attr("dim", 3)  # a worker that started first has written two of four
    study.set_user_attr("seed", 0)
    assert run_optuna(args) == 0
    with pytest.raises(ValueError, match="study_name"):
        run_optuna(argparse.Namespace(**{**vars(args), "seed": 1}))
    with pytest.raises(ValueError, match="workers"):
        run_optuna(argparse.Namespace(**{**vars(args), "workers": 0}))
    with pytest.raises(ValueError, match="heartbeat"):
        run_optuna(argparse.Namespace(**{**vars(args), "heartbeat": -1}))


def _first_ask_lands_on(monkeypatch, sampler: HDBOSampler, x: np.ndarray,
                        during_first=None) -> list[object]:
    """Make the engine's next ask return ``x`` (as if its process had not seen the trial that
    holds it; ``during_first`` runs inside that ask); later asks are the engine's own. Returns
    the engine's pending points at each ask, one entry per ask."""
    from hdbo_engine.base import Proposal

    engine_cls = sampler.algorithm_class
    real_ask = engine_cls.ask
    calls: list[object] = []

    def ask(self, *args, **kwargs):
        calls.append(self.pending.copy())
        if len(calls) == 1:
            if during_first is not None:
                during_first()
            return [Proposal(np.array(x, dtype=float), {})]
        return real_ask(self, *args, **kwargs)

    monkeypatch.setattr(engine_cls, "ask", ask)
    return calls


def test_a_point_an_earlier_trial_finished_at_meanwhile_is_asked_again(monkeypatch):
    """An earlier trial, unknown to this ask when it read the study, finishes at the point this
    ask lands on before the ask has returned: the ask asks again with that point told."""
    from optuna.distributions import FloatDistribution

    sampler = msucb(seed=6)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=6)
    other = study.ask()  # another process's trial, no parameters yet
    mine = study.ask()
    x_same = np.full(3, 0.3125)  # x_i = -2 + 4 * 0.3125 = -0.75 in quadratic's [-2, 2]

    def other_finishes() -> None:
        dist = FloatDistribution(-2.0, 2.0)
        for i in range(3):
            study._storage.set_trial_param(other._trial_id, f"x{i}", -0.75, dist)
        study.tell(other, 3 * 1.25**2)

    calls = _first_ask_lands_on(monkeypatch, sampler, x_same, during_first=other_finishes)
    quadratic(mine)
    stored = np.array(study._storage.get_trial(mine._trial_id).system_attrs[ATTR_PROPOSAL]["x"])
    assert len(calls) == 2 and not np.array_equal(stored, x_same)
    assert any(np.array_equal(x, x_same) for x in sampler._cache.optimizer.X)  # told now
    assert study.trials[mine.number].params != study.trials[other.number].params


def test_a_point_an_earlier_ask_stores_after_this_one_is_asked_again(monkeypatch):
    """The race: an earlier trial, not yet marked when this ask began, computes the same point
    and stores it after this ask has stored its own. This ask waits for it and asks again, its
    own proposal withdrawn meanwhile (so that later trials wait for the new one)."""
    import threading
    import time

    sampler = msucb(seed=6)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=6)
    storage = study._storage
    other = study.ask()  # another process's trial: created, not yet marked
    mine = study.ask()
    x_same = np.full(3, 0.3125)
    key: list[str] = []
    withdrawn: list[object] = []

    def other_process_asks() -> None:  # it marks itself now and stores the same point later
        key.append(sampler._cache.key[0])
        storage.set_trial_system_attr(other._trial_id, ATTR_ASKING,
                                      ["another-process", time.time()])

        def store() -> None:
            time.sleep(0.3)
            storage.set_trial_system_attr(other._trial_id, ATTR_PROPOSAL, {
                "x": [float(v) for v in x_same], "meta": {}, "space": key[0]})

        threading.Thread(target=store).start()

    calls = _first_ask_lands_on(monkeypatch, sampler, x_same, during_first=other_process_asks)
    real_read = sampler._read_study

    def read(study_, trial_, codec_):
        if len(calls) == 1:  # the second ask's read: this trial's proposal is withdrawn
            withdrawn.append(storage.get_trial(mine._trial_id).system_attrs[ATTR_PROPOSAL])
        return real_read(study_, trial_, codec_)

    monkeypatch.setattr(sampler, "_read_study", read)
    quadratic(mine)
    stored = np.array(storage.get_trial(mine._trial_id).system_attrs[ATTR_PROPOSAL]["x"])
    assert len(calls) == 2 and not np.array_equal(stored, x_same)
    assert any(np.array_equal(p, x_same) for p in calls[1])
    assert withdrawn == [None]


def test_the_ask_mark_is_refreshed_while_an_ask_runs(monkeypatch):
    import threading

    sampler = msucb(seed=1)
    sampler.pending_wait_s = 0.2  # refresh every 0.05 s
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=5)
    trial = study.ask()
    marks: list[object] = []
    refreshed = threading.Event()
    storage = study._storage
    real_set = storage.set_trial_system_attr

    def set_attr(trial_id, key, value):
        if trial_id == trial._trial_id and key == ATTR_ASKING and value is not None:
            marks.append(value)
            if len(marks) >= 3:
                refreshed.set()
        return real_set(trial_id, key, value)

    monkeypatch.setattr(storage, "set_trial_system_attr", set_attr)
    engine_cls = sampler.algorithm_class
    real_ask = engine_cls.ask
    during: list[int] = []

    def ask(self, *args, **kwargs):  # an ask that runs until the mark has been refreshed
        refreshed.wait(timeout=60.0)
        during.append(len(marks))
        return real_ask(self, *args, **kwargs)

    monkeypatch.setattr(engine_cls, "ask", ask)
    quadratic(trial)
    assert during and during[0] >= 3  # first mark + refreshes while the ask ran
    assert len({m[1] for m in marks[:3]}) == 3  # each refresh carries a new time


def test_a_trial_that_dies_mid_ask_gets_a_heartbeat_and_goes_stale(tmp_path):
    import time

    from hdbo_cli.optuna_run import make_storage

    storage = make_storage(f"sqlite:///{tmp_path / 'hb.db'}", heartbeat=1)
    optuna.create_study(study_name="hb", storage=storage).optimize(quadratic, n_trials=1)
    # a sampler whose engine fails while asking leaves the trial RUNNING, as a dead worker would
    study = optuna.load_study(study_name="hb", storage=storage, sampler=msucb(bogus=1))
    with warnings.catch_warnings():  # Optuna: heartbeats are meant for optimize, not ask
        warnings.simplefilter("ignore")
        trial = study.ask()
    with pytest.raises(TypeError, match="bogus"):
        quadratic(trial)
    assert study.trials[1].state == TrialState.RUNNING
    time.sleep(3.5)  # grace period 2 s; SQLite's clock has whole seconds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)
    assert study.trials[1].state == TrialState.FAIL


def test_workers_sharing_a_seed_draw_different_first_trials(tmp_path):
    """The duplicate-trial case: two samplers with seed 0 on one storage, one trial each, before
    either completes: the default independent sampler is seeded by the trial number too."""
    url = f"sqlite:///{tmp_path / 'd.db'}"
    values = []
    for _ in range(2):
        study = optuna.create_study(study_name="d", storage=url, sampler=CobBOSampler(seed=0),
                                    load_if_exists=True)
        trial = study.ask()
        values.append([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)])
    assert values[0] != values[1]
    again = optuna.create_study(sampler=CobBOSampler(seed=0)).ask()  # reproducible: trial 0
    assert [again.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)] == values[0]
    with pytest.raises(ValueError, match="seed"):
        TrialSeededRandomSampler(seed=-2)


def test_engine_draws_are_salted_by_trial_number_only_beside_running_trials(monkeypatch):
    sampler = msucb(n_startup_trials=6)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=2)
    asks = []
    real_ask = sampler.algorithm_class.ask

    def spy(self, n=1, *, salt=None):
        asks.append(salt)
        return real_ask(self, n, salt=salt)

    monkeypatch.setattr(sampler.algorithm_class, "ask", spy)
    study.optimize(quadratic, n_trials=1)  # sequential: the engine's plain next proposal
    running = study.ask()
    quadratic(running)  # RUNNING with all its parameters: a pending point
    study.optimize(quadratic, n_trials=1)
    assert asks == [None, None, study.trials[-1].number]


def test_an_infinitely_good_value_is_told_as_a_failure_with_a_warning():
    sampler = msucb()
    study = optuna.create_study(sampler=sampler, direction="maximize")

    def objective(trial: optuna.Trial) -> float:
        value = -quadratic(trial)
        return float("inf") if trial.number == 1 else value

    study.optimize(objective, n_trials=2)
    with pytest.warns(UserWarning, match="trial 1: value inf"):
        study.optimize(lambda t: -quadratic(t), n_trials=1)
    told = {e.number: e.y for e in sampler._cache.told}
    assert math.isnan(told[1]) and study.trials[2].state == TrialState.COMPLETE
