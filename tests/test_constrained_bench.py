"""The ``constrained`` suite: its problems against the literature and BoTorch, constraint
values reaching every method, the best-feasible bookkeeping of a cell, and the report."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from hdbo_cli.bench import Cell, load_suite, make_bench_problem, make_runner, run_cell
from hdbo_cli.problems import make_problem
from hdbo_cli.report import load_results, markdown_report, targets
from hdbo_engine.algorithms.baselines import RandomSearch

# Mishra (2007), MPRA paper 3098, differential evolution: Table 3(a) (D = 20) and Table 10(a)
# (D = 17), with the minima reported there.
MISHRA_D20 = ([3.162462120, 3.128331570, 3.094791700, 3.061449390, 3.027931110, 2.993829330,
               2.958666990, 2.921839070, 0.494829273, 0.488358755, 0.482312620, 0.476648099,
               0.471293545, 0.466228022, 0.461417418, 0.456836629, 0.452460752, 0.448267681,
               0.444248266, 0.440381976], -0.803619104)
MISHRA_D17 = ([3.151991990, 3.111505760, 3.071640430, 3.031343620, 2.990185690, 2.947234280,
               2.900955860, 0.475303034, 0.468048135, 0.461194008, 0.454953916, 0.449055912,
               0.443555158, 0.438405917, 0.433369424, 0.428717289, 0.424209287], -0.79150563)


@pytest.mark.parametrize(("point", "value"), [MISHRA_D20, MISHRA_D17])
def test_keane_bump_matches_mishras_published_optima(point: list[float], value: float) -> None:
    x = np.array(point)
    p = make_problem("keane_bump", len(x))
    assert p(x)[0] == pytest.approx(value, abs=2e-8)
    c = p.c(x[None])[0]
    assert abs(c[0]) < 1e-6  # the optimum lies on prod x_i = 0.75
    assert c[1] == pytest.approx(x.sum() - 7.5 * len(x))


@pytest.mark.parametrize("dim", [30, 100])
def test_keane_bump_agrees_with_botorch(dim: int) -> None:
    torch = pytest.importorskip("torch")
    from botorch.test_functions.synthetic import KeaneBumpFunction

    p = make_problem("keane_bump", dim)
    X = np.random.default_rng(dim).uniform(0.0, 10.0, (50, dim))
    theirs = KeaneBumpFunction(dim=dim)
    T = torch.tensor(X)
    assert np.allclose(p(X), theirs.evaluate_true(T).numpy(), rtol=1e-12)
    # BoTorch's slack is feasible where >= 0: minus our constraint values
    assert np.allclose(p.c(X), -theirs.evaluate_slack_true(T).numpy(), rtol=1e-12)
    assert p.info["best_known"] == ({30: -0.818056222}.get(dim))


def test_speed_reducer_reaches_lemonges_optimum_and_agrees_with_botorch() -> None:
    torch = pytest.importorskip("torch")
    from botorch.test_functions.synthetic import SpeedReducer

    p = make_problem("speed_reducer", 7)
    x_star = np.array([3.5, 0.7, 17.0, 7.3, 7.8, 3.350215, 5.286683])
    assert p(x_star)[0] == pytest.approx(2996.3482, abs=1e-3)
    assert p.c(x_star[None]).max() < 1e-6  # feasible up to the published rounding
    U = np.random.default_rng(0).random((2000, 7))
    X = p.from_unit(U)
    theirs = SpeedReducer()
    T = torch.tensor(X)
    assert np.allclose(p(X), theirs.evaluate_true(T).numpy(), rtol=1e-12)
    # BoTorch scales some constraints differently; each one's sign must agree
    assert np.array_equal(p.c(X) <= 0, theirs.evaluate_slack_true(T).numpy() >= 0)


def test_scbo_ackley_has_its_feasible_optimum_at_the_origin_of_its_active_coordinates() -> None:
    p = make_problem("scbo_ackley", 100, seed=3)
    coords = p.info["coordinates"]
    assert len(coords) == 10 and coords == sorted(coords)
    assert coords != make_problem("scbo_ackley", 100, seed=4).info["coordinates"]
    x = np.full(100, 7.0)
    x[coords] = 0.0
    assert p(x)[0] == pytest.approx(0.0, abs=1e-12) and p.f_min == 0.0
    assert np.allclose(p.c(x[None])[0], [0.0, -5.0])
    x[coords] = 1.0  # Ackley at (1, ..., 1): 20 (1 - e^-0.2); sum 10; norm sqrt(10)
    assert p(x)[0] == pytest.approx(20 * (1 - np.exp(-0.2)))
    assert np.allclose(p.c(x[None])[0], [10.0, np.sqrt(10) - 5])
    dummies = np.setdiff1d(np.arange(100), coords)
    y = x.copy()
    y[dummies] = -4.0
    assert p(y)[0] == p(x)[0] and np.array_equal(p.c(y[None]), p.c(x[None]))


def test_bad_dimensions_are_named() -> None:
    with pytest.raises(ValueError, match="speed_reducer has 7"):
        make_problem("speed_reducer", 8)
    with pytest.raises(ValueError, match="scbo_ackley .* dim >= 10"):
        make_problem("scbo_ackley", 9)


def test_committed_suite_lists_the_constrained_groups_and_methods() -> None:
    suite = load_suite("constrained")
    cells = suite.cells()
    assert suite.seeds == 3
    assert {(c.problem, c.dim) for c in cells} == {
        ("keane_bump", 30), ("keane_bump", 100), ("scbo_ackley", 100), ("speed_reducer", 7)}
    assert {c.method for c in cells} == {"random", "ng-ngopt", "optuna-tpe", "optuna-gp",
                                         "auto", "msucb", "cobbo", "goucb", "bkb"}
    for problem, dim in {(c.problem, c.dim) for c in cells}:
        assert make_bench_problem(problem, dim).n_constraints > 0


def test_a_suite_listing_a_peer_without_constraints_on_a_constrained_problem_is_rejected(
        tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[[group]]\nproblems=['speed_reducer']\ndims=[7]\nbudget=5\n"
                    "methods=['optuna-tpe', 'optuna-cmaes']\n")
    with pytest.raises(ValueError, match="optuna-cmaes.*take no constraints"):
        load_suite(str(path))


def test_optuna_trials_carry_the_constraints_and_recommend_the_best_feasible() -> None:
    runner = make_runner("optuna-tpe", 2, 5, seed=0)
    told = []
    for y, c in ((0.0, [1.0, -1.0]), (5.0, [-1.0, -2.0])):  # the lower value is infeasible
        x, trial = runner.ask()
        runner.tell(trial, x, y, constraints=np.array(c))
        told.append(x)
    study = trial.study
    assert [t.constraints for t in study.trials] == [{"c1": 1.0, "c2": -1.0},
                                                     {"c1": -1.0, "c2": -2.0}]
    assert np.array_equal(runner.recommend(), told[1])


def test_nevergrad_recommends_a_feasible_point_over_a_lower_infeasible_one() -> None:
    runner = make_runner("ng-ngopt", 2, 10, seed=0)
    told = []
    for y, c in ((5.0, [-1.0]), (0.0, [3.0])):
        x, cand = runner.ask()
        runner.tell(cand, x, y, constraints=np.array(c))
        told.append(x)
    assert np.allclose(runner.recommend(), told[0])


def _cell_rows(out: Path, cell: Cell) -> tuple[np.ndarray, np.ndarray, list[dict[str, str]]]:
    """A cell's values, constraint values and CSV rows."""
    with open(cell.paths(out)[0]) as fh:
        rows = list(csv.DictReader(fh))
    m = sum(name.startswith("c") and name[1:].isdigit() for name in rows[0])
    c = np.array([[float(r[f"c{j}"]) for j in range(1, m + 1)] for r in rows])
    return np.array([float(r["value"]) for r in rows]), c, rows


def test_a_constrained_cell_records_feasibility_and_the_best_feasible_value(
        tmp_path: Path) -> None:
    # Keane's bump at D = 2: about 17% of the box is infeasible (x1 x2 < 0.75 or x1 + x2 > 15)
    cell = Cell("keane_bump", 2, 40, "optuna-tpe", 0)
    summary = run_cell(cell, tmp_path)
    values, c, rows = _cell_rows(tmp_path, cell)
    feasible = (c <= 0).all(1)
    assert [int(r["feasible"]) for r in rows] == feasible.astype(int).tolist()
    assert 0 < feasible.sum() < len(rows)  # both kinds occur, so the test can fail
    best = np.minimum.accumulate(np.where(feasible, values, np.inf))
    assert np.array_equal([float(r["best_so_far"]) for r in rows], best)
    assert summary["best"] == best[-1] and summary["feasible_found"]
    assert summary["n_feasible"] == feasible.sum()
    assert summary["first_feasible"] == int(np.argmax(feasible)) + 1
    assert summary["least_violation"] == 0.0 and summary["constraints"] == 2
    assert summary["recommended_feasible"] is True


def test_a_cell_without_a_feasible_point_scores_infinity_and_its_least_violation(
        tmp_path: Path) -> None:
    # SCBO's Ackley at D = 10: the feasible set (sum x <= 0, |x| <= 5) is a small corner of
    # [-5, 10]^10, and NGOpt starts at the infeasible centre
    cell = Cell("scbo_ackley", 10, 30, "ng-ngopt", 0)
    summary = run_cell(cell, tmp_path)
    values, c, rows = _cell_rows(tmp_path, cell)
    assert c.shape == (30, 2) and (c.max(1) > 0).all()
    assert all(float(r["best_so_far"]) == np.inf for r in rows)
    assert summary["best"] == np.inf and not summary["feasible_found"]
    assert summary["n_feasible"] == 0 and summary["first_feasible"] is None
    assert summary["least_violation"] == pytest.approx(np.maximum(c, 0).sum(1).min())
    assert summary["recommended_feasible"] is False


def test_auto_is_told_the_constraints(tmp_path: Path) -> None:
    summary = run_cell(Cell("keane_bump", 2, 15, "auto", 0), tmp_path)
    assert summary["feasible_found"] and summary["recommended_feasible"] is True


def test_random_search_draws_uniformly_on_a_constrained_problem(tmp_path: Path) -> None:
    cell = Cell("speed_reducer", 7, 25, "random", 1)
    run_cell(cell, tmp_path)
    values, _, _ = _cell_rows(tmp_path, cell)
    problem = make_problem("speed_reducer", 7)
    opt = RandomSearch(7, seed=1, budget=25)  # the same draws, told no constraints
    expected = []
    for _ in range(25):
        (proposal,) = opt.ask()
        expected.append(problem.evaluate_unit(proposal.x)[0])
        opt.tell(proposal.x, expected[-1])
    assert np.array_equal(values, expected)


def _write_cell(out: Path, method: str, seed: int, values: list[float],
                feasible: list[bool]) -> None:
    """A finished constrained cell (the files run_cell writes) with the given values."""
    cell = Cell("speed_reducer", 7, len(values), method, seed)
    csv_path, json_path = cell.paths(out)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    best = np.minimum.accumulate(np.where(feasible, values, np.inf))
    lines = ["evaluation,value,best_so_far,ask_s,tell_s,ask_cpu_s,tell_cpu_s,feasible,c1"]
    lines += [f"{i + 1},{v!r},{float(b)!r},0.1,0.0,0.1,0.0,{int(f)},{-1.0 if f else 1.0}"
              for i, (v, b, f) in enumerate(zip(values, best, feasible, strict=True))]
    csv_path.write_text("\n".join(lines) + "\n")
    json_path.write_text(json.dumps({
        "problem": cell.problem, "dim": 7, "budget": len(values), "method": method,
        "seed": seed, "group": cell.group, "status": "done", "evaluations": len(values),
        "best": float(best[-1]), "f_min": 2996.3482, "optimizer_time_s": 1.0,
        "optimizer_cpu_s": 1.0, "peak_rss_mib": 100.0, "problem_info": {},
        "machine": {"cpu": "x", "cores": 1, "memory_gib": 1, "python": "3", "platform": "p"},
        "constraints": 1, "feasible_found": bool(any(feasible))}))


def test_report_scores_the_best_feasible_value_and_auto_finding_feasible_points(
        tmp_path: Path) -> None:
    # Auto: feasible on both seeds, best feasible 3000 and 3010 (median 3005). Random: 3020 on
    # seed 0 (its lower value 2990 is infeasible) and nothing feasible on seed 1 (median inf).
    _write_cell(tmp_path, "auto", 0, [3100.0, 3000.0], [True, True])
    _write_cell(tmp_path, "auto", 1, [3010.0, 2900.0], [True, False])
    _write_cell(tmp_path, "random", 0, [2990.0, 3020.0], [False, True])
    _write_cell(tmp_path, "random", 1, [2950.0, 2980.0], [False, False])
    (group,) = load_results(tmp_path)
    assert sorted(group.best["auto"]) == [3000.0, 3010.0]
    assert group.feasible["random"] == {0: True, 1: False}
    tg = targets([group])
    assert tg["auto"][group.name]["medians"]["random"] == (3005.0, np.inf)
    assert tg["auto"][group.name]["status"] == "won"
    assert tg["feasibility"][group.name] == {"peers_feasible": ["random"], "auto": (2, 2)}
    text = markdown_report(tmp_path)
    assert "Auto beats every peer's median best feasible value on **1 of 1** groups" in text
    assert "Auto finds a feasible point on every seed of every group where any peer does: " \
           "**yes**" in text
    assert "| random | none [3020, none] | 1 / 2 |" in text
    assert "| auto | **3005 [3002, 3008]** | 2 / 2 |" in text


def test_report_says_no_when_auto_misses_a_feasible_point_a_peer_found(tmp_path: Path) -> None:
    _write_cell(tmp_path, "auto", 0, [3000.0], [True])
    _write_cell(tmp_path, "auto", 1, [2900.0], [False])
    _write_cell(tmp_path, "random", 0, [3020.0], [True])
    _write_cell(tmp_path, "random", 1, [3030.0], [True])
    text = markdown_report(tmp_path)
    assert "where any peer does: **no**" in text
    assert "Auto on 1 of 2 seeds; peers with a feasible point on some seed: random" in text
