"""Every example runs end to end in a short mode (its own arguments, made smaller), and the
numbers it prints agree with each other and with what they claim to be."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import optuna
import pytest

from hdbo_cli.constrained import speed_reducer, speed_reducer_constraints

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NUMBER = r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)"
HARTMANN6_MIN = -3.32237  # Hartmann-6's global minimum (Dixon & Szego 1978)


def load(script: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{script}", EXAMPLES / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def numbers(pattern: str, text: str) -> list[tuple[float, ...]]:
    found = re.findall(pattern.replace("{n}", NUMBER), text)
    assert found, f"{pattern!r} not in the output:\n{text}"
    return [tuple(float(v) for v in (m if isinstance(m, tuple) else (m,))) for m in found]


def test_optuna_quickstart(capsys: pytest.CaptureFixture[str]) -> None:
    trials = 22
    load("optuna_quickstart").main(["--trials", str(trials), "--dim", "8"])
    out = capsys.readouterr().out
    ((best, trial, design_best),) = numbers(
        r"Auto: +best {n} at trial {n} \(best of its 20 initial-design trials {n}\)", out)
    ((random_best, n_random, f_min),) = numbers(
        r"RandomSampler: best {n} in {n} trials \(global minimum {n}\)", out)
    assert f_min == pytest.approx(HARTMANN6_MIN, abs=1e-4)
    assert n_random == trials and 0 <= trial < trials
    assert f_min <= best <= design_best and f_min <= random_best
    # the best trial is a design trial exactly when the model never improved on the design
    assert (trial < 20) == (best == design_best)


def test_optuna_constraints(capsys: pytest.CaptureFixture[str]) -> None:
    trials = 36
    load("optuna_constraints").main(["--trials", str(trials)])
    out = capsys.readouterr().out
    ((best, trial, feasible, total),) = numbers(
        r"AutoSampler: best feasible weight {n} at trial {n} \({n} of {n} trials feasible\)",
        out)
    assert total == trials and 1 <= feasible <= trials and 0 <= trial < trials
    ((best_known,),) = numbers(r"best known weight {n}", out)
    params = [float(v) for v in re.findall(r"^  \w+ +(\S+)$", out, flags=re.MULTILINE)]
    assert len(params) == 7
    x = np.array([params])  # printed to 6 decimals: weight within 0.01, constraints 1e-4
    assert speed_reducer(x)[0] == pytest.approx(best, abs=0.01)
    assert (speed_reducer_constraints(x)[0] <= 1e-4).all()
    assert best >= best_known - 0.01  # no feasible design beats the best known by more
    assert re.search(r"TPESampler: (best feasible weight|no feasible trial in 36 trials)", out)


def test_optuna_mixed_space(capsys: pytest.CaptureFixture[str]) -> None:
    module = load("optuna_mixed_space")
    module.main(["--trials", "12"])
    out = capsys.readouterr().out
    ((best,),) = numbers(r"best loss {n} \(optimum 0\)", out)
    params = dict(re.findall(r"^  (\w+) +(.+)$", out, flags=re.MULTILINE))
    assert set(params) == {"lr", "dropout", "momentum", "layers", "batch_size", "optimizer",
                           "activation"}
    fixed = optuna.trial.FixedTrial({k: eval(v) for k, v in params.items()})  # noqa: S307
    assert module.loss(fixed) == pytest.approx(best, abs=5e-5)  # the printed point's loss
    assert best >= 0.0


def test_skopt_loop(capsys: pytest.CaptureFixture[str]) -> None:
    load("skopt_loop").main(["--n-calls", "16"])
    out = capsys.readouterr().out
    progress = numbers(r"  {n} evaluations, best so far {n}", out)
    assert [int(n) for n, _ in progress] == [4, 8, 12, 16]
    bests = [b for _, b in progress]
    assert all(a >= b for a, b in zip(bests, bests[1:], strict=False))  # best so far
    ((final, n_final),) = numbers(r"ask/tell: best {n} at .* after {n} evaluations", out)
    assert final == bests[-1] and n_final == 16
    ((res_best, n_res),) = numbers(r"auto_minimize: best {n} after {n} evaluations", out)
    assert 1 <= n_res <= 16
    assert min(bests + [res_best]) >= 0.0  # the objective's minimum is 0


def test_nevergrad_benchmark(capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    module = load("nevergrad_benchmark")
    frames = []
    real_run = module.run_benchmark
    monkeypatch.setattr(module, "run_benchmark",
                        lambda *a, **k: frames.append(real_run(*a, **k)) or frames[-1])
    module.main(["--optimizers", "CobBO", "RandomSearch", "--functions", "sphere", "cigar",
                 "--budget", "8", "--seeds", "1"])
    out = capsys.readouterr().out
    ((share,),) = numbers(r"CobBO beats RandomSearch in {n}% of the cases", out)
    (df,) = frames
    losses = {(row["name"], row["optimizer_name"]): row["loss"] for _, row in df.iterrows()}
    cases = sorted({name for name, _ in losses})
    assert len(cases) == 2 and len(df) == 4
    wins = [losses[(c, "CobBO")] < losses[(c, "RandomSearch")] for c in cases]
    assert share == pytest.approx(100 * np.mean(wins), abs=0.5)
    for (_, optimizer), loss in losses.items():  # each loss is printed in its progress line
        assert re.search(rf"{optimizer} +loss={re.escape(f'{loss:.4g}')} ", out)


def test_goucb_sklearn_tuning(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    load("goucb_sklearn_tuning").main(["--budget", "3", "--folds", "2"])
    out = capsys.readouterr().out
    per_run = dict(re.findall(rf"^(\w+) +seed=0: best score {NUMBER}", out, flags=re.MULTILINE))
    assert set(per_run) == {"goucb", "random"}
    scores = {m: float(v) for m, v in per_run.items()}
    assert all(0.0 <= s <= 1.0 for s in scores.values())  # cross-validated accuracies
    ((best,),) = numbers(r"regret against the best score found \({n}\)", out)
    assert best == pytest.approx(max(scores.values()), abs=5e-5)
    summary = re.findall(rf"^  (\w+) +best score \(mean\) {NUMBER} +cumulative regret "
                         rf"\(mean\) {NUMBER}", out, flags=re.MULTILINE)
    assert {m for m, _, _ in summary} == set(scores)
    for method, mean_best, regret in summary:
        assert float(mean_best) == pytest.approx(scores[method], abs=5e-5)  # one seed
        # 3 evaluations, each at most `best`, one of them at the method's best score
        assert float(regret) >= best - scores[method] - 5e-4
        assert float(regret) <= 3 * best + 5e-4


def test_ray_tune(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                  tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray Tune is not installed: pip install -e '.[ray]'")
    module = load("ray_tune")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # Ray's workers cannot import
    monkeypatch.setenv("RAY_AIR_NEW_OUTPUT", "0")  # what the example sets, undone afterwards
    ray.cloudpickle.register_pickle_by_value(module)  # examples/, so the trainable goes by value
    try:
        module.main(["--trials", "10", "--runs", str(tmp_path)])
    finally:
        ray.cloudpickle.unregister_pickle_by_value(module)
    out = capsys.readouterr().out
    ((best, trial, total, concurrent),) = numbers(
        r"AutoSampler through Ray Tune: best accuracy {n} at trial {n} of {n} \({n} at a time\)",
        out)
    assert total == 10 and concurrent == 2 and 0 <= trial < total
    ((default,),) = numbers(r"every feature weighted 1, 5 neighbours, uniform vote: "
                            r"accuracy {n}", out)
    params = dict(re.findall(r"^  (\w+) +(.+)$", out.split("best hyperparameters:")[1],
                             flags=re.MULTILINE))
    assert set(params) == {"n_neighbors", "weights", *module.WEIGHTS}
    config = {k: eval(v) for k, v in params.items()}  # noqa: S307 (reprs of floats, ints, str)
    assert all(0.0 <= config[w] <= 1.0 for w in module.WEIGHTS)
    assert 1 <= config["n_neighbors"] <= 30 and config["weights"] in ("uniform", "distance")
    assert module.cv_accuracy(config) == pytest.approx(best, abs=5e-5)  # the printed trial's
    # the default model, scored here with scikit-learn alone: standardized features, 5 neighbours
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    plain = cross_val_score(make_pipeline(StandardScaler(), KNeighborsClassifier()), X, y,
                            cv=folds).mean()
    assert default == pytest.approx(plain, abs=5e-5)
