"""benchmarks/floor_spread.py: the floor's figures on a hand-written benchmark folder."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "floor_spread.py"
_SPEC = importlib.util.spec_from_file_location("floor_spread", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
floor_spread = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(floor_spread)

# end values per method, one per seed
ENDS = {"auto": [1.0, 2.0, 3.0], "msucb": [2.0, 3.0, 4.0], "cobbo": [2.0, 3.0, 4.0],
        "goucb": [4.0, 5.0, 6.0], "bkb": [4.0, 5.0, 6.0], "optuna-tpe": [5.0, 5.0, 5.0]}


def write_cell(folder: Path, seed: int, values: list[float], true: float | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = "\n".join(f"{i},{v!r},{min(values[:i])!r},0,0,0,0" for i, v in
                     enumerate(values, start=1))
    (folder / f"seed{seed}.csv").write_text(
        "evaluation,value,best_so_far,ask_s,tell_s,ask_cpu_s,tell_cpu_s\n" + rows + "\n")
    cell = {"best": min(values), **({} if true is None else {"final_true_value": true})}
    (folder / f"seed{seed}.json").write_text(json.dumps(cell))


def test_longest_stall_counts_evaluations_between_improvements(tmp_path: Path) -> None:
    # 9 improves on 10; 9, 9 and 8.995 (less than 1e-3 |9| below 9) do not; 5 does
    write_cell(tmp_path, 0, [10.0, 9.0, 9.0, 9.0, 8.995, 5.0, 5.0])
    assert floor_spread.longest_stall(tmp_path / "seed0.csv") == 3


def test_floor_margin_and_test_against_values_worked_out_by_hand(tmp_path: Path) -> None:
    group = tmp_path / "g"
    for method, ends in ENDS.items():
        for seed, end in enumerate(ends):
            write_cell(group / method, seed, [end + 1.0, end])
    s = floor_spread.spread(group, boot=200, rng=np.random.default_rng(0))
    # floor: median of the medians 3, 3, 5, 5; pooled singles 2..6 have mean 4, variance 20/12
    assert s["auto"] == 2.0 and s["floor"] == 4.0 and s["tpe"] == 5.0 and s["seeds"] == 3
    assert s["margin"] == pytest.approx(2.0 / np.sqrt(20.0 / 12.0))
    assert 0.0 < s["p"] < 0.2  # Auto's three values lie below 11 of the 12 pooled ones
    assert s["P(meet)"] > 0.8
    assert s["P(TPE)"] == 1.0  # every Auto value is below TPE's constant 5
    assert s["stall"]["auto"] == 0


def test_a_noisy_cell_counts_by_its_recommendations_noise_free_value(tmp_path: Path) -> None:
    write_cell(tmp_path / "auto", 0, [3.0, 1.0], true=7.5)
    assert floor_spread.end_values(tmp_path, "auto") == {0: 7.5}


def test_methods_are_compared_on_the_seeds_they_share() -> None:
    auto, tpe = floor_spread.on_shared_seeds([{0: 1.0, 1: 2.0, 5: 3.0}, {5: 9.0, 0: 8.0}])
    assert auto.tolist() == [1.0, 3.0] and tpe.tolist() == [8.0, 9.0]
