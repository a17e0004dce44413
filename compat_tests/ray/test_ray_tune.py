"""Auto run through Ray Tune: Optuna's and Nevergrad's searchers, ASHA, and ``Tuner.restore``.

Each test runs a few small Tune experiments on the local two-CPU Ray cluster of
``conftest.py``; the objective is :func:`_tune_runs.sphere` (minimum 0 at 0.3 in every
coordinate) in a few dimensions, since what is checked is how Tune and the samplers talk.
"""

from __future__ import annotations

import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray Tune is not installed: pip install -e '.[ray]'")

import nevergrad as ng  # noqa: E402
import optuna  # noqa: E402
import sqlalchemy.exc  # noqa: E402
from _tune_runs import (  # noqa: E402
    RESTORE_TRIALS,
    box,
    learning_curve,
    one_result,
    restorable_tuner,
    restored_tuner,
    sphere,
)
from optuna.trial import TrialState  # noqa: E402
from ray import tune  # noqa: E402
from ray.tune.schedulers import ASHAScheduler  # noqa: E402
from ray.tune.search.nevergrad import NevergradSearch  # noqa: E402
from ray.tune.search.optuna import OptunaSearch as RayOptunaSearch  # noqa: E402

import hdbo_adapters.nevergrad  # noqa: E402, F401  (registers HDBO)
from hdbo_adapters.optuna import AutoSampler  # noqa: E402
from hdbo_adapters.ray import OptunaSearch  # noqa: E402

HERE = Path(__file__).resolve().parent
CONCURRENT = 4


def configs(results: tune.ResultGrid) -> list[tuple[float, ...]]:
    return [tuple(r.config[k] for k in sorted(r.config)) for r in results]


def hdbo_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "hdbo_" in w.filename]


@pytest.mark.parametrize("max_t", [0, 2.5, True, "4"])
def test_max_t_must_be_a_positive_int(max_t: object) -> None:
    with pytest.raises(ValueError, match="max_t: expected an int >= 1 or None"):
        OptunaSearch(sampler=AutoSampler(seed=0), max_t=max_t)


def test_optuna_search_concurrent_trials_are_pending(ray_address: str, tmp_path: Path) -> None:
    """Ray's OptunaSearch asks ``study.ask()`` while the other trials are RUNNING in the study:
    the sampler gets them as pending points and proposes distinct configurations."""
    search = RayOptunaSearch(sampler=AutoSampler(seed=0, budget=16))
    tuner = tune.Tuner(
        one_result, param_space=box(4),
        tune_config=tune.TuneConfig(search_alg=search, num_samples=16,
                                    max_concurrent_trials=CONCURRENT, metric="loss",
                                    mode="min", reuse_actors=True),
        run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = tuner.fit()
    assert not results.errors and len(results) == 16
    assert len(set(configs(results))) == 16  # no configuration twice
    study = search._ot_study
    trials = study.get_trials(states=(TrialState.COMPLETE,))
    assert sorted(tuple(t.params[k] for k in sorted(t.params)) for t in trials) == \
        sorted(configs(results))  # every Tune trial is one study trial, told its value
    # the sampler did ask while CONCURRENT - 1 other trials were running (created, not told)
    proposed = [t for t in trials if "hdbo:proposal" in t.system_attrs]
    running = [sum(o.datetime_start < t.datetime_start < o.datetime_complete for o in trials)
               for t in proposed]
    assert proposed and max(running) == CONCURRENT - 1
    best = results.get_best_result("loss", "min")
    assert best.metrics["loss"] == study.best_value
    assert best.config == study.best_params
    assert hdbo_warnings(caught) == []


def test_nevergrad_search_with_hdbo(ray_address: str, tmp_path: Path) -> None:
    """NevergradSearch asks the registered HDBO once per trial and tells it on completion;
    the asked-not-told candidates are pending in the engine."""
    search = NevergradSearch(optimizer=ng.optimizers.registry["HDBO"],
                             optimizer_kwargs={"budget": 16, "num_workers": CONCURRENT})
    results = tune.Tuner(
        one_result, param_space=box(4),
        tune_config=tune.TuneConfig(search_alg=search, num_samples=16,
                                    max_concurrent_trials=CONCURRENT, metric="loss",
                                    mode="min", reuse_actors=True),
        run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0)).fit()
    assert not results.errors and len(results) == 16
    assert len(set(configs(results))) == 16
    optimizer = search._nevergrad_opt
    assert optimizer.num_ask == optimizer.num_tell == 16
    best = results.get_best_result("loss", "min")
    recommendation = optimizer.provide_recommendation().value
    assert recommendation == pytest.approx(best.config, abs=1e-12)
    assert sphere(recommendation) == pytest.approx(best.metrics["loss"], abs=1e-12)


def test_asha_stopped_trials_are_pruned_and_the_study_improves(ray_address: str,
                                                               tmp_path: Path) -> None:
    """ASHA stops most trials after one or two of their four results. hdbo's OptunaSearch tells
    those as PRUNED (Ray's tells them COMPLETE with a value not comparable to full trials') and
    the trials that run to the end keep getting better."""
    n_trials = 28
    search = OptunaSearch(sampler=AutoSampler(seed=0, budget=n_trials), max_t=4)
    scheduler = ASHAScheduler(max_t=4, grace_period=1, reduction_factor=2)
    results = tune.Tuner(
        learning_curve, param_space=box(2),
        tune_config=tune.TuneConfig(search_alg=search, scheduler=scheduler,
                                    num_samples=n_trials, max_concurrent_trials=2,
                                    metric="loss", mode="min", reuse_actors=True),
        run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0)).fit()
    assert not results.errors and len(results) == n_trials
    study = search._ot_study
    by_params = {tuple(sorted(t.params.items())): t for t in study.trials}
    full = []
    for result in results:
        trial = by_params[tuple(sorted(result.config.items()))]
        iterations, last = result.metrics["training_iteration"], result.metrics["loss"]
        if iterations < 4:  # stopped by ASHA: pruned, its last value reported at its step
            assert trial.state == TrialState.PRUNED
            assert trial.intermediate_values[iterations] == last
        else:
            assert trial.state == TrialState.COMPLETE and trial.value == last
            full.append((trial.number, sphere(result.config)))
    assert 0 < len(full) < n_trials  # ASHA stopped some trials, not all
    # Independently of the sampler: among the trials that ran to the end, the best of the
    # later half is better than the best of the earlier half, and close to the optimum 0
    # (a uniform draw in [-1, 1]^2 lands within 0.1 of (0.3, 0.3) with probability 0.8%).
    full.sort()
    early = min(v for _, v in full[:len(full) // 2])
    late = min(v for _, v in full[len(full) // 2:])
    assert late < early and late < 0.01, full


# In the default suite's two busy workers the driver process once exited before its fourth
# trial (1 failure in 4 fresh-venv runs; it passed alone and with the Ray folder under -n 2):
# slow until its output, kept below, shows why.
@pytest.mark.slow
def test_restore_after_a_killed_driver_proposes_what_an_uninterrupted_run_does(
        ray_address: str, tmp_path: Path) -> None:
    """A driver killed mid-run, then ``Tuner.restore``: with the study on SQLite, the trials
    the restored run adds are the ones an uninterrupted run made, value for value."""
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    restorable_tuner(reference, str(tmp_path), "reference").fit()
    interrupted = f"sqlite:///{tmp_path / 'interrupted.db'}"
    log = tmp_path / "driver.log"
    with open(log, "w") as out:
        driver = subprocess.Popen(
            [sys.executable, str(HERE / "_tune_runs.py"), ray_address, interrupted,
             str(tmp_path), "interrupted"], stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    try:
        while complete_trials(interrupted) < 4:
            assert driver.poll() is None and time.monotonic() < deadline, \
                f"driver stopped early: {log.read_text()[-3000:]}"
            time.sleep(0.05)
    finally:
        driver.kill()
        driver.wait()
    killed_at = time.time()
    n_before = len(optuna.load_study(study_name="restore", storage=interrupted).trials)
    results = restored_tuner(str(tmp_path), "interrupted").fit()
    assert not results.errors

    def complete(url: str) -> list[tuple[float, ...]]:
        trials = optuna.load_study(study_name="restore", storage=url).get_trials(
            states=(TrialState.COMPLETE,))
        trials.sort(key=lambda t: (t.datetime_complete, t.number))
        return [tuple(t.params[k] for k in sorted(t.params)) for t in trials]

    expected, got = complete(reference), complete(interrupted)
    assert len(expected) == RESTORE_TRIALS and len(got) >= RESTORE_TRIALS
    assert got[:RESTORE_TRIALS] == expected
    after = optuna.load_study(study_name="restore", storage=interrupted).trials[n_before:]
    assert after and all(t.datetime_start.timestamp() >= killed_at - 1 for t in after)
    assert all(t.state == TrialState.COMPLETE for t in after)


def complete_trials(url: str) -> int:
    """COMPLETE trials of the study at ``url``; 0 until the driver has created it."""
    if not Path(url.removeprefix("sqlite:///")).exists():
        return 0
    try:
        study = optuna.load_study(study_name="restore", storage=url)
    except (KeyError, sqlalchemy.exc.OperationalError):  # the driver is creating it
        return 0
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
