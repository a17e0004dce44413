"""Nevergrad's standard artificial functions through Nevergrad's experiment machinery.

``nevergrad.functions.ArtificialFunction`` (sphere, ellipsoid, cigar,
rastrigin, ackley; rotated, with useless variables) run by
``nevergrad.benchmark.xpbase.Experiment`` (loaded by
``examples/nevergrad_benchmark.py``, see its docstring for the offline import),
each of our optimizers against RandomSearch in the same run (same function
instances and seeds). "Beats on aggregate": lower loss in more than half of
the (function, dimension, seed) cases *and* a geometric-mean loss ratio below 1.

The default version is small (block dimension 20 + 10 useless variables,
budget 50, 3 seeds) and runs Auto (``HDBO``), the recommended optimizer; the single
algorithms' small runs are in the slow suite. The ``slow`` large one covers block
dimensions 20, 50 and 100 with budget 100, 3 seeds, and also runs NGOpt, CMA and
MetaRecentering for reference. The
same tables come from::

    PYTHONPATH=$PWD python examples/nevergrad_benchmark.py --dims 20 50 100 --budget 100
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hdbo_engine import available
from hdbo_engine.registry import entries

_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nevergrad_benchmark.py"
ENGINE_NAME = {e.nevergrad_name: e.name for e in entries(public=True)}
NAMES = [pytest.param(n, marks=pytest.mark.skipif(a not in set(available()),
                                                  reason=f"engine module {a} not present"))
         for n, a in ENGINE_NAME.items()]
# The default suite runs the recommended optimizer (HDBO, i.e. Auto; 130-200 s); the single
# algorithms (20-50 s each, GO-UCB about a second per ask) run in the slow suite, where the
# large version covers them too.
SMALL_NAMES = [p if p.values[0] == "HDBO" else pytest.param(p.values[0],
                                                            marks=[*p.marks, pytest.mark.slow])
               for p in NAMES]


def _bench():
    spec = importlib.util.spec_from_file_location("hdbo_nevergrad_benchmark_example", _EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assert_beats_random(df: pd.DataFrame, name: str) -> None:
    table = df.pivot_table(index=["name", "block_dimension", "seed"],
                           columns="optimizer_name", values="loss")
    wins = float((table[name] < table["RandomSearch"]).mean())
    log_ratio = float(np.mean(np.log(table[name] / table["RandomSearch"])))
    print(f"\n{name}: wins {wins:.0%}, geometric-mean loss ratio {np.exp(log_ratio):.3f}")
    assert wins > 0.5 and log_ratio < 0.0, (name, wins, np.exp(log_ratio))


def test_experiment_rows_have_nevergrad_columns() -> None:
    bench = _bench()
    df = bench.run_benchmark(["RandomSearch"], ["sphere"], [20], budget=5, seeds=[np.int64(0)])
    for column in ("loss", "elapsed_budget", "elapsed_time", "error", "seed", "name",
                   "block_dimension", "useless_variables", "rotation", "dimension", "budget",
                   "num_workers", "optimizer_name"):
        assert column in df.columns
    row = df.iloc[0]
    assert row["dimension"] == 30 and row["elapsed_budget"] == 5 and not row["error"]
    assert row["rotation"] and row["useless_variables"] == 10


@pytest.mark.parametrize("name", SMALL_NAMES)
def test_beats_random_search_small(name: str) -> None:
    bench = _bench()
    df = bench.run_benchmark([name, "RandomSearch"], bench.FUNCTIONS, [20], budget=50,
                             seeds=range(3), useless=10)
    assert (df["elapsed_budget"] == 50).all()
    print(bench.summarize(df).to_string())
    _assert_beats_random(df, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_beats_random_search_large(name: str) -> None:
    """Block dimensions 20, 50, 100 (+ half as many useless variables), budget 100."""
    bench = _bench()
    df = bench.run_benchmark([name, *bench.BASELINES], bench.FUNCTIONS, [20, 50, 100],
                             budget=100, seeds=range(3))
    print(bench.summarize(df).to_string())
    _assert_beats_random(df, name)
