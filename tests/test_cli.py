import argparse
import csv
import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from hdbo_cli.cli import build_parser, main


def test_run_writes_trajectory_summary_and_plot(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--algo", "msucb", "--problem", "branin", "--dim", "8", "--budget", "24",
                 "--seed", "1", "--out", str(out), "--quiet"]) == 0
    rows = list(csv.DictReader(open(out / "trajectory.csv")))
    assert len(rows) == 24
    best = [float(r["best_so_far"]) for r in rows]
    assert best == sorted(best, reverse=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["best"] == pytest.approx(best[-1]) and summary["dim"] == 8
    assert (out / "convergence.png").stat().st_size > 0
    assert "msucb on branin-8D" in capsys.readouterr().out


def test_run_through_optuna_writes_the_same_files_with_a_progress_bar(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--frontend", "optuna", "--algo", "random", "--problem", "branin",
                 "--dim", "3", "--budget", "5", "--out", str(out)]) == 0
    assert len((out / "trajectory.csv").read_text().splitlines()) == 6
    assert json.loads((out / "summary.json").read_text())["n_complete"] == 5
    assert (out / "convergence.png").stat().st_size > 0
    assert "5/5" in capsys.readouterr().err  # the bar's last state


def test_run_through_optuna_on_a_noisy_problem_scores_the_recommended_trial(tmp_path, capsys):
    """Through Optuna too, a noisy run reports the noise-free value of the trial Auto
    recommends (here not the best trial: trial 28 against the luckiest draw's trial 7)."""
    import numpy as np
    import optuna

    from hdbo_adapters.optuna import HDBOSampler
    from hdbo_cli.problems import make_problem

    out = tmp_path / "run"
    assert main(["run", "--frontend", "optuna", "--problem", "noisy_lunar_lander", "--dim", "12",
                 "--budget", "40", "--seed", "3", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    study = optuna.load_study(study_name=summary["study_name"],
                              storage=f"sqlite:///{out / 'optuna.db'}")
    picked = HDBOSampler("auto", seed=3, budget=40).recommended_trial(study)
    assert picked.number != study.best_trial.number
    problem = make_problem("noisy_lunar_lander", 12, 3)
    expected = float(problem.noise_free_unit(
        np.array([picked.params[f"x{i}"] for i in range(12)]))[0])
    assert summary["recommended_true_value"] == pytest.approx(expected, rel=1e-12)
    assert summary["best"] == pytest.approx(study.best_value, rel=1e-12)
    assert f"noise-free value {expected:.6g}" in capsys.readouterr().out


def test_demo_writes_one_figure_and_the_per_run_files(tmp_path, capsys):
    assert main(["demo", "--budget", "12", "--seeds", "2", "--out", str(tmp_path),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "median best" in text
    assert [p.name for p in tmp_path.rglob("*.png")] == ["demo.png"]
    for method in ("auto", "optuna-tpe", "optuna-gp", "random"):
        assert method in text
        rows = list(csv.DictReader(open(tmp_path / method / "seed1" / "trajectory.csv")))
        assert len(rows) == 12
        assert json.loads((tmp_path / method / "seed1" / "summary.json").read_text())["seed"] == 1


def _not_a_folder(tmp_path) -> str:
    (tmp_path / "file").write_text("")
    return str(tmp_path / "file" / "sub")  # its parent is a file: cannot be created


@pytest.mark.parametrize("argv, option", [
    (["run", "--problem", "branin", "--dim", "1"], "--dim"),
    (["run", "--problem", "hartmann6", "--dim", "3"], "--dim"),
    (["run", "--frontend", "optuna", "--problem", "hartmann6", "--dim", "3"], "--dim"),
    (["run", "--dim", "0"], "--dim"),
    (["run", "--dim", "ten"], "--dim"),
    (["run", "--budget", "-5"], "--budget"),
    (["run", "--seed", "-1"], "--seed"),
    (["run", "--algo", "nope"], "--algo"),
    (["run", "--problem", "nope"], "--problem"),
    (["run", "--frontend", "nope"], "--frontend"),
    (["run", "--workers", "0"], "--workers"),
    (["run", "--out", "NOT_A_FOLDER"], "--out"),
    (["run", "--frontend", "optuna", "--storage", "nosuch.db", "--out", "TMP"], "--storage"),
    (["run", "--frontend", "optuna", "--storage", "sqlite:///NOT_A_FOLDER/x.db", "--out", "TMP/r"],
     "--storage"),
    (["run", "--storage", "sqlite:///TMP/x.db", "--out", "TMP/r"], "--storage"),
    (["run", "--study-name", "s", "--out", "TMP/r"], "--study-name"),
    (["run", "--workers", "2", "--out", "TMP/r"], "--workers"),
    (["demo", "--budget", "0"], "--budget"),
    (["demo", "--seeds", "0"], "--seeds"),
    (["demo", "--out", "NOT_A_FOLDER"], "--out"),
    (["bench", "--suite", "nope"], "--suite"),
    (["bench", "--suite", "TMP/missing.toml"], "--suite"),
    (["bench", "--jobs", "0"], "--jobs"),
    (["bench", "--seeds", "0"], "--seeds"),
    (["bench", "--methods", "nope", "--out", "TMP/b"], "--methods"),
    (["bench", "--out", "NOT_A_FOLDER"], "--out"),
    (["report", "TMP"], "DIR"),
    (["report", "BENCH", "--preface", "TMP/missing.md"], "--preface"),
    (["report", "BENCH", "--output", "NOT_A_FOLDER/report.md"], "--output"),
    (["report"], "DIR"),
    (["plot", "TMP"], "DIR"),
    (["plot", "BENCH", "--out-dir", "NOT_A_FOLDER"], "--out-dir"),
    (["nope"], "COMMAND"),
])
def test_each_user_error_is_one_line_naming_the_option(argv, option, tmp_path, capsys):
    (tmp_path / "bench" / "cells").mkdir(parents=True)
    paths = {"NOT_A_FOLDER": _not_a_folder(tmp_path), "TMP": str(tmp_path),
             "BENCH": str(tmp_path / "bench")}
    for key, value in paths.items():
        argv = [a.replace(key, value) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hdbo") and option in lines[0], captured.err
    assert not (tmp_path / "b").exists()  # nothing was created for a refused run
    assert not (tmp_path / "r").exists() and not (tmp_path / "x.db").exists()


def test_help_gives_every_option_a_sentence_and_its_default():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(commands.choices) == {"run", "demo", "bench", "report", "plot", "reproduce"}
    for name, sub in commands.choices.items():
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"hdbo {name} {action.dest} has no help"
            if action.option_strings and action.default is not None and action.default is not False:
                assert f"(default: {action.default})" in text, f"hdbo {name} {action.dest}"
    run_help = " ".join(commands.choices["run"].format_help().split())
    for default in ("(default: 100)", "(default: 200)", "(default: 0)", "(default: hdbo_runs/run)"):
        assert default in run_help


@pytest.mark.slow
def test_demo_prints_the_readme_table() -> None:
    """``hdbo demo`` as a user runs it (kernels pinned by a restart) prints the value columns
    of the table in the README's Results, digit for digit (two CPU minutes)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    table = readme[readme.index("  method                 median best"):]
    expected = [line.split("]")[0].split() for line in table.splitlines()[1:5]]
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(["hdbo", "demo", "--quiet", "--out", out], capture_output=True,
                              text=True, timeout=1200, check=True)
    printed = [line.split("]")[0].split() for line in done.stdout.splitlines()
               if line.split()[:1] in (["auto"], ["optuna-tpe"], ["optuna-gp"], ["random"])]
    assert printed == expected


def test_run_on_a_task_of_unknown_minimum_writes_its_files(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--algo", "random", "--problem", "lunar_lander", "--dim", "12",
                 "--budget", "3", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "summary.json").read_text())["f_min"] is None
    assert (out / "convergence.png").stat().st_size > 0
    assert "f_min" not in capsys.readouterr().out
    out = tmp_path / "optuna"
    assert main(["run", "--frontend", "optuna", "--algo", "random", "--problem", "swimmer",
                 "--dim", "16", "--budget", "3", "--out", str(out)]) == 0
    assert (out / "convergence.png").stat().st_size > 0


def test_run_on_a_noisy_problem_scores_the_recommended_point_without_noise(tmp_path, capsys):
    """``best`` is the luckiest noisy draw; the run also reports the noise-free value of the
    point Auto recommends, computed here by the engine loop with the same seed."""
    import numpy as np

    from hdbo_cli.problems import make_problem
    from hdbo_engine import get_algorithm

    out = tmp_path / "run"
    assert main(["run", "--problem", "noisy_lunar_lander", "--dim", "12", "--budget", "40",
                 "--seed", "3", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    problem = make_problem("noisy_lunar_lander", 12, 3)
    opt = get_algorithm("auto")(12, seed=3, budget=40)
    for _ in range(40):
        (p,) = opt.ask()
        opt.tell(p.x, float(problem.evaluate_unit(p.x)[0]))
    expected = float(problem.noise_free_unit(opt.recommend())[0])
    assert summary["recommended_true_value"] == pytest.approx(expected, rel=1e-12)
    assert summary["best"] == pytest.approx(float(np.min(opt.y)), rel=1e-12)
    assert f"noise-free value {expected:.6g}" in capsys.readouterr().out
