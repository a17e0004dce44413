"""``hdbo bench``: suites, cells for every method, resume, time limit, report, plots, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hdbo_cli.bench import (
    METHODS,
    PAPER,
    PEERS,
    Cell,
    load_suite,
    make_bench_problem,
    run_cell,
    run_suite,
    suite_names,
)
from hdbo_cli.cli import main
from hdbo_cli.report import (
    GroupStats,
    _ask_tell_seconds,
    load_results,
    markdown_report,
    targets,
    value_axis,
)

TINY = """
name = "tiny"
seeds = 2
{extra}
[[group]]
problems = ["ackley", "hartmann6"]
dims = [6]
budget = 5
methods = ["random", "cobbo"]
"""


SUITE_METHODS = set(METHODS) - set(PAPER)  # d100 and bbob run the default presets only


def write_suite(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.format(extra=extra))
    return path


def test_committed_suites_parse_and_match_the_issue() -> None:
    assert {"bbob", "d100", "scale"} <= set(suite_names())
    d100 = load_suite("d100")
    cells = d100.cells()
    assert d100.seeds == 5 and len(cells) == 5 * 5 * len(SUITE_METHODS)
    assert {c.dim for c in cells} == {100} and {c.budget for c in cells} == {500}
    assert {c.method for c in cells} == SUITE_METHODS
    scale = {(c.method, c.dim, c.budget) for c in load_suite("scale").cells()}
    assert scale == {("msucb", 1000, 500), ("cobbo", 1000, 500), ("bkb", 20, 5000)}


def test_bbob_suite_covers_every_method_on_the_compat_functions() -> None:
    pytest.importorskip("cocoex")
    cells = load_suite("bbob").cells()
    assert {c.method for c in cells} == SUITE_METHODS
    assert {(c.problem, c.dim, c.budget) for c in cells} == {
        (f"bbob-f{k}", d, 100) for k in (1, 2, 8, 15) for d in (20, 40)}
    for problem, dim in {(c.problem, c.dim) for c in cells}:
        assert np.isfinite(make_bench_problem(problem, dim).evaluate_unit(np.full(dim, 0.5)))


def test_hd_suite_covers_off_centre_problems_and_real_tasks() -> None:
    hd = load_suite("hd")
    cells = hd.cells()
    groups = {(c.problem, c.dim, c.budget) for c in cells}
    assert {("shifted_ackley", 100, 500), ("rotated_rastrigin", 100, 500),
            ("scattered_hartmann6", 300, 500), ("swimmer", 16, 500), ("hopper", 33, 500),
            ("half_cheetah", 102, 500), ("lunar_lander", 12, 500), ("rover", 60, 500)} <= groups
    assert {g for g in groups if g[2] == 2000} == {
        ("shifted_ackley", 100, 2000), ("rover", 60, 2000), ("hopper", 33, 2000)}
    assert {c.method for c in cells if c.budget == 500} == set(METHODS) - {"skopt-gp"}
    assert {c.method for c in cells if c.budget == 2000} == {
        "msucb", "cobbo", "goucb", "bkb", "ng-ngopt", "ng-cma", "random"}
    assert {c.time_limit_s for c in cells if c.budget == 2000} == {1800.0}
    assert {c.time_limit_s for c in cells if c.budget == 500} == {600.0}


def test_cells_are_seed_major() -> None:
    seeds = [c.seed for c in load_suite("d100").cells()]
    assert seeds == sorted(seeds)


@pytest.mark.parametrize(("text", "message"), [
    ("name = 'x'\n", "needs 'group'"),
    ("[[group]]\nproblems=['ackley']\ndims=[5]\nbudget=5\nmethods=['tpe']\n", "unknown method"),
    ("[[group]]\nproblems=['nope']\ndims=[5]\nbudget=5\nmethods=['random']\n", "unknown name"),
    ("[[group]]\nproblems=['ackley']\ndims=[5]\nbudget=0\nmethods=['random']\n", "budget"),
    ("[[group]]\nproblems=['ackley']\ndims=[5]\nbudget='5'\nmethods=['random']\n", "budget"),
])
def test_bad_suites_are_rejected_with_the_reason(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_suite(str(path))


def test_unknown_suite_name_lists_the_committed_ones() -> None:
    with pytest.raises(ValueError, match="d100"):
        load_suite("no-such-suite")


@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_a_cell(tmp_path: Path, method: str) -> None:
    cell = Cell("rosenbrock", 4, 8, method, 1)
    summary = run_cell(cell, tmp_path)
    csv_path, json_path = cell.paths(tmp_path)
    rows = np.genfromtxt(csv_path, delimiter=",", names=True)
    assert len(rows) == 8 and summary["status"] == "done"
    assert np.allclose(rows["best_so_far"], np.minimum.accumulate(rows["value"]))
    for column in ("ask_s", "tell_s", "ask_cpu_s", "tell_cpu_s"):
        assert (rows[column] >= 0).all()
    cpu = rows["ask_cpu_s"] + rows["tell_cpu_s"]
    assert summary["optimizer_cpu_s"] == pytest.approx(cpu.sum(), abs=1e-3)
    assert json.loads(json_path.read_text())["best"] == rows["value"].min()
    assert summary["peak_rss_mib"] > 0


def test_same_seed_same_trajectory_for_a_peer(tmp_path: Path) -> None:
    a = run_cell(Cell("ackley", 5, 15, "optuna-tpe", 3), tmp_path / "a")
    b = run_cell(Cell("ackley", 5, 15, "optuna-tpe", 3), tmp_path / "b")
    c = run_cell(Cell("ackley", 5, 15, "optuna-tpe", 4), tmp_path / "c")
    assert a["best"] == b["best"] != c["best"]


def test_bbob_problem_evaluates_and_checks_its_dimension() -> None:
    problem = make_bench_problem("bbob-f1", 5)
    assert problem.f_min is None and np.isfinite(problem.evaluate_unit(np.full(5, 0.5)))
    with pytest.raises(ValueError, match="dimensions"):
        make_bench_problem("bbob-f1", 7)


def test_run_suite_resumes_and_refuses_another_suite(tmp_path: Path) -> None:
    suite = load_suite(str(write_suite(tmp_path)))
    out = tmp_path / "out"
    first = run_suite(suite, out, progress=False)
    assert len(first) == 2 * 2 * 2
    assert run_suite(suite, out, progress=False) == []  # everything finished: nothing to do
    removed = Cell("hartmann6", 6, 5, "cobbo", 1)
    Cell("ackley", 6, 5, "random", 0).paths(out)[1].unlink()
    assert [s["method"] for s in run_suite(suite, out, progress=False, methods=["cobbo"])] == []
    with pytest.raises(ValueError, match="--methods"):
        run_suite(suite, out, progress=False, methods=["skopt-gp"])
    removed.paths(out)[1].unlink()
    again = run_suite(suite, out, progress=False)
    assert sorted((s["method"], s["problem"], s["seed"]) for s in again) == [
        ("cobbo", "hartmann6", 1), ("random", "ackley", 0)]
    (tmp_path / "other").mkdir()
    other = load_suite(str(write_suite(tmp_path / "other", extra="cell_time_limit_s = 5")))
    with pytest.raises(ValueError, match="different suite"):
        run_suite(other, out, progress=False)


def test_cell_records_the_problem_instance_of_its_seed(tmp_path: Path) -> None:
    summaries = [run_cell(Cell("shifted_levy", 5, 3, "random", s), tmp_path) for s in (0, 1)]
    optima = [s["problem_info"]["optimum"] for s in summaries]
    assert len(optima[0]) == 5 and optima[0] != optima[1]
    recorded = json.loads(Cell("shifted_levy", 5, 3, "random", 1).paths(tmp_path)[1].read_text())
    assert recorded["problem_info"]["optimum"] == optima[1]


def test_a_group_time_limit_overrides_the_suites(tmp_path: Path) -> None:
    path = write_suite(tmp_path, extra="cell_time_limit_s = 600")
    path.write_text(path.read_text() + "cell_time_limit_s = 1e-9\n")
    summaries = run_suite(load_suite(str(path)), tmp_path / "out", seeds=1, progress=False)
    assert {s["status"] for s in summaries} == {"timeout"}


def test_time_limit_stops_a_cell_and_the_report_calls_it_dnf(tmp_path: Path) -> None:
    suite = load_suite(str(write_suite(tmp_path, extra="cell_time_limit_s = 1e-9")))
    out = tmp_path / "out"
    summaries = run_suite(suite, out, seeds=1, progress=False)
    assert {s["status"] for s in summaries} == {"timeout"}
    assert {s["evaluations"] for s in summaries} == {1}
    assert "DNF (1/5 evals)" in markdown_report(out)


def _stats(values: dict[str, list[float]], dnf: tuple[str, ...] = ()) -> GroupStats:
    g = GroupStats("ackley", 100, 500, 0.0)
    for m, v in values.items():
        g.best[m] = list(v)
        g.times[m] = [np.full(3, 0.1)]
    for m in dnf:
        g.dnf[m] = [40]
        g.times[m] = [np.full(3, 1.0)]
    return g


def test_targets_count_a_win_only_when_every_peer_is_beaten() -> None:
    peers = {p: [2.0, 3.0] for p in PEERS}
    win = _stats({"msucb": [5.0], "cobbo": [1.0], **peers})
    loss = _stats({"cobbo": [2.5], **peers, "optuna-gp": [2.4]})
    dnf = _stats({"cobbo": [1.0], **{p: v for p, v in peers.items() if p != "skopt-gp"}},
                 dnf=("skopt-gp",))
    for stats, expected in ((win, True), (loss, False), (dnf, False)):
        result = targets([stats])
        assert result["wins"] == int(expected)
        info = result["groups"]["ackley-D100-n500"]
        assert info["best_ours"] == "cobbo" and info["beats_all_peers"] is expected
    assert targets([loss])["groups"]["ackley-D100-n500"]["not_beaten"] == list(PEERS)
    assert targets([dnf])["groups"]["ackley-D100-n500"]["not_beaten"] == ["skopt-gp"]
    assert targets([win])["time_ratio_vs_optuna_gp"]["cobbo"] == [1.0]
    # TPE's median is 2.5 here: cobbo (1.0) beats it and random, msucb (5.0) neither
    for stats in (win, dnf):
        stats.best["random"] = [3.0]
    assert targets([win, dnf])["beats_random_and_tpe"] == {"cobbo": (2, 2), "msucb": (0, 1)}


def test_report_reads_cpu_seconds_and_falls_back_to_wall_seconds() -> None:
    new = {"ask_s": "0.5", "tell_s": "0.25", "ask_cpu_s": "0.2", "tell_cpu_s": "0.1"}
    old = {"ask_s": "0.5", "tell_s": "0.25"}
    assert _ask_tell_seconds(new) == pytest.approx(0.3)
    assert _ask_tell_seconds(old) == pytest.approx(0.75)


def test_time_ratio_uses_the_evaluations_both_reached() -> None:
    g = GroupStats("ackley", 100, 500, 0.0)
    g.times["msucb"] = [np.arange(1.0, 11.0)]  # 10 asks, growing cost
    g.times["optuna-gp"] = [np.full(4, 5.0)]  # stopped after 4 asks
    assert g.time_ratio("msucb", "optuna-gp") == pytest.approx(2.5 / 5.0)
    assert g.median_time("msucb") == pytest.approx(5.5)
    assert np.isnan(g.time_ratio("msucb", "skopt-gp"))
    assert targets([g])["time_ratio_vs_optuna_gp"]["msucb"] == [pytest.approx(0.5)]


def test_report_and_plots_from_a_run(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    assert main(["bench", "--suite", str(write_suite(tmp_path)), "--out", str(out),
                 "--quiet"]) == 0
    report = (out / "report.md").read_text()
    assert "### ackley, D = 6, 5 evaluations" in report and "| cobbo |" in report
    assert "--suite" in report and "[[group]]" in report
    assert len(load_results(out)) == 2
    assert main(["plot", str(out)]) == 0
    assert sorted(p.name for p in (out / "plots").glob("*.png")) == [
        "ackley-D6-n5.png", "hartmann6-D6-n5.png"]
    assert main(["report", str(out)]) == 0  # now with the plots linked
    assert "![ackley-D6-n5](plots/ackley-D6-n5.png)" in (out / "report.md").read_text()
    target = tmp_path / "docs" / "BENCH.md"
    target.parent.mkdir()
    assert main(["plot", str(out), "--out-dir", str(tmp_path / "docs" / "plots" / "out")]) == 0
    (tmp_path / "preface.md").write_text("Run on a busy machine.\n")
    assert main(["report", str(out), str(out), "--output", str(target),
                 "--plots-dir", str(tmp_path / "docs" / "plots"),
                 "--preface", str(tmp_path / "preface.md")]) == 0
    text = target.read_text()
    assert text.index("Run on a busy machine.") < text.index("## Suite `tiny`")
    assert text.count("## Suite `tiny`") == 2 and "Cells finished: 8 of 8" in text
    assert "![ackley-D6-n5](plots/out/ackley-D6-n5.png)" in text


def test_value_axis_is_regret_where_f_min_is_known_and_the_value_where_it_is_not() -> None:
    curve = np.array([[5.0, 3.0, 3.0], [4.0, 2.0, 1.0]])
    known = GroupStats("ackley", 5, 3, 1.0)
    known.curves["random"] = list(curve)
    transform, label, scale = value_axis(known)
    np.testing.assert_array_equal(transform(curve), [[4.0, 2.0, 2.0], [3.0, 1.0, 1e-12]])
    assert "f_min" in label and scale == "log"
    unknown = GroupStats("bbob-f1", 5, 3, None)
    unknown.curves["random"] = list(curve)
    transform, label, scale = value_axis(unknown)
    np.testing.assert_array_equal(transform(curve), curve)  # the winner is not sent to zero
    assert "f_min" not in label and scale == "log"
    unknown.curves["cobbo"] = [np.array([2.0, -1.0, -3.0])]
    assert value_axis(unknown)[2] == "symlog"


def test_cli_errors_name_the_argument(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--suite", "nope", "--out", str(tmp_path)]) == 2
    assert "--suite" in capsys.readouterr().err
    assert main(["bench", "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "cells/" in capsys.readouterr().err
