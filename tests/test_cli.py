import csv
import json

import pytest

from hdbo_adapters.cli import main


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


def test_demo_prints_a_summary_table(tmp_path, capsys):
    assert main(["demo", "--budget", "22", "--seeds", "2", "--out", str(tmp_path),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "median best" in text
    for algo in ("random", "gpucb", "msucb"):
        assert algo in text and (tmp_path / algo / "seed1" / "trajectory.csv").exists()


def test_bad_cli_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--algo", "nope"])
    assert main(["run", "--budget", "0"]) == 2
    assert "--budget must be >= 1" in capsys.readouterr().err
