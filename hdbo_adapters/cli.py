"""The ``hdbo`` command: ``run`` one optimisation, ``demo`` a short comparison.

``hdbo run --algo msucb --problem ackley --dim 100 --budget 200 --seed 0 --out DIR``
writes ``DIR/trajectory.csv`` (one row per evaluation: value, best so far,
ask time), ``DIR/summary.json`` and ``DIR/convergence.png`` (with matplotlib).

``hdbo bench --suite d100 --out DIR`` runs a benchmark suite against the peer
libraries (:mod:`hdbo_adapters.bench`), resumably; ``hdbo report DIR`` writes
its tables as Markdown and ``hdbo plot DIR`` its convergence and time plots.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from hdbo_engine.algorithms import available, get_algorithm
from hdbo_engine.problems import make_problem, problem_names

from .bench import suite_names


def run_engine(algo: str, problem: str, dim: int, budget: int, seed: int,
               progress: bool = True, **algo_kwargs: object) -> dict:
    """Run one engine ask/tell loop on a benchmark problem; return the trajectory."""
    prob = make_problem(problem, dim)
    opt = get_algorithm(algo)(dim, seed=seed, budget=budget, **algo_kwargs)
    values, ask_times = [], []
    start = time.perf_counter()
    with tqdm(total=budget, desc=f"{algo} {problem}-{dim}D", disable=not progress) as bar:
        for _ in range(budget):
            t0 = time.perf_counter()
            (proposal,) = opt.ask()
            ask_times.append(time.perf_counter() - t0)
            value = float(prob.evaluate_unit(proposal.x)[0])
            opt.tell(proposal.x, value)
            values.append(value)
            bar.update(1)
            bar.set_postfix(best=f"{min(values):.5g}")
    return {
        "algo": algo, "problem": problem, "dim": dim, "budget": budget, "seed": seed,
        "values": values, "ask_times": ask_times, "f_min": prob.f_min,
        "best": float(np.min(values)), "total_time": time.perf_counter() - start,
    }


def write_run(result: dict, out: Path) -> None:
    """Trajectory CSV, summary JSON and (if matplotlib is installed) a convergence PNG."""
    out.mkdir(parents=True, exist_ok=True)
    best = np.minimum.accumulate(result["values"])
    with open(out / "trajectory.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["evaluation", "value", "best_so_far", "ask_time_s"])
        for i, (v, b, t) in enumerate(zip(result["values"], best, result["ask_times"],
                                          strict=True)):
            writer.writerow([i + 1, repr(v), repr(float(b)), f"{t:.6f}"])
    summary = {k: v for k, v in result.items() if k not in ("values", "ask_times")}
    summary["median_ask_time_s"] = float(np.median(result["ask_times"]))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'hdbo[plot]'): no convergence plot")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(np.arange(1, len(best) + 1), best - result["f_min"], label=result["algo"])
    ax.set_yscale("log")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("best value - f_min")
    ax.set_title(f"{result['problem']} D={result['dim']} seed={result['seed']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "convergence.png", dpi=110)
    plt.close(fig)


def _cmd_run(args: argparse.Namespace) -> int:
    if args.frontend == "optuna":
        from .optuna_run import run_optuna

        return run_optuna(args)
    result = run_engine(args.algo, args.problem, args.dim, args.budget, args.seed,
                        progress=not args.quiet)
    write_run(result, Path(args.out))
    print(f"{args.algo} on {args.problem}-{args.dim}D: best {result['best']:.6g} "
          f"(f_min {result['f_min']:.6g}) in {result['total_time']:.1f}s -> {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    problem, dim, budget = "ackley", 50, args.budget
    seeds = list(range(args.seeds))
    print(f"hdbo demo: MS-UCB vs random search vs full-space GP-UCB on {problem}-{dim}D, "
          f"{budget} evaluations, seeds {seeds} (minimisation, f_min = 0)")
    rows = []
    for algo in ("random", "gpucb", "msucb"):
        runs = [run_engine(algo, problem, dim, budget, seed, progress=not args.quiet)
                for seed in seeds]
        for seed, result in zip(seeds, runs, strict=True):
            write_run(result, Path(args.out) / algo / f"seed{seed}")
        rows.append((algo, float(np.median([r["best"] for r in runs])),
                     float(np.median([t for r in runs for t in r["ask_times"]])),
                     sum(r["total_time"] for r in runs)))
    print(f"\n{'method':<8} {'median best':>12} {'median ask [s]':>15} {'total [s]':>10}")
    for algo, best, ask, total in rows:
        print(f"{algo:<8} {best:>12.4f} {ask:>15.4f} {total:>10.1f}")
    print(f"\ntrajectories and plots in {args.out}/")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import load_suite, run_suite
    from .bench_report import markdown_report

    try:
        suite = load_suite(args.suite)
        out = Path(args.out or f"hdbo_runs/bench-{suite.name}")
        methods = None if args.methods is None else args.methods.split(",")
        run_suite(suite, out, seeds=args.seeds, jobs=args.jobs, progress=not args.quiet,
                  command=shlex.join(["hdbo", *args.argv]), methods=methods)
    except ValueError as err:
        print(f"hdbo bench: {err}", file=sys.stderr)
        return 2
    (out / "report.md").write_text("# Benchmarks\n\n" + markdown_report(out))
    print(f"results in {out}/ (report.md; `hdbo plot {out}` for plots)")
    return 0


def _bench_dirs(command: str, dirs: list[str]) -> list[Path] | None:
    paths = [Path(d) for d in dirs]
    for path in paths:
        if not (path / "cells").is_dir():
            print(f"hdbo {command}: {path} has no cells/ folder (not an `hdbo bench` output)",
                  file=sys.stderr)
            return None
    return paths


def _cmd_report(args: argparse.Namespace) -> int:
    from .bench_report import markdown_report

    dirs = _bench_dirs("report", args.dirs)
    if dirs is None:
        return 2
    target = Path(args.output) if args.output else dirs[0] / "report.md"
    plots = [None] * len(dirs) if args.plots_dir is None else [
        Path(args.plots_dir) / d.name for d in dirs]
    sections = [markdown_report(d, p, relative_to=target.parent)
                for d, p in zip(dirs, plots, strict=True)]
    preface = Path(args.preface).read_text().rstrip() + "\n\n" if args.preface else ""
    target.write_text("# Benchmarks\n\nGenerated by `hdbo report` from `hdbo bench` runs; do "
                      "not edit by hand.\n\n" + preface + "\n".join(sections))
    print(f"wrote {target}")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from .bench_report import plot_results

    dirs = _bench_dirs("plot", [args.dir])
    if dirs is None:
        return 2
    for path in plot_results(dirs[0], None if args.out_dir is None else Path(args.out_dir)):
        print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hdbo", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one algorithm on a benchmark problem")
    run.add_argument("--algo", default="msucb", choices=available())
    run.add_argument("--problem", default="ackley", choices=problem_names())
    run.add_argument("--dim", type=int, default=100)
    run.add_argument("--budget", type=int, default=200)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out", default="hdbo_runs/run")
    run.add_argument("--frontend", default="engine", choices=["engine", "optuna"],
                     help="engine ask/tell loop, or an Optuna study (see --storage)")
    run.add_argument("--storage", default=None, help="Optuna storage URL (frontend optuna)")
    run.add_argument("--study-name", default=None, help="Optuna study name (frontend optuna)")
    run.add_argument("--workers", type=int, default=1, help="worker processes (frontend optuna)")
    run.add_argument("--heartbeat", type=int, default=30,
                     help="seconds between trial heartbeats on RDB storages; a dead worker's "
                          "trial fails after twice that (frontend optuna; 0 disables)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_cmd_run)
    demo = sub.add_parser("demo", help="MS-UCB vs random vs GP-UCB on Ackley-50D (~2 min)")
    demo.add_argument("--budget", type=int, default=150)
    demo.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1 (median reported)")
    demo.add_argument("--out", default="hdbo_runs/demo")
    demo.add_argument("--quiet", action="store_true")
    demo.set_defaults(func=_cmd_demo)
    bench = sub.add_parser("bench", help="run a benchmark suite against peer optimizers "
                                         "(resumable)")
    bench.add_argument("--suite", default="d100",
                       help=f"a committed suite ({', '.join(suite_names())}) "
                            "or a path to a suite .toml")
    bench.add_argument("--seeds", type=int, default=None,
                       help="seeds 0 .. N-1 (default: the suite's)")
    bench.add_argument("--jobs", type=int, default=1, help="cells run in parallel")
    bench.add_argument("--methods", default=None,
                       help="comma-separated subset of the suite's methods (default: all)")
    bench.add_argument("--out", default=None, help="output folder (default hdbo_runs/bench-SUITE)")
    bench.add_argument("--quiet", action="store_true")
    bench.set_defaults(func=_cmd_bench)
    report = sub.add_parser("report", help="Markdown tables from an `hdbo bench` folder")
    report.add_argument("dirs", nargs="+", metavar="DIR", help="`hdbo bench` output folders")
    report.add_argument("--output", default=None,
                        help="file to write (default: report.md in the first DIR)")
    report.add_argument("--preface", default=None,
                        help="a Markdown file to put before the tables (status, caveats)")
    report.add_argument("--plots-dir", default=None,
                        help="link PLOTS_DIR/<DIR name>/<group>.png (default DIR/plots)")
    report.set_defaults(func=_cmd_report)
    plot = sub.add_parser("plot", help="convergence and time-per-ask PNGs of an `hdbo bench` "
                                       "folder")
    plot.add_argument("dir")
    plot.add_argument("--out-dir", default=None, help="folder for the PNGs (default DIR/plots)")
    plot.set_defaults(func=_cmd_plot)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    for name in ("dim", "budget", "seeds", "jobs"):
        value = getattr(args, name, 1)
        if value is not None and value < 1:
            print(f"hdbo: --{name} must be >= 1", file=sys.stderr)
            return 2
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
