"""Compare hdbo's Nevergrad optimizers with NGOpt, CMA and RandomSearch.

Runs Nevergrad's standard artificial functions
(``nevergrad.functions.ArtificialFunction``: sphere, ellipsoid, cigar,
rastrigin, ackley, rotated, with useless variables) through Nevergrad's own
experiment machinery (``nevergrad.benchmark.xpbase.Experiment``: one
optimizer, one function copy, one seed; the loss is the noise-free value at the
final recommendation). Besides NGOpt, CMA and RandomSearch it runs
MetaRecentering, Nevergrad's random sampling with the recentered scale that our
optimizers use by default for unbounded variables (``unbounded_scale="auto"``),
so that the gain of the model over the recentered prior is visible;
``--unbounded-scale 1`` runs ours on Nevergrad's unscaled prior instead.

``nevergrad.benchmark``'s package ``__init__`` imports every experiment plan,
which needs optional packages (``cv2``, ``gym``, ...) that an offline
installation lacks. :func:`load_experiment_class` then loads the one module
that defines ``Experiment`` without running that ``__init__``; the class and
the rows it produces are Nevergrad's own. Seeds are cast to ``int`` (Python
3.11's ``random.seed`` rejects numpy integers).

Usage::

    OMP_NUM_THREADS=1 python examples/nevergrad_benchmark.py          # CobBO and the baselines
    OMP_NUM_THREADS=1 python examples/nevergrad_benchmark.py --full   # all four of ours, 3 seeds
    python examples/nevergrad_benchmark.py --optimizers MSUCB RandomSearch \\
        --dims 20 100 --budget 100 --seeds 5 --csv results.csv

It prints a line per experiment as it finishes (function, dimension, seed,
optimizer, loss, time), then a table of the median loss per function and
optimizer, the median time per run, and for each of ours the share of cases in
which it beat RandomSearch. The default run (CobBO, NGOpt, CMA, MetaRecentering
and RandomSearch on the five functions at dimension 20 plus 10 useless
variables, 60 evaluations, 2 seeds) takes under a minute of CPU, nearly all of
it CobBO's. ``--full`` adds MS-UCB, GO-UCB and BKB (whose asks cost more) and a
third seed: several minutes.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import types
from collections.abc import Iterable, Sequence
from typing import Any

import nevergrad as ng
import pandas as pd
from nevergrad.functions import ArtificialFunction

import hdbo_adapters.nevergrad as hdbo_ng
from hdbo_engine import available

FUNCTIONS = ("sphere", "ellipsoid", "cigar", "rastrigin", "ackley")
BASELINES = ("NGOpt", "CMA", "MetaRecentering", "RandomSearch")
_ENGINE_NAMES = {"MSUCB": "msucb", "CobBO": "cobbo", "GOUCB": "goucb", "BKB": "bkb"}


def our_optimizers() -> list[str]:
    """Registered hdbo names whose engine module is present in this installation."""
    present = set(available())
    return [name for name, algo in _ENGINE_NAMES.items() if algo in present]


def load_experiment_class() -> type:
    """``nevergrad.benchmark.xpbase.Experiment``, importable offline (module docstring)."""
    name = "nevergrad.benchmark"
    xpbase = sys.modules.get(name + ".xpbase")
    if xpbase is None:
        try:
            xpbase = importlib.import_module(name + ".xpbase")
        except ImportError:  # an optional dependency of the package __init__ is missing
            xpbase = sys.modules.get(name + ".xpbase") or _import_without_package_init(name)
    if not hasattr(xpbase, "torch"):  # its torch import goes through the optional rl package
        import torch

        xpbase.torch = torch
    return xpbase.Experiment


def _import_without_package_init(package: str) -> types.ModuleType:
    """Import ``package.xpbase`` with a bare stand-in for ``package`` (no ``__init__`` run)."""
    stub = types.ModuleType(package)
    stub.__path__ = [os.path.join(os.path.dirname(ng.__file__), "benchmark")]
    sys.modules[package] = stub
    try:
        return importlib.import_module(package + ".xpbase")
    finally:
        del sys.modules[package]


def make_function(name: str, dim: int, useless: int | None = None) -> ArtificialFunction:
    """Rotated ``name`` on ``dim`` useful variables plus ``useless`` (default dim // 2) others."""
    useless = dim // 2 if useless is None else useless
    return ArtificialFunction(name, block_dimension=dim, rotation=True, useless_variables=useless)


def run_benchmark(
    optimizers: Sequence[str],
    functions: Iterable[str] = FUNCTIONS,
    dims: Iterable[int] = (20,),
    budget: int = 40,
    seeds: Iterable[int] = range(3),
    num_workers: int = 1,
    useless: int | None = None,
    verbose: bool = False,
    unbounded_scale: float | str | None = None,
) -> pd.DataFrame:
    """One Nevergrad ``Experiment`` per (function, dim, seed, optimizer); rows as Nevergrad's.

    Every optimizer sees the same function instance (same rotation and
    translation) and seed for a given (function, dim, seed). ``unbounded_scale``
    (if given) is passed to our optimizers (registry names kept).
    """
    Experiment = load_experiment_class()
    rows: list[dict[str, Any]] = []
    for dim in dims:
        for fname in functions:
            for seed in seeds:
                seed = int(seed)
                func = make_function(fname, int(dim), useless)
                for opt_name in optimizers:
                    optimizer: Any = opt_name
                    if unbounded_scale is not None and opt_name in hdbo_ng.families():
                        family = hdbo_ng.families()[opt_name](unbounded_scale=unbounded_scale)
                        optimizer = family.set_name(opt_name)
                    xp = Experiment(func, optimizer, budget=int(budget), num_workers=num_workers,
                                    seed=seed)
                    row = xp.run()
                    if row.get("error"):
                        raise RuntimeError(f"{opt_name} on {fname} (dim {dim}, seed {seed}) "
                                           f"failed: {row['error']}")
                    rows.append(row)
                    if verbose:
                        print(f"{fname:9s} dim={dim:<4d} seed={seed} {opt_name:12s} "
                              f"loss={row['loss']:.4g} time={row['elapsed_time']:.1f}s",
                              flush=True)
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Median loss per (function, dimension) row and optimizer column."""
    return df.pivot_table(index=["name", "block_dimension"], columns="optimizer_name",
                          values="loss", aggfunc="median")


def wins_against(df: pd.DataFrame, ours: str, baseline: str = "RandomSearch") -> float:
    """Fraction of (function, dim, seed) cases where ``ours`` has a lower loss than ``baseline``."""
    table = df.pivot_table(index=["name", "block_dimension", "seed"], columns="optimizer_name",
                           values="loss")
    return float((table[ours] < table[baseline]).mean())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--optimizers", nargs="+", default=None,
                        help="registry names [CobBO (--full: all of ours) + NGOpt CMA "
                             "MetaRecentering RandomSearch]")
    parser.add_argument("--full", action="store_true",
                        help="all four of our optimizers and 3 seeds (several minutes)")
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS),
                        help="ArtificialFunction names [all five]")
    parser.add_argument("--dims", nargs="+", type=int, default=[20],
                        help="useful dimensions [20]")
    parser.add_argument("--useless", type=int, default=None,
                        help="useless variables per function [dim // 2]")
    parser.add_argument("--budget", type=int, default=60, help="evaluations per run [60]")
    parser.add_argument("--seeds", type=int, default=None,
                        help="number of seeds (0..n-1) [2; --full: 3]")
    parser.add_argument("--num-workers", type=int, default=1,
                        help="Nevergrad's num_workers (parallel asks) [1]")
    parser.add_argument("--unbounded-scale", default=None,
                        help="our optimizers' unbounded_scale: 'auto' [default] or a number")
    parser.add_argument("--csv", default=None, help="write the full dataframe here")
    args = parser.parse_args(argv)
    ours = our_optimizers() if args.full else [n for n in our_optimizers() if n == "CobBO"]
    optimizers = args.optimizers or [*ours, *BASELINES]
    seeds = args.seeds if args.seeds is not None else (3 if args.full else 2)
    missing = [o for o in optimizers if o not in ng.optimizers.registry]
    if missing:
        parser.error(f"--optimizers: not in nevergrad's registry: {missing}")
    scale = args.unbounded_scale
    if scale is not None and scale != "auto":
        scale = float(scale)
    df = run_benchmark(optimizers, args.functions, args.dims, args.budget, range(seeds),
                       args.num_workers, args.useless, verbose=True, unbounded_scale=scale)
    if args.csv:
        df.to_csv(args.csv, index=False)
    with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
        print("\nmedian loss (rows: function, dimension; columns: optimizer)")
        print(summarize(df).to_string())
        print("\nmedian elapsed time per run [s]")
        print(df.groupby("optimizer_name")["elapsed_time"].median())
    for name in our_optimizers():
        if name in optimizers and "RandomSearch" in optimizers:
            print(f"{name} beats RandomSearch in {wins_against(df, name):.0%} of the cases")


if __name__ == "__main__":
    main()
