"""``hdbo reproduce``: the list, bad names, and each entry's ``--quick`` run (JSON + PNG)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hdbo_cli.cli import main
from hdbo_cli.reproduce import REPRODUCTIONS

NAMES = ["msucb-tradeoff", "cobbo-speed", "cobbo-ablation", "goucb-regret", "bkb-cost"]


def test_list_shows_the_five_entries(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == NAMES == list(REPRODUCTIONS)


@pytest.mark.parametrize("argv", [["reproduce", "nope"], ["reproduce"]])
def test_a_bad_name_is_one_line_naming_the_argument(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NAME:" in err and all(n in err for n in NAMES)


def _quick(name: str, tmp_path: Path) -> dict:
    """Run ``name --quick`` (8-10 CPU s each when measured; run time is not asserted here)."""
    assert main(["reproduce", name, "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    numbers = json.loads((tmp_path / f"{name}.json").read_text())
    assert numbers["name"] == name and numbers["quick"] is True
    return numbers


def test_msucb_tradeoff_quick(tmp_path: Path) -> None:
    runs = _quick("msucb-tradeoff", tmp_path)["runs"]
    assert len(runs) == 2 * 9
    assert {r["d"] for r in runs if r["figure"] == "fig3"} == {0, 1, 2, 5, 10}
    for r in runs:  # 20 initial points and 5 iterations; the best-so-far regret never rises
        curve = np.array(r["log10_regret_mean_curve"])
        assert len(curve) == 25 and np.all(np.diff(curve) <= 1e-4)
        assert r["final_log10_regret_mean"] == pytest.approx(curve[-1], abs=1e-4)
        assert r["final_log10_regret_mean"] == pytest.approx(
            np.mean(r["final_log10_regret_per_seed"]))


def test_cobbo_speed_quick(tmp_path: Path) -> None:
    numbers = _quick("cobbo-speed", tmp_path)
    assert set(numbers["ask_cpu_s_total"]) == {"cobbo", "gpucb"}
    per_iteration = numbers["ask_cpu_s_per_iteration"]
    assert all(len(t) == 25 for t in per_iteration.values())
    totals = numbers["ask_cpu_s_total"]
    for name, times in per_iteration.items():  # the totals are the sums of the iterations
        assert sum(times) == pytest.approx(totals[name], abs=25 * 5e-5)
    assert numbers["speedup_total"] == pytest.approx(totals["gpucb"] / totals["cobbo"])
    assert all(b >= 0.0 for b in numbers["best"].values())  # Rastrigin's minimum is 0


def test_cobbo_ablation_quick(tmp_path: Path) -> None:
    numbers = _quick("cobbo-ablation", tmp_path)
    assert set(numbers["fig4"]) == {"backoff rule (CobBO)", "fixed 1 queries",
                                    "fixed 4 queries", "fixed 16 queries", "uniform coordinates"}
    share = numbers["fig5"]["active_share_per_evaluation"]
    assert len(share) == 35 and all(0 < s < 1 for s in share)


def test_goucb_regret_quick(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    problems = _quick("goucb-regret", tmp_path)["problems"]
    assert len(problems) == 3
    for p in problems.values():
        for m in ("GO-UCB", "GP-UCB"):
            # one seed; T = 6 Phase II points, none exactly at the optimum
            assert p[m]["cumulative_regret_mean"] == pytest.approx(np.mean(p[m]["per_seed"]))
            assert p[m]["cumulative_regret_mean"] > 0


def test_goucb_regret_minima_are_the_functions_minima() -> None:
    """Regret is measured from the minima of Sec. 6.1's functions on [-5, 5]^20: f1's at
    x = 5 (a sigmoid of sum x), Styblinski-Tang's at x_i = -2.903534 (-39.16617 each) and
    Rastrigin's 0 at the origin."""
    pytest.importorskip("torch")
    from hdbo_cli.reproduce.goucb import PROBLEMS

    minima = {name: entry[1] for name, entry in PROBLEMS.items()}
    assert minima["f1 (realizable)"] == pytest.approx(-(25.0 / (1.0 + np.exp(-101.0)) + 1.0))
    assert minima["f2 Styblinski-Tang"] == pytest.approx(20 * -39.16617, rel=1e-6)
    assert minima["f3 Rastrigin"] == 0.0
    for name, (f, f_min, _, _) in PROBLEMS.items():
        x_star = {"f1 (realizable)": 5.0, "f2 Styblinski-Tang": -2.903534,
                  "f3 Rastrigin": 0.0}[name]
        assert f(np.full((1, 20), x_star))[0] == pytest.approx(f_min, rel=1e-6, abs=1e-9)


def test_bkb_cost_quick(tmp_path: Path) -> None:
    numbers = _quick("bkb-cost", tmp_path)
    arms = numbers["finite arms"]
    assert {"BKB", "exact GP-UCB (merged arms)", "exact GP-UCB (one row per pull)"} <= set(arms)
    # the two exact forms have the same posterior, hence the same choices
    assert (arms["exact GP-UCB (merged arms)"]["cumulative_regret_at"]
            == arms["exact GP-UCB (one row per pull)"]["cumulative_regret_at"])
    assert numbers["continuous box"]["BKB"]["model_size_at"]["40"] <= 40
