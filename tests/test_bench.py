"""``hdbo bench``: suites, cells for every method, resume, time limit, report, plots, CLI."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
from dataclasses import asdict
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from hdbo_cli.bench import (
    BOTORCH_SOBOL_POINTS,
    Cell,
    baselines,
    drive_batches,
    load_suite,
    make_bench_problem,
    make_runner,
    methods,
    ours,
    paper_methods,
    run_cell,
    run_suite,
    suite_names,
)
from hdbo_cli.cli import main
from hdbo_cli.problems import make_problem
from hdbo_cli.report import (
    REFERENCE_PEERS,
    CellRun,
    GroupStats,
    _ask_tell_seconds,
    _fmt_pair,
    auto_against_parts,
    auto_leads_at,
    auto_parts_share,
    auto_win_share,
    checkpoint_medians,
    load_results,
    markdown_report,
    targets,
    value_axis,
    value_curves,
)
from hdbo_cli.tasks import TASKS
from hdbo_engine.algorithms.baselines import RandomSearch
from hdbo_engine.registry import register, unregister

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


SUITE_METHODS = set(methods()) - set(paper_methods())  # d100 and bbob: default presets only
NOISY_GROUP_METHODS = {"random", "ng-cma", "ng-ngopt", "optuna-cmaes", "optuna-tpe", "auto",
                       "auto-cobyla", "cobbo", "bkb", "msucb", "goucb", "optuna-gp", "botorch"}


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
    at_5000 = {(m, 5000, b) for m in ("random", "ng-ngopt", "ng-cma", "auto", "cobbo", "msucb",
                                      "bkb", "goucb") for b in (500, 2000)}
    assert scale == {("msucb", 1000, 500), ("cobbo", 1000, 500), ("bkb", 20, 5000)} | at_5000


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
    clean = [c for c in cells if not c.problem.startswith("noisy_")]
    assert {c.method for c in clean if c.budget == 500} == set(methods()) - {"skopt-gp"}
    assert {c.method for c in cells if c.budget == 2000} == {
        "auto", "auto-cobyla", "msucb", "cobbo", "goucb", "bkb", "ng-ngopt", "ng-cma",
        "random", "botorch", "optuna-tpe", "optuna-cmaes", "optuna-gp"}
    for noisy in ("noisy_lunar_lander", "noisy_swimmer", "noisy_hopper", "noisy_shifted_ackley"):
        assert {(c.dim, c.budget) for c in cells if c.problem == noisy} == {
            (TASKS.get(noisy, 100), 500)}
        assert {c.method for c in cells if c.problem == noisy} == NOISY_GROUP_METHODS
    assert {c.time_limit_s for c in cells if c.budget == 2000} == {1800.0}
    assert {c.time_limit_s for c in cells if c.budget == 500} == {600.0}


def test_cells_are_seed_major() -> None:
    seeds = [c.seed for c in load_suite("d100").cells()]
    assert seeds == sorted(seeds)


@pytest.mark.parametrize("path", sorted(
    (Path(__file__).resolve().parents[1] / "benchmarks" / "subsets").glob("*.toml")),
    ids=lambda p: p.stem)
def test_subset_suites_are_cells_of_the_committed_suite(path: Path) -> None:
    # a subset reruns some cells of a committed suite: each of its cells (problem, dimension,
    # budget, method, time limit) must be one the committed suite defines
    subset = load_suite(str(path))
    base = subset.name if subset.name in suite_names() else subset.name.split("-")[0]
    full = set(load_suite(base).cells(seeds=1))
    assert subset.cells(seeds=1) and set(subset.cells(seeds=1)) <= full


def test_first_seed_runs_fresh_instances(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["bench", "--suite", str(write_suite(tmp_path)), "--out", str(out), "--quiet",
                 "--seeds", "2", "--first-seed", "100", "--methods", "random"]) == 0
    runs = sorted((out / "cells" / "ackley-D6-n5" / "random").glob("*.json"))
    assert [r.name for r in runs] == ["seed100.json", "seed101.json"]
    assert [json.loads(r.read_text())["seed"] for r in runs] == [100, 101]


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


@pytest.mark.parametrize("name", ["hd", "d100", "bbob", "demo", "constrained"])
def test_counted_suites_list_the_same_peers_in_every_group(name: str) -> None:
    # Auto's count is a group won against every peer the suite lists, so a peer left out of
    # one group would make that group easier to win
    peers: dict[str, set[str]] = {}
    for c in load_suite(name).cells_by_seed:
        if c.method in REFERENCE_PEERS:
            peers.setdefault(c.group, set()).add(c.method)
    assert len({frozenset(p) for p in peers.values()}) == 1, peers


def test_suites_list_auto_first_among_ours_in_every_group() -> None:
    for name in ("hd", "d100", "bbob"):
        suite = load_suite(name)
        by_group: dict[str, list[str]] = {}
        for c in suite.cells_by_seed:
            if c.method not in by_group.setdefault(c.group, []):
                by_group[c.group].append(c.method)
        for group, listed in by_group.items():
            first_ours = next(m for m in listed if m in ours())
            assert first_ours == "auto" and "botorch" in listed, (name, group)


def test_our_methods_come_from_the_engine_registry() -> None:
    class NoPaper(RandomSearch):
        presets = {"practical": RandomSearch.presets["practical"]}

    class WithPaper(RandomSearch):
        presets = dict(RandomSearch.presets)

    register("toy", NoPaper)
    register("paperish", WithPaper)
    register("hidden", WithPaper, public=False)
    try:
        assert ours()[0] == "auto" and ours()[-2:] == ("toy", "paperish")
        assert "paperish-paper" in paper_methods() and "toy-paper" not in paper_methods()
        assert "hidden" in baselines() and "hidden-paper" not in methods()
        ask = make_runner("paperish-paper", 2, 3, seed=0).ask
        assert ask()[0].shape == (2,)  # run through the engine with preset="paper"
    finally:
        for name in ("toy", "paperish", "hidden"):
            unregister(name)
    assert "toy" not in methods()


@pytest.mark.parametrize("method", methods())
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


def test_a_seeded_bbob_problem_draws_its_instance_from_the_seed() -> None:
    """``bbob-f<k>-seeded`` at seed s is COCO's instance s + 1 less its optimal value: seed 0
    is the instance every seed of ``bbob-f<k>`` uses, shifted by one constant, and seed 100
    another instance."""
    fixed = make_bench_problem("bbob-f15", 5, seed=100)
    first = make_bench_problem("bbob-f15-seeded", 5, seed=0)
    fresh = make_bench_problem("bbob-f15-seeded", 5, seed=100)
    assert fixed.info["coco_id"] == first.info["coco_id"] == "bbob_f015_i01_d05"
    assert fresh.info["instance"] == 101 and fresh.info["coco_id"] == "bbob_f015_i101_d05"
    assert fixed.f_min is None and first.f_min == fresh.f_min == 0.0
    points = np.random.default_rng(0).random((4, 5))
    shift = {round(fixed.evaluate_unit(x) - first.evaluate_unit(x), 9) for x in points}
    assert shift == {round(first.info["f_opt"], 9)}
    assert all(fresh.evaluate_unit(x) != first.evaluate_unit(x) for x in points)
    for name in ("bbob-f15-shifted", "bbob-f25-seeded"):
        with pytest.raises(ValueError, match="bbob-f<k>-seeded"):
            make_bench_problem(name, 5)


@pytest.mark.parametrize("seed", [0, 100])
def test_a_seeded_bbob_sphere_is_zero_at_its_minimum(seed: int) -> None:
    """BBOB's f1 is ||x - x_opt||^2 + f_opt on [-5, 5]^D: the seeded problem (f - f_opt) at
    x = 0 and at the unit steps x = e_i gives x_opt (v(e_i) - v(0) = 1 - 2 x_opt_i), and its
    value at 0 must then be ||x_opt||^2."""
    dim = 5
    sphere = make_bench_problem("bbob-f1-seeded", dim, seed=seed)

    def at(x: np.ndarray) -> float:  # x in [-5, 5]^D
        return sphere.evaluate_unit((x + 5.0) / 10.0)

    v0 = at(np.zeros(dim))
    x_opt = np.array([(1.0 - (at(np.eye(dim)[i]) - v0)) / 2.0 for i in range(dim)])
    assert v0 == pytest.approx(float(x_opt @ x_opt), rel=1e-9, abs=1e-9)
    assert at(x_opt) == pytest.approx(0.0, abs=1e-9)


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


def test_cell_records_the_library_versions_and_instruction_set(tmp_path: Path) -> None:
    import scipy

    run_cell(Cell("shifted_levy", 5, 3, "random", 0), tmp_path)
    recorded = json.loads(Cell("shifted_levy", 5, 3, "random", 0).paths(tmp_path)[1].read_text())
    assert recorded["versions"]["numpy"] == np.__version__
    assert recorded["versions"]["scipy"] == scipy.__version__
    assert set(recorded["versions"]) == {"hdbo", "numpy", "scipy", "torch", "optuna",
                                         "nevergrad", "botorch"}
    assert recorded["machine"]["vector_isa"]


def test_report_says_when_its_tables_mix_library_versions(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_suite(out, {"ackley": ["random", "auto"]})
    for s in range(3):
        _write_cell(out, "ackley", "auto", s, AUTO[s])
        _write_cell(out, "ackley", "random", s, RANDOM[s])
    single = markdown_report(out)
    assert "Versions (6 cells): not recorded" in single and "mix" not in single
    path = Cell("ackley", 2, 4, "random", 0).paths(out)[1]
    cell = json.loads(path.read_text())
    path.write_text(json.dumps({**cell, "versions": {"numpy": "2.4.6", "torch": None}}))
    mixed = markdown_report(out)
    assert "Versions (1 cells): numpy 2.4.6" in mixed
    assert "**These tables mix 2 sets of library versions**" in mixed


def test_workers_ask_and_tell_in_rounds_of_that_size(tmp_path: Path) -> None:
    """Three workers, seven evaluations: rounds of 3, 3 and 1; the engine's ask(3) sees
    nothing told within a round, so the round's three points are distinct, and the group is
    named and reported with its workers."""
    path = tmp_path / "w.toml"
    path.write_text("name = 'w'\nseeds = 1\n[[group]]\nproblems = ['ackley']\ndims = [4]\n"
                    "budget = 7\nworkers = 3\nmethods = ['random', 'auto', 'ng-cma']\n")
    out = tmp_path / "out"
    assert main(["bench", "--suite", str(path), "--out", str(out), "--quiet"]) == 0
    for method in ("random", "auto", "ng-cma"):
        cell = Cell("ackley", 4, 7, method, 0, None, 3)
        assert cell.group == "ackley-D4-n7-w3"
        csv_path, json_path = cell.paths(out)
        rows = list(csv.DictReader(open(csv_path)))
        assert [int(r["evaluation"]) for r in rows] == list(range(1, 8))
        asks = [float(r["ask_cpu_s"]) for r in rows]
        assert asks[0] == asks[1] == asks[2] and asks[3] == asks[4] == asks[5]  # shared
        assert json.loads(json_path.read_text())["workers"] == 3
    assert "### ackley, D = 4, 7 evaluations, 3 workers" in (out / "report.md").read_text()


def test_ngopt_with_eight_workers_runs_its_whole_budget() -> None:
    """NGOpt with ``num_workers=8`` at D = 12 picks Nevergrad's meta-model, which under
    NumPy 2.4 raised a TypeError at evaluation 160 of 200 on this quadratic; all 200 are
    told, and the recommendation is nearer the minimum at 0.3 than the box's centre."""
    runner = make_runner("ng-ngopt", 12, 200, 0, workers=8)
    told = drive_batches(runner, lambda x: float(np.sum((x - 0.3) ** 2)), 200, 8,
                         lambda _step: None)
    best = runner.recommend()
    assert told == 200 and best is not None
    assert np.sum((best - 0.3) ** 2) < np.sum((np.full(12, 0.5) - 0.3) ** 2)


@pytest.mark.parametrize("extra, message", [
    ("workers = 0", "workers must be an int >= 1"),
    ("workers = 2.5", "workers must be an int >= 1"),
])
def test_bad_workers_are_refused(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "w.toml"
    path.write_text("[[group]]\nproblems = ['ackley']\ndims = [4]\nbudget = 7\n"
                    f"{extra}\nmethods = ['random']\n")
    with pytest.raises(ValueError, match=message):
        load_suite(str(path))


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


def test_botorch_improves_on_its_sobol_design_in_two_dimensions() -> None:
    problem = make_problem("branin", 2)
    runner = make_runner("botorch", 2, 25, seed=0)
    ask, tell, recommend = runner.ask, runner.tell, runner.recommend
    values = []
    for _ in range(25):
        x, token = ask()
        assert x.shape == (2,) and np.all((x >= 0) & (x <= 1))
        values.append(float(problem.evaluate_unit(x)[0]))
        tell(token, x, values[-1])
    assert min(values[BOTORCH_SOBOL_POINTS:]) < min(values[:BOTORCH_SOBOL_POINTS])
    # noise-free values: the point of highest posterior mean is the best draw, or close to it
    assert float(problem.evaluate_unit(recommend())[0]) < min(values[:BOTORCH_SOBOL_POINTS])


def test_botorch_batch_takes_the_rest_of_its_design_then_one_qlognei_batch() -> None:
    """With 3 of its 20 Sobol points left, a batch of 5 is those 3 and a qLogNEI batch of 2;
    the next batch of 4 is one qLogNEI batch: 4 distinct points in the box."""
    runner = make_runner("botorch", 2, 30, seed=0)
    problem = make_problem("branin", 2)
    for _ in range(BOTORCH_SOBOL_POINTS - 3):
        x, token = runner.ask()
        runner.tell(token, x, float(problem.evaluate_unit(x)[0]))
    first = runner.ask_batch(5)
    design = torch_sobol(2, BOTORCH_SOBOL_POINTS, seed=0)
    np.testing.assert_array_equal([x for x, _ in first[:3]], design[-3:])
    for x, token in first:
        runner.tell(token, x, float(problem.evaluate_unit(x)[0]))
    batch = np.array([x for x, _ in runner.ask_batch(4)])
    assert batch.shape == (4, 2) and len(np.unique(batch, axis=0)) == 4
    assert np.all((batch >= 0) & (batch <= 1))


def torch_sobol(dim: int, n: int, seed: int) -> np.ndarray:
    """BoTorch's design as the runner draws it: torch's scrambled Sobol points."""
    import torch

    return torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed).draw(
        n, dtype=torch.double).numpy()


def test_a_noisy_cell_is_scored_by_its_recommendation_without_noise(tmp_path: Path) -> None:
    cell = Cell("noisy_shifted_ackley", 5, 40, "random", 1)
    summary = run_cell(cell, tmp_path)
    rows = np.genfromtxt(cell.paths(tmp_path)[0], delimiter=",", names=True)
    clean = make_problem("shifted_ackley", 5, seed=1)
    recommended = np.array(summary["recommended"])
    # random search recommends its best draw: a point whose noisy draw is the CSV's minimum
    assert summary["best"] == rows["value"].min()
    assert summary["final_true_value"] == float(clean.evaluate_unit(recommended)[0])
    assert summary["final_true_value"] != summary["best"]
    assert [e for e, _ in summary["true_trace"]] == list(range(2, 41, 2))  # every 40 // 20
    assert summary["true_trace"][-1][1] == summary["final_true_value"]


def _write_cell(out: Path, problem: str, method: str, seed: int, values: list[float],
                status: str = "done", true_trace: list[list[float]] | None = None,
                dim: int = 2, budget: int = 4) -> None:
    """A fake finished cell (budget 4, D = 2 unless given) with the per-evaluation
    ``values``."""
    cell = Cell(problem, dim, budget, method, seed)
    csv_path, json_path = cell.paths(out)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    best = np.minimum.accumulate(values)
    csv_path.write_text("evaluation,value,best_so_far,ask_s,tell_s,ask_cpu_s,tell_cpu_s\n"
                        + "".join(f"{i + 1},{v},{b},0.1,0,0.1,0\n"
                                  for i, (v, b) in enumerate(zip(values, best, strict=True))))
    noisy = {} if true_trace is None else {"final_true_value": true_trace[-1][1],
                                          "true_trace": true_trace}
    json_path.write_text(json.dumps({
        **asdict(cell), "group": cell.group, "status": status, "evaluations": len(values),
        "best": float(best[-1]), "f_min": 0.0, "optimizer_time_s": 1.0, "optimizer_cpu_s": 1.0,
        "peak_rss_mib": 100.0, "machine": {"cpu": "x", "cores": 1, "memory_gib": 1,
                                           "python": "3", "platform": "p"},
        "problem_info": {} if true_trace is None else {"noise": "additive N(0, 1)"},
        **noisy}))


def _write_suite(out: Path, groups: dict[str, list[str]], seeds: int = 3, dim: int = 2,
                 budget: int = 4) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.toml").write_text(f"name = 'fake'\nseeds = {seeds}\n" + "".join(
        f"[[group]]\nproblems = ['{p}']\ndims = [{dim}]\nbudget = {budget}\n"
        f"methods = {listed}\n" for p, listed in groups.items()))


AUTO = [[5, 3, 2, 1], [6, 4, 3, 2], [7, 5, 4, 3]]  # per seed; final median 2, at 2 evals 4
RANDOM = [[9, 8, 7, 6], [9, 8, 7, 7], [9, 9, 9, 8]]  # final median 7


def test_auto_is_counted_alone_against_every_listed_peer(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_suite(out, {
        "ackley": ["random", "auto", "botorch"],
        "levy": ["random", "auto", "optuna-tpe"],
        "rastrigin": ["random", "optuna-tpe", "auto", "msucb", "cobbo", "goucb", "bkb"],
        "branin": ["random", "auto", "cobbo"]})
    for problem in ("ackley", "levy", "rastrigin", "branin"):
        for s in range(3):
            _write_cell(out, problem, "random", s, RANDOM[s])
            if problem != "branin":
                _write_cell(out, problem, "auto", s, AUTO[s])
    for s, v in enumerate([[4.5, 3.5], [4.5, 3.8], [9, 9]]):  # stopped after 2 evaluations
        _write_cell(out, "ackley", "botorch", s, v, status="timeout")
    for s in (0, 1):  # one seed missing
        _write_cell(out, "levy", "optuna-tpe", s, [9] * 4)
    for s, v in enumerate([5, 6, 2.5]):  # median 5
        _write_cell(out, "rastrigin", "optuna-tpe", s, [v] * 4)
    for m, v in {"msucb": 1, "cobbo": 3, "goucb": 4, "bkb": 0.5}.items():
        for s in range(3):  # medians 1, 3, 4, 0.5: their median is 2, Auto's too
            _write_cell(out, "rastrigin", m, s, [v] * 4)
    result = targets(load_results(out))
    verdicts = result["auto"]
    # ackley: at 2 evaluations Auto's median is 4 and botorch's 3.8, though Auto ends at 2
    assert verdicts["ackley-D2-n4"]["status"] == "lost"
    assert verdicts["ackley-D2-n4"]["not_beaten"] == ["botorch"]
    assert verdicts["ackley-D2-n4"]["medians"]["botorch"] == (4.0, 3.8)
    # levy: TPE has seeds 0-1 only and is compared there: Auto 1 and 2 (median 1.5) vs 9
    assert verdicts["levy-D2-n4"]["status"] == "won"
    assert verdicts["levy-D2-n4"]["medians"]["optuna-tpe"] == (1.5, 9.0)
    assert verdicts["levy-D2-n4"]["fewer_seeds"] == {"optuna-tpe": 2}
    assert verdicts["rastrigin-D2-n4"]["status"] == "won"
    assert verdicts["branin-D2-n4"]["status"] == "no auto cells"  # counted as incomplete
    assert result["auto_floor"] == {
        "ackley-D2-n4": {"random": True, "optuna-tpe": None, "single algorithms": None},
        "levy-D2-n4": {"random": True, "optuna-tpe": True, "single algorithms": None},
        "rastrigin-D2-n4": {"random": True, "optuna-tpe": True, "single algorithms": True}}
    assert result["beats_random_and_tpe"]["msucb"] == (1, 1)
    report = markdown_report(out)
    assert "Auto beats every peer's median on **2 of 4** groups (1 incomplete" in report
    assert "compared on the seeds it has: optuna-tpe 2" in report
    assert re.search(r"- ackley-D2-n4: \*\*lost\*\*, bootstrap share 0\.\d\d "
                     r"\(not beaten: botorch\)", report)
    assert "- Auto beats TPE on 2 of 2 groups" in report


def _group(runs: dict[str, list[list[float]]], budget: int = 4) -> GroupStats:
    """A group whose methods' per-seed best-so-far curves are ``runs``."""
    g = GroupStats("f", 2, budget, 0.0, listed=list(runs))
    for m, curves in runs.items():
        for s, c in enumerate(curves):
            g.runs[m][s] = CellRun(len(c), np.minimum.accumulate(np.asarray(c, float)))
    return g


def test_win_share_is_the_bootstrap_probability_worked_out_by_hand() -> None:
    """Auto ends at 1, 1, 5 and random search at 2 on each of three seeds: a resample of
    Auto's seeds has a median below 2 iff it draws 1 at least twice, probability
    3 (2/3)^2 (1/3) + (2/3)^3 = 20/27 = 0.741; against values it always beats, 1. A second
    peer at 3 on the same seeds changes nothing: the same draw of seeds decides both (a
    median of 1 beats 2 and 3, a median of 5 neither)."""
    g = _group({"auto": [[1], [1], [5]], "random": [[2], [2], [2]]}, budget=1)
    assert auto_win_share(g, draws=4000) == pytest.approx(20 / 27, abs=0.02)
    g = _group({"auto": [[1], [1], [1]], "random": [[2], [3], [2]]}, budget=1)
    assert auto_win_share(g, draws=200) == 1.0
    g = _group({"auto": [[1], [1], [5]], "random": [[2], [2], [2]],
                "optuna-tpe": [[3], [3], [3]]}, budget=1)
    assert auto_win_share(g, draws=4000) == pytest.approx(20 / 27, abs=0.02)
    assert auto_win_share(_group({"auto": [[1]]}, budget=1)) is None  # no peer listed


def test_auto_against_its_parts_and_its_leads_at_checkpoints() -> None:
    """Final medians: Auto 2, MS-UCB 1, CobBO 3, BKB 4: not at most the best part (1), at
    most the parts' median (3). At evaluation 2 Auto (median 4) beats random search (8); at
    evaluation 4, the budget, no checkpoint is defined."""
    g = _group({"auto": AUTO, "random": RANDOM, "msucb": [[4, 3, 1, 1]] * 3,
                "cobbo": [[9, 3, 3, 3]] * 3, "bkb": [[9, 4, 4, 4]] * 3})
    assert auto_against_parts(g) == {"parts": ["msucb", "cobbo", "bkb"], "best": False,
                                     "median": True}
    assert auto_leads_at(g, 2) is True
    assert auto_leads_at(g, 1) is True  # 5, 6, 7 against 9, 9, 9
    assert auto_leads_at(g, 4) is None
    g = _group({"auto": AUTO, "random": [[1, 1, 1, 1]] * 3})
    assert auto_leads_at(g, 2) is False
    assert auto_against_parts(g) is None  # no part has cells
    # the same run on another CPU: equal to 12 digits, so at most the part's median
    same = _group({"auto": [[77.48293121131485]] * 3, "auto-cobyla": [[77.48293121131451]] * 3,
                   "goucb": [[83.6]] * 3}, budget=1)
    assert auto_against_parts(same)["best"] is True
    above = _group({"auto": [[77.4830]] * 3, "auto-cobyla": [[77.4829]] * 3}, budget=1)
    assert auto_against_parts(above)["best"] is False  # a real margin of 1e-4


def test_parts_share_is_the_paired_bootstrap_probability_worked_out_by_hand() -> None:
    """Auto ends at 1, 3, 3 and MS-UCB at 2 on each of three seeds: a resample's Auto median
    is at most 2 iff it draws the first seed at least twice, 3 (1/3)^2 (2/3) + (1/3)^3 =
    7/27 = 0.259; a part that is worse everywhere (CobBO at 9) changes nothing. Auto at 1, 2,
    3 against a part at 2, 3, 4 on the same seeds is one lower in every resample (the same
    draw for both), so 1, though unpaired draws would often put Auto's median above; equal
    values count as at most."""
    g = _group({"auto": [[1], [3], [3]], "msucb": [[2], [2], [2]]}, budget=1)
    assert auto_parts_share(g, draws=4000) == pytest.approx(7 / 27, abs=0.02)
    g = _group({"auto": [[1], [3], [3]], "msucb": [[2], [2], [2]],
                "cobbo": [[9], [9], [9]]}, budget=1)
    assert auto_parts_share(g, draws=4000) == pytest.approx(7 / 27, abs=0.02)
    g = _group({"auto": [[1], [2], [3]], "bkb": [[2], [3], [4]]}, budget=1)
    assert auto_parts_share(g, draws=500) == 1.0
    g = _group({"auto": [[2], [2], [2]], "auto-cobyla": [[2], [2], [2]]}, budget=1)
    assert auto_parts_share(g, draws=100) == 1.0
    assert auto_parts_share(_group({"auto": [[1]], "random": [[2]]}, budget=1)) is None


def test_auto_without_cells_is_not_counted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_suite(out, {"ackley": ["random", "auto"]})
    for s in range(3):
        _write_cell(out, "ackley", "random", s, RANDOM[s])
    assert targets(load_results(out))["auto"]["ackley-D2-n4"]["status"] == "no auto cells"
    report = markdown_report(out)
    assert "not counted, Auto has no cells yet in the 1 groups that list it" in report
    assert "**0 of" not in report


def test_noisy_groups_are_scored_by_the_noise_free_value(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_suite(out, {"noisy_shifted_ackley": ["random", "auto"]})
    for s in range(3):  # Auto's luckiest draws are lower, its recommendations worse
        _write_cell(out, "noisy_shifted_ackley", "auto", s, [1, 0.5, 0.5, 0.5],
                    true_trace=[[2, 4.0], [4, 3.0 + s]])
        _write_cell(out, "noisy_shifted_ackley", "random", s, [2, 2, 2, 2],
                    true_trace=[[2, 2.0], [4, 1.0]])
    (g,) = load_results(out)
    assert g.median_best("auto") == 4.0 and g.median_best("random") == 1.0
    verdict = targets([g])["auto"]["noisy_shifted_ackley-D2-n4"]
    assert verdict["status"] == "lost" and verdict["medians"]["random"] == (4.0, 1.0)
    assert "noise-free value of the point each method recommends" in markdown_report(out)


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
    assert targets([g])["time_ratio_vs_optuna_gp"]["msucb"] == {
        "ackley-D100-n500": pytest.approx(0.5)}


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
    cell = out / "cells" / "ackley-D6-n5" / "cobbo"  # a run of a seed beyond the suite's
    (cell / "seed7.csv").write_text((cell / "seed0.csv").read_text())
    record = json.loads((cell / "seed0.json").read_text())
    (cell / "seed7.json").write_text(json.dumps({**record, "seed": 7}))
    assert main(["report", str(out)]) == 0
    assert "Cells finished: 8 of 8, and 1 of further seeds" in (out / "report.md").read_text()


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


def test_noisy_groups_plot_the_noise_free_value_of_the_recommendation() -> None:
    g = GroupStats("noisy_lunar_lander", 12, 100, None, noise="fresh episode")
    # lucky draws (-90, -95) that the recommendations' noise-free values (-20, -40) do not reach
    g.runs["auto"][0] = CellRun(100, np.array([-50.0] * 25 + [-90.0] * 75),
                                np.array([[25.0, -20.0], [50.0, -30.0], [75.0, -30.0],
                                          [100.0, -40.0]]))
    g.runs["auto"][1] = CellRun(60, np.array([-60.0] * 25 + [-95.0] * 35),
                                np.array([[25.0, 10.0], [50.0, -10.0]]))
    x, y = value_curves(g, "auto")
    # up to seed 1's 60 evaluations, at the checkpoints; seed 1 keeps -10 until its end
    np.testing.assert_array_equal(x, [25, 50])
    np.testing.assert_array_equal(y, [[-20.0, -30.0], [10.0, -10.0]])
    transform, label, scale = value_axis(g)
    assert label == "noise-free value of the recommendation (median, IQR)"
    assert scale == "symlog"
    assert value_curves(g, "random") is None
    g.runs["auto"][2] = CellRun(20, np.full(20, -60.0), np.array([[20.0, 5.0]]))
    assert value_curves(g, "auto") is None  # seed 2 stopped before the others' first checkpoint
    plain = GroupStats("ackley", 2, 3, None)
    plain.curves["random"] = [np.array([3.0, 2.0, 2.0]), np.array([4.0, 1.0])]
    x, y = value_curves(plain, "random")  # up to the shorter curve
    np.testing.assert_array_equal(x, [1, 2])
    np.testing.assert_array_equal(y, [[3.0, 2.0], [4.0, 1.0]])


def test_cli_errors_name_the_argument(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--suite", "nope", "--out", str(tmp_path)]) == 2
    assert "--suite" in capsys.readouterr().err
    assert main(["bench", "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "cells/" in capsys.readouterr().err


def test_auto_versus_peer_medians_show_the_digits_that_tell_them_apart():
    assert _fmt_pair(2996.3502, 2996.3672) == "2996.35 vs 2996.37"
    assert _fmt_pair(-0.2044, -0.2176) == "-0.2044 vs -0.2176"
    assert _fmt_pair(3.0, 3.0) == "3 vs 3"
    assert _fmt_pair(2.918, np.inf) == "2.918 vs none"


def test_checkpoint_medians_take_each_seed_that_reached_the_checkpoint() -> None:
    """At 2 evaluations the best values so far are 3, 4 and 5 (median 4); at 3, the seed
    stopped after 2 drops out: 2 and 3 (median 2.5); at 4, the budget, no column."""
    g = GroupStats("p", 2, 4, 0.0)
    g.runs["auto"] = {0: CellRun(4, np.array([5.0, 3, 2, 1])),
                      1: CellRun(4, np.array([6.0, 4, 3, 2])),
                      2: CellRun(2, np.array([7.0, 5]))}
    assert checkpoint_medians(g, "auto", (2, 3, 4)) == {2: 4.0, 3: 2.5}
    assert checkpoint_medians(g, "random", (2,)) == {2: None}
    noisy = GroupStats("p", 2, 4, 0.0, noise="additive")
    noisy.runs["auto"] = {0: CellRun(4, np.array([5.0, 1, 1, 1]), np.array([[2, 9.0], [4, 8]])),
                          1: CellRun(4, np.array([5.0, 1, 1, 1]), np.array([[1, 7.0], [3, 6]]))}
    # the recommendation scored last before each checkpoint, not the noisy best so far
    assert checkpoint_medians(noisy, "auto", (1, 3)) == {1: 7.0, 3: 7.5}


def _benchmark_script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``benchmarks/<name>.py`` loaded as a module (the folder on ``sys.path`` for the
    scripts that import a sibling, as ``member_leader.py`` imports ``cell_args``)."""
    scripts = Path(__file__).parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(scripts))
    spec = importlib.util.spec_from_file_location(name, scripts / f"{name}.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_member_leader_counts_where_the_early_leader_ends_best(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    script = _benchmark_script("member_leader", monkeypatch)
    out = tmp_path / "out"
    members = ["msucb", "cobbo", "goucb", "bkb"]
    _write_suite(out, {"ackley": members, "levy": members, "rastrigin": members})
    for s in range(3):
        # ackley: MS-UCB leads after 2 evaluations (BKB on seed 2), GO-UCB ends best
        _write_cell(out, "ackley", "msucb", s, [5, 1, 1, 1])
        _write_cell(out, "ackley", "goucb", s, [5, 3, 3, 0])
        _write_cell(out, "ackley", "cobbo", s, [5, 4, 4, 4])
        _write_cell(out, "ackley", "bkb", s, [5, 0.5, 0.5, 0.5] if s == 2 else [5, 4, 4, 4])
        # levy: MS-UCB leads throughout
        _write_cell(out, "levy", "msucb", s, [5, 1, 1, 0])
        for m in ("cobbo", "goucb", "bkb"):
            _write_cell(out, "levy", m, s, [5, 4, 4, 4])
        # rastrigin: GO-UCB is last after 2 evaluations and ends best on seeds 0-1
        _write_cell(out, "rastrigin", "goucb", s, [5, 5, 5, 5] if s == 2 else [5, 5, 5, 0])
        _write_cell(out, "rastrigin", "msucb", s, [5, 1, 1, 1])
        for m in ("cobbo", "bkb"):
            _write_cell(out, "rastrigin", m, s, [5, 4, 4, 4])
    monkeypatch.setattr(sys, "argv", ["member_leader.py", str(out), "--seeds", "0-2",
                                      "--at", "2"])
    script.main()
    lines = capsys.readouterr().out.splitlines()
    assert re.search(r"^ackley-D2-n4 .* msucb -> goucb .* ends best: 0; whose last: 0$", lines[0])
    assert re.search(r"^levy-D2-n4 .* msucb -> msucb .* ends best: 3; whose last: 0$", lines[1])
    assert re.search(r"^rastrigin-D2-n4 .* msucb -> goucb .* ends best: 1; whose last: 2$",
                     lines[2])
    assert lines[3].endswith("ends best on 1 of 3 groups; seeds whose leader at 2 ends best: "
                             "4 of 9; whose last: 2")


def test_paired_runs_compares_each_seed_and_recounts_with_the_variant(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    script = _benchmark_script("paired_runs", monkeypatch)
    base, variant = tmp_path / "base", tmp_path / "variant-pair"
    _write_suite(base, {"ackley": ["random", "auto"], "levy": ["auto"]})
    _write_suite(variant, {"ackley": ["auto"], "levy": ["auto"]})
    for s, (before, after) in enumerate([([5, 3, 2, 1], [5, 1, 0.5, 0.5]),  # better
                                         ([6, 4, 3, 2], [9, 9, 8, 8]),  # worse
                                         ([7, 5, 4, 3], [9, 9, 9, 9])]):  # worse
        _write_cell(base, "ackley", "auto", s, before)
        _write_cell(variant, "ackley", "auto", s, after)
        _write_cell(base, "ackley", "random", s, [9, 8, 7, 6 + (s == 1)])  # median 6
    # noisy: the recommendation's noise-free value decides (1 -> 2: worse), not the draws
    _write_cell(base, "levy", "auto", 0, [5] * 4, true_trace=[[4, 1.0]])
    _write_cell(variant, "levy", "auto", 0, [1] * 4, true_trace=[[4, 2.0]])
    monkeypatch.setattr(sys, "argv", ["paired_runs.py", str(base), str(variant)])
    script.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ackley-D2-n4, seeds 0-2: 1 / 2 / 3 -> 0.5 / 8 / 9 (median 2 -> 8)"
    assert lines[1] == "levy-D2-n4, seeds 0-0: 1 -> 2 (median 1 -> 2)"
    # 1 better of 4 unequal: P(at least 1 of 4 fair flips) = 15/16
    assert lines[2] == "better 1, worse 3, equal 0; one-sided sign test 0.938"
    assert lines[3].endswith(": every peer beaten on 1 of 1 groups (1 firm); at most the best "
                             "part on 0 of 0 (0 firm), at most the parts' median on 0; leads "
                             "at evaluations 50 / 100 / 200: 0 / 0 / 0")
    assert lines[4].startswith("with the variant's cells: every peer beaten on 0 of 1 groups")


def test_paired_runs_puts_every_named_method_in_place(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Auto and its part ``auto-cobyla`` end at 1 as they are (Auto meets its best part, a
    tie) and at 2 in the variant, MS-UCB at 5. With Auto's cells alone in place Auto (2) is
    behind the part as it is (1); with both in place it meets the part again (2)."""
    script = _benchmark_script("paired_runs", monkeypatch)
    base, variant = tmp_path / "base", tmp_path / "variant-pair"
    _write_suite(base, {"ackley": ["random", "auto", "auto-cobyla", "msucb"]})
    _write_suite(variant, {"ackley": ["auto", "auto-cobyla"]})
    for s in range(3):
        for method in ("auto", "auto-cobyla"):
            _write_cell(base, "ackley", method, s, [5, 3, 1, 1])
            _write_cell(variant, "ackley", method, s, [5, 3, 2, 2])
        _write_cell(base, "ackley", "msucb", s, [5, 5, 5, 5])
        _write_cell(base, "ackley", "random", s, [9, 8, 7, 6])
    for named, best in (("auto", 0), ("auto,auto-cobyla", 1)):
        monkeypatch.setattr(sys, "argv", ["paired_runs.py", str(base), str(variant),
                                          "--method", named])
        script.main()
        lines = capsys.readouterr().out.splitlines()
        if named == "auto":
            assert lines[0].startswith("ackley-D2-n4, seeds 0-2: 1 / 1 / 1 -> 2 / 2 / 2")
            assert lines[1] == "better 0, worse 3, equal 0; one-sided sign test 1"
        else:
            assert lines[0].startswith("auto: ackley-D2-n4, seeds 0-2: 1 / 1 / 1 -> 2 / 2 / 2")
            assert lines[1].startswith("auto-cobyla: ackley-D2-n4, seeds 0-2:")
            assert lines[2] == "better 0, worse 6, equal 0; one-sided sign test 1"
        assert "at most the best part on 1 of 1" in lines[-2]
        assert f"at most the best part on {best} of 1" in lines[-1]



def test_design_cost_compares_auto_with_ngopt_short_of_the_design_and_at_the_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """At D = 20 with 100 evaluations Auto's design has max(20, min(2 * 20 + 1, 100 // 4)) =
    25 points, so NGOpt is read at evaluations 75 (its best 10 there, 8 one later) and 100
    (2). Auto ends at 5, 2 and 10: below 10 on two seeds and below 2 on none (a tie is not
    below). A noisy group, a group without NGOpt and NGOpt's cell that stopped short of the
    budget are left out."""
    script = _benchmark_script("design_cost", monkeypatch)
    out = tmp_path / "out"
    _write_suite(out, {"ackley": ["auto", "ng-ngopt"], "levy": ["auto", "ng-ngopt"],
                       "rastrigin": ["auto"]}, dim=20, budget=100)
    centre = [50.0] * 74 + [10.0, 8.0] + [8.0] * 23 + [2.0]
    for s, final in enumerate([5.0, 2.0, 10.0]):
        for problem in ("ackley", "levy", "rastrigin"):
            _write_cell(out, problem, "auto", s, [60.0] * 99 + [final], dim=20, budget=100,
                        true_trace=[[100, final]] if problem == "levy" else None)
        for problem in ("ackley", "levy"):
            _write_cell(out, problem, "ng-ngopt", s, centre, dim=20, budget=100,
                        true_trace=[[100, 2.0]] if problem == "levy" else None)
    _write_cell(out, "ackley", "ng-ngopt", 3, centre[:80], dim=20, budget=100)
    _write_cell(out, "ackley", "auto", 3, [0.0] * 100, dim=20, budget=100)
    monkeypatch.setattr(sys, "argv", ["design_cost.py", str(out), "--seeds", "0-3"])
    script.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{'ackley-D20-n100':36s} n_init  25: Auto 5; NGOpt at 75 10, at 100 2; "
                     "Auto below them on 2 / 0 of 3 seeds"]


def test_a_group_whose_cells_disagree_on_f_min_is_refused(tmp_path: Path) -> None:
    """Medians of values on different scales compare nothing: a group with f_min 0 on one
    seed and 1000 on another is refused, naming the cell and both values."""
    out = tmp_path / "out"
    _write_suite(out, {"ackley": ["auto"]})
    for s in range(2):
        _write_cell(out, "ackley", "auto", s, [5, 3, 2, 1])
    assert [g.f_min for g in load_results(out)] == [0.0]
    moved = out / "cells" / "ackley-D2-n4" / "auto" / "seed1.json"
    cell = json.loads(moved.read_text())
    moved.write_text(json.dumps({**cell, "f_min": 1000.0}))
    with pytest.raises(ValueError, match=r"seed1\.json: f_min 1000\.0 differs from 0\.0 .* "
                                         r"group ackley-D2-n4"):
        load_results(out)
