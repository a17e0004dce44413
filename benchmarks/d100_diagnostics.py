"""Why the centre-starting peers lead the ``d100`` suite: two probes.

``python benchmarks/d100_diagnostics.py geometry``
    For each d100 problem: the value at the box centre (where Nevergrad's
    NGOpt/CMA and Optuna's CmaEsSampler start), the best value on the box
    diagonal through the centre, and the best of 500 uniform random points.

``python benchmarks/d100_diagnostics.py cobbo-centre [--seed S] [--suite d100|bbob]``
    CobBO's best value per problem of the committed suite with and without
    the box centre as its first point (``init_centre``, the engine's default
    since the centre-first initial design). ``--suite bbob``, whose optima are
    off the centre and its diagonal, shows whether the centre helps in general.

Also prints which optimizer NGOpt selects for D = 100 and 500 evaluations.

Kept beside ``hdbo bench`` and ``hdbo reproduce``: neither measures the
suites' geometry (centre and diagonal values) nor CobBO with and without its
centre-first initial design.
"""

from __future__ import annotations

import argparse

import numpy as np

from hdbo_cli.bench import load_suite, make_bench_problem
from hdbo_cli.problems import make_problem
from hdbo_engine import CobBO

PROBLEMS = ["ackley", "levy", "rastrigin", "rosenbrock", "hartmann6"]
D, BUDGET = 100, 500


def geometry() -> None:
    """Centre, diagonal and random-search values of each problem."""
    print("| problem | f_min | centre | best on the diagonal | best of 500 random |")
    print("|---|---|---|---|---|")
    grid = np.linspace(0.0, 1.0, 3001)[:, None] * np.ones((1, D))
    for name in PROBLEMS:
        p = make_problem(name, D)
        centre = p.evaluate_unit(np.full((1, D), 0.5))[0]
        diagonal = p.evaluate_unit(grid).min()
        random = p.evaluate_unit(np.random.default_rng(0).random((BUDGET, D))).min()
        print(f"| {name} | {p.f_min:.4g} | {centre:.4g} | {diagonal:.4g} | {random:.4g} |")
    try:
        import nevergrad as ng
    except ImportError:
        return
    opt = ng.optimizers.NGOpt(parametrization=ng.p.Array(shape=(D,), lower=0, upper=1),
                              budget=BUDGET)
    print(f"\nNGOpt (D = {D}, budget {BUDGET}) runs: {opt._info()}; "
          f"first point {opt.ask().value[:3]} ...")


def cobbo_centre(seed: int, suite: str) -> None:
    """CobBO's best value per problem of ``suite``, without and with the centre first."""
    for name, dim, budget in sorted({(c.problem, c.dim, c.budget)
                                     for c in load_suite(suite).cells(seeds=1)}):
        p = make_bench_problem(name, dim)
        best = []
        for centre in (False, True):
            opt = CobBO(dim, seed=seed, budget=budget, init_centre=centre)
            while opt.n_told < budget:
                x = opt.ask()[0].x
                opt.tell(x, float(np.ravel(p.evaluate_unit(x))[0]))
            best.append(np.min(opt.y))
        print(f"{name}, D = {dim}: uniform design {best[0]:.4g}, centre first {best[1]:.4g}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("geometry")
    c = sub.add_parser("cobbo-centre")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--suite", choices=["d100", "bbob"], default="d100")
    args = parser.parse_args()
    if args.command == "geometry":
        geometry()
    else:
        cobbo_centre(args.seed, args.suite)


if __name__ == "__main__":
    main()
