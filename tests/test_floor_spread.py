"""``hdbo report DIR --spread`` (:mod:`hdbo_cli.floor_spread`): the floor's figures on
hand-made groups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hdbo_cli import floor_spread
from hdbo_cli.cli import main
from hdbo_cli.report import CellRun, GroupStats

# final best values per method, one per seed
ENDS = {"auto": [1.0, 2.0, 3.0], "msucb": [2.0, 3.0, 4.0], "cobbo": [2.0, 3.0, 4.0],
        "goucb": [4.0, 5.0, 6.0], "bkb": [4.0, 5.0, 6.0], "optuna-tpe": [5.0, 5.0, 5.0]}


def group(ends: dict[str, list[float]]) -> GroupStats:
    """A group whose cells reach their end value at the second of two evaluations."""
    g = GroupStats("p", 2, 2, None)
    for method, values in ends.items():
        for seed, end in enumerate(values):
            g.runs[method][seed] = CellRun(2, np.array([end + 1.0, end]))
    return g


def test_longest_stall_counts_evaluations_between_improvements() -> None:
    # 9 improves on 10; 9 and 8.995 (less than 1e-3 |9| below 9) do not; 5 does
    curve = np.array([10.0, 9.0, 9.0, 9.0, 8.995, 5.0, 5.0])
    assert floor_spread.longest_stall(curve) == 3


def test_floor_margin_and_test_against_values_worked_out_by_hand() -> None:
    s = floor_spread.spread(group(ENDS), boot=200, rng=np.random.default_rng(0))
    assert s is not None
    # floor: median of the medians 3, 3, 5, 5; the pooled singles 2, 3, 4, 2, 3, 4, 4, 5, 6,
    # 4, 5, 6 have median 4 and absolute deviations 0 x4, 1 x4, 2 x4: their median is 1
    assert s["auto"] == 2.0 and s["floor"] == 4.0 and s["seeds"] == 3
    tpe = s["peers"]["optuna-tpe"]
    assert tpe.auto == 2.0 and tpe.peer == 5.0 and tpe.seeds == 3
    assert s["margin"] == pytest.approx(2.0 / 1.4826, rel=1e-4)
    assert 0.0 < s["p"] < 0.2  # Auto's three values lie below 11 of the 12 pooled ones
    assert s["P(meet)"] > 0.8
    assert tpe.below == 1.0  # every Auto value is below TPE's constant 5
    assert s["peers"]["random"] is None  # no random search cells
    assert s["stall"]["auto"] == 0
    # 2 (1.95996 + 0.84162)^2 = 15.698 over margin^2 = 1.8198: 8.63 seeds; against TPE the
    # pooled 1, 2, 3, 5, 5, 5 have median 4, absolute deviations 3, 2, 1, 1, 1, 1 (median
    # 1), the margin 3 / 1.4826 = 2.0235: 3.83 seeds
    assert s["decide"] == 9 and tpe.decide == 4
    assert tpe.margin == pytest.approx(3.0 / 1.4826, rel=1e-4)


def test_the_margin_falls_back_to_the_standard_deviation_where_half_the_values_tie() -> None:
    # 1, 1, 1, 3: median 1, absolute deviations 0, 0, 0, 2 (median 0); std sqrt(0.75)
    values = np.array([1.0, 1.0, 1.0, 3.0])
    assert floor_spread.robust_margin(1.0, values) == pytest.approx(1.0 / np.sqrt(0.75))
    assert np.isnan(floor_spread.robust_margin(1.0, np.ones(3)))


def test_seeds_to_decide_follows_lehrs_sixteen_over_delta_squared() -> None:
    # Lehr (Stat. Med. 1992): about 16 / delta^2 per arm for level 0.05, power 0.8
    assert floor_spread.seeds_to_decide(1.0) == 16
    assert floor_spread.seeds_to_decide(0.5) == 63  # 15.698 / 0.25 = 62.8
    assert floor_spread.seeds_to_decide(-0.1) == 1570  # the sign does not matter
    assert floor_spread.seeds_to_decide(0.0) == np.inf


def test_methods_are_compared_on_the_seeds_they_share() -> None:
    g = group(ENDS)
    g.runs["optuna-tpe"] = {0: CellRun(2, np.array([9.0, 8.0])),
                            5: CellRun(2, np.array([9.0, 9.0]))}
    s = floor_spread.spread(g, boot=10, rng=np.random.default_rng(0))
    assert s is not None
    tpe = s["peers"]["optuna-tpe"]
    assert tpe.seeds == 1 and tpe.auto == 1.0 and tpe.peer == 8.0
    assert s["seeds"] == 3  # the floor's seeds do not depend on TPE's


def test_a_stopped_cell_is_compared_where_it_stopped() -> None:
    g = group(ENDS)
    g.runs["optuna-tpe"][0] = CellRun(1, np.array([6.0]))  # stopped after one evaluation
    s = floor_spread.spread(g, boot=10, rng=np.random.default_rng(0))
    # Auto's seed 0 is taken at evaluation 1 (2.0): its values 2, 2, 3; TPE's 6, 5, 5
    assert s is not None
    assert s["peers"]["optuna-tpe"].auto == 2.0 and s["peers"]["optuna-tpe"].peer == 5.0


def test_report_spread_prints_a_line_per_group_and_writes_no_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cells").mkdir()
    monkeypatch.setattr(floor_spread, "load_results", lambda run: [group(ENDS)])
    assert main(["report", str(tmp_path), "--spread"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("p-D2-n2: 3 seeds, Auto 2, floor 4, margin +1.35 sd, p 0.05, ")
    assert "optuna-tpe: 3 seeds, Auto 2 vs 5, margin +2.02 sd, P(below) 1.00" in line
    assert line.endswith("stall: auto 0 msucb 0 cobbo 0 goucb 0 bkb 0 optuna-tpe 0")
    assert not (tmp_path / "report.md").exists()
