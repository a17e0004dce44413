"""The hdbo command: run, demo, bench, report, plot and reproduce.

  hdbo run --problem ackley --dim 100 --budget 200 --seed 0 --out DIR
      writes DIR/trajectory.csv (one row per evaluation: value, best so far,
      ask time), DIR/summary.json and DIR/convergence.png (with matplotlib).
  hdbo demo
      compares Auto with Optuna's TPE and GPSampler and random search in one figure.
  hdbo bench --suite d100 --out DIR
      runs a benchmark suite against the peer libraries, resumably.
  hdbo report DIR
      writes the suite's tables as Markdown (--spread: prints per group how firmly
      the seeds decide Auto's floor); hdbo plot DIR draws its convergence and
      time plots.
  hdbo reproduce NAME
      runs one paper's headline experiment (--list names them) and writes its
      JSON and PNG.

A mistake in the command line (a bad value, a problem that needs a larger
--dim, a folder that cannot be created) is reported as one line on stderr
naming the option, with exit code 2, before anything runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import numpy as np
from tqdm.auto import tqdm

from hdbo_cli.problems import make_problem, problem_names
from hdbo_engine import available

from .bench import suite_names
from .kernels import kernels_pinned, pinned_environment
from .runs import minimum_text, plot_comparison, recommended_text, run_method, write_run

DEMO_PROBLEM, DEMO_DIM = "hartmann6", 50
# Auto, the peer users reach for first (TPE), the strongest peer on this problem (GPSampler,
# by `hdbo bench --suite demo --seeds 5`: BENCHMARKS.md, suite `demo`) and random search.
DEMO_METHODS = ("auto", "optuna-tpe", "optuna-gp", "random")


class UsageError(Exception):
    """A mistake in the command line: one line on stderr, exit code 2."""


def _as_option(message: str) -> str:
    """``'dim: needs ...'`` (the engine's form) -> ``'--dim: needs ...'``."""
    match = re.match(r"([a-z][a-z_]*): ", message)
    if match is None:
        return message
    return f"--{match[1].replace('_', '-')}: {message[match.end():]}"


def _make_dir(path: Path, option: str) -> Path:
    """Create the folder ``path`` (with its parents) or raise a UsageError naming ``option``."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"{option}: cannot create the folder {str(path)!r} "
                         f"({err.strerror or err})") from err
    return path


@contextmanager
def _user_errors() -> Iterator[None]:
    """Report a ValueError raised inside (the engine's and adapters' form for a bad argument)
    as a UsageError naming the option."""
    try:
        yield
    except ValueError as err:
        raise UsageError(_as_option(str(err))) from err


def _check_storage(url: str) -> None:
    """Open the Optuna storage ``url`` once; a UsageError naming --storage if it fails."""
    from .optuna_run import make_storage

    try:
        make_storage(url)
    except ValueError as err:
        raise UsageError(_as_option(str(err))) from err
    except Exception as err:  # SQLAlchemy's and the journal's errors for what they cannot open
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UsageError(f"--storage: cannot open {url!r} ({reason})") from err


def _cmd_run(args: argparse.Namespace) -> int:
    with _user_errors():
        make_problem(args.problem, args.dim)  # e.g. hartmann6 needs --dim >= 6
    if args.frontend != "optuna":
        for option, given in (("--storage", args.storage is not None),
                              ("--study-name", args.study_name is not None),
                              ("--workers", args.workers != 1)):
            if given:
                raise UsageError(f"{option}: only with --frontend optuna")
    if args.storage is not None:
        _check_storage(args.storage)
    out = _make_dir(Path(args.out), "--out")
    if args.frontend == "optuna":
        from .optuna_run import run_optuna

        with _user_errors():  # run_optuna raises ValueError for bad arguments only
            return run_optuna(args)
    with tqdm(total=args.budget, desc=f"{args.algo} {args.problem}-{args.dim}D",
              disable=args.quiet) as bar:
        result = run_method(args.algo, args.problem, args.dim, args.budget, args.seed, bar)
    write_run(result, out)
    print(f"{args.algo} on {args.problem}-{args.dim}D: best {result['best']:.6g}"
          f"{minimum_text(result['f_min'])}"
          f"{recommended_text(result.get('recommended_true_value'))}"
          f" in {result['total_time']:.1f} s -> {out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    out = _make_dir(Path(args.out), "--out")
    methods = [m for m in DEMO_METHODS
               if not m.startswith("optuna-") or importlib.util.find_spec("optuna")]
    if len(methods) < len(DEMO_METHODS):
        print("optuna not installed (pip install 'hdbo[optuna]'): no TPE or GPSampler in "
              "this demo")
    seeds = list(range(args.seeds))
    f_min = make_problem(DEMO_PROBLEM, DEMO_DIM).f_min
    print(f"hdbo demo: Auto vs Optuna TPE (multivariate) and GPSampler vs random search on "
          f"Hartmann6 embedded in {DEMO_DIM}-D (6 effective coordinates, minimum {f_min:.4f} "
          f"away from "
          f"the box centre), {args.budget} evaluations, seeds {seeds[0]}-{seeds[-1]}")
    if kernels_pinned():
        print("(numerical kernels held to x86-64-v2, so that every x86-64 CPU prints this "
              "table: hdbo_cli/kernels.py)")
    print(f"\n{'method':<11} {'median best [IQR]':>28} {'CPU ms/eval':>12} {'CPU s':>6}")
    print("(CPU: this process's CPU time for the method's runs, optimizer and objective)")
    values: dict[str, list[np.ndarray]] = {}
    with tqdm(total=len(methods) * len(seeds) * args.budget, unit="eval", leave=False,
              disable=args.quiet) as bar:
        for method in methods:
            runs = []
            for seed in seeds:
                bar.set_description(f"{method} seed {seed}")
                runs.append(run_method(method, DEMO_PROBLEM, DEMO_DIM, args.budget, seed, bar))
                write_run(runs[-1], out / method / f"seed{seed}", plot=False)
            values[method] = [np.asarray(r["values"]) for r in runs]
            q1, med, q3 = np.percentile([r["best"] for r in runs], [25, 50, 75])
            cpu = sum(r["cpu_time"] for r in runs)
            bar.write(f"{method:<11} {med:>10.4f} [{q1:.4f}, {q3:.4f}] "
                      f"{1e3 * cpu / (len(runs) * args.budget):>12.1f} {cpu:>6.1f}")
    figure = plot_comparison(values, f_min, f"{DEMO_PROBLEM} in {DEMO_DIM}-D, best so far",
                             out / "demo.png")
    if figure is not None:
        print(f"\nfigure: {figure}")
    print(f"per-run trajectory.csv and summary.json: {out}/<method>/seed<k>/")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import load_suite, run_suite
    from .report import markdown_report

    with _user_errors():  # cells run in worker processes: only argument errors surface here
        suite = load_suite(args.suite)
        methods = None if args.methods is None else args.methods.split(",")
        suite.cells(args.seeds, methods)  # an unknown --methods name fails here, before --out
        out = _make_dir(Path(args.out or f"hdbo_runs/bench-{suite.name}"), "--out")
        run_suite(suite, out, seeds=args.seeds, jobs=args.jobs, progress=not args.quiet,
                  command=shlex.join(["hdbo", *args.argv]),
                  methods=methods, first_seed=args.first_seed)
    (out / "report.md").write_text("# Benchmarks\n\n" + markdown_report(out))
    print(f"results in {out}/ (report.md; `hdbo plot {out}` for plots)")
    return 0


def _bench_dirs(dirs: list[str]) -> list[Path]:
    """The folders as paths; a UsageError unless each is an ``hdbo bench`` output."""
    paths = [Path(d) for d in dirs]
    for path in paths:
        if not (path / "cells").is_dir():
            raise UsageError(f"DIR: {str(path)!r} has no cells/ folder (expected an "
                             "`hdbo bench` output folder)")
    return paths


def _cmd_report(args: argparse.Namespace) -> int:
    from .floor_spread import spread_lines
    from .report import markdown_report

    dirs = _bench_dirs(args.dirs)
    if args.spread:
        for d in dirs:
            for line in spread_lines(d):
                print(line, flush=True)
        return 0
    target = Path(args.output) if args.output else dirs[0] / "report.md"
    _make_dir(target.parent, "--output")
    try:
        preface = Path(args.preface).read_text().rstrip() + "\n\n" if args.preface else ""
    except OSError as err:
        raise UsageError(f"--preface: cannot read {args.preface!r} "
                         f"({err.strerror or err})") from err
    plots = [None] * len(dirs) if args.plots_dir is None else [
        Path(args.plots_dir) / d.name for d in dirs]
    sections = [markdown_report(d, p, relative_to=target.parent)
                for d, p in zip(dirs, plots, strict=True)]
    target.write_text("# Benchmarks\n\nGenerated by `hdbo report` from `hdbo bench` runs; do "
                      "not edit by hand.\n\n" + preface + "\n".join(sections))
    print(f"wrote {target}")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from .report import plot_results

    (path,) = _bench_dirs([args.dir])
    plot_dir = _make_dir(Path(args.out_dir) if args.out_dir else path / "plots", "--out-dir")
    for figure in plot_results(path, plot_dir):
        print(figure)
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import REPRODUCTIONS, run_reproduction

    if args.list:
        for entry in REPRODUCTIONS.values():
            print(f"{entry.name:<15} {entry.paper}: {entry.claim}")
        return 0
    if args.name not in REPRODUCTIONS:
        shown = "missing" if args.name is None else f"unknown name {args.name!r}"
        raise UsageError(f"NAME: {shown}; expected one of {', '.join(REPRODUCTIONS)} "
                         "(or --list)")
    out = _make_dir(Path(args.out), "--out")
    json_path, png_path = run_reproduction(args.name, args.quick, out)
    print(f"{args.name}: {json_path} {png_path}")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``hdbo run: argument --dim: expected ...``), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Appends ``(default: ...)`` to every option's help that has a default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = action.default is not None and action.default is not False  # 0 is shown
        if (action.option_strings and shown and action.default != argparse.SUPPRESS
                and "%(default)" not in text):
            text += " (default: %(default)s)"
        return text


def _int_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``, else an error naming what is expected."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The ``hdbo`` argument parser with its six subcommands."""
    positive, non_negative = _int_at_least(1), _int_at_least(0)
    parser = _Parser(prog="hdbo", description=__doc__, formatter_class=_HelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, formatter_class=_HelpFormatter)

    run = command("run", "run one algorithm on a benchmark problem; writes trajectory.csv, "
                         "summary.json and convergence.png to --out")
    run.add_argument("--algo", default="auto", choices=available(),
                     help="engine algorithm: auto (the recommended one), one of the four it "
                          "combines, or the papers' baselines gpucb and random")
    run.add_argument("--problem", default="ackley", choices=problem_names(),
                     help="benchmark function; branin and camelback "
                          "need --dim >= 2, hartmann6 --dim >= 6")
    run.add_argument("--dim", type=positive, default=100, help="number of parameters D")
    run.add_argument("--budget", type=positive, default=200, help="number of evaluations")
    run.add_argument("--seed", type=non_negative, default=0,
                     help="random seed of the method and of the problem's instance (the "
                          "optimum of shifted_/rotated_ problems, a task's episodes); same "
                          "seed, same run")
    run.add_argument("--out", default="hdbo_runs/run", help="output folder (created if needed)")
    run.add_argument("--frontend", default="engine", choices=["engine", "optuna"],
                     help="engine: the engine's ask/tell loop in this process; optuna: an "
                          "Optuna study with --workers processes sharing --storage")
    run.add_argument("--storage", default=None,
                     help="Optuna storage: an RDB URL (sqlite:///hdbo.db, postgresql://...) or "
                          "a journal file path (.log, .jsonl, .journal); frontend optuna only "
                          "(default: sqlite file OUT/optuna.db)")
    run.add_argument("--study-name", default=None,
                     help="Optuna study name, resumed if it exists; frontend optuna only "
                          "(default: ALGO-PROBLEM-dDIM-sSEED)")
    run.add_argument("--workers", type=positive, default=1,
                     help="worker processes sharing the study (frontend optuna only)")
    run.add_argument("--heartbeat", type=non_negative, default=30,
                     help="seconds between trial heartbeats on RDB storages; a dead worker's "
                          "trial fails after twice that (frontend optuna; 0 disables)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_cmd_run)

    demo = command("demo", f"Auto vs Optuna TPE and GPSampler vs random search on Hartmann6 "
                           f"embedded in {DEMO_DIM}-D: a table and one figure (demo.png)")
    demo.add_argument("--budget", type=positive, default=120,
                      help="evaluations per run")
    demo.add_argument("--seeds", type=positive, default=5,
                      help="runs per method, seeds 0 .. N-1 (median and IQR reported)")
    demo.add_argument("--out", default="hdbo_runs/demo",
                      help="output folder: demo.png and METHOD/seedK/{trajectory.csv,"
                           "summary.json}")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_cmd_demo)

    bench = command("bench", "run a benchmark suite against peer optimizers (resumable: "
                             "re-run the same command to continue)")
    bench.add_argument("--suite", default="d100",
                       help=f"a committed suite ({', '.join(suite_names())}) "
                            "or a path to a suite .toml")
    bench.add_argument("--seeds", type=positive, default=None,
                       help="how many seeds N, from --first-seed on (default: the suite's)")
    bench.add_argument("--first-seed", type=non_negative, default=0,
                       help="start the seeds here: K .. K+N-1 (a seed is the problem "
                            "instance and the methods' seed; 100 gives instances never "
                            "used before)")
    bench.add_argument("--jobs", type=positive, default=1, help="cells run in parallel")
    bench.add_argument("--methods", default=None,
                       help="comma-separated subset of the suite's methods (default: all)")
    bench.add_argument("--out", default=None,
                       help="output folder (default: hdbo_runs/bench-SUITE)")
    bench.add_argument("--quiet", action="store_true", help="no progress bar")
    bench.set_defaults(func=_cmd_bench)

    report = command("report", "Markdown tables from hdbo bench output folders")
    report.add_argument("dirs", nargs="+", metavar="DIR", help="hdbo bench output folders")
    report.add_argument("--output", default=None,
                        help="file to write (default: report.md in the first DIR)")
    report.add_argument("--preface", default=None,
                        help="a Markdown file to put before the tables (status, caveats)")
    report.add_argument("--plots-dir", default=None,
                        help="link the figures PLOTS_DIR/<DIR name>/<group>.png "
                             "(default: DIR/plots)")
    report.add_argument("--spread", action="store_true",
                        help="write no tables; print per group how firmly the seeds decide "
                             "Auto's floor (margins in robust standard deviations, a rank "
                             "test, bootstrap shares, the seeds a test would need, stalls)")
    report.set_defaults(func=_cmd_report)

    plot = command("plot", "convergence and time-per-ask PNGs of an hdbo bench folder")
    plot.add_argument("dir", metavar="DIR", help="an hdbo bench output folder")
    plot.add_argument("--out-dir", default=None, help="folder for the PNGs (default: DIR/plots)")
    plot.set_defaults(func=_cmd_plot)

    reproduce = command("reproduce", "one paper's headline experiment with the paper presets: "
                                     "NAME.json (its numbers) and NAME.png in --out")
    reproduce.add_argument("name", nargs="?", metavar="NAME",
                           help="the experiment (see --list)")
    reproduce.add_argument("--list", action="store_true", help="list the experiments and exit")
    reproduce.add_argument("--quick", action="store_true",
                           help="a reduced version (fewer iterations and seeds, under a minute)")
    reproduce.add_argument("--out", default="hdbo_runs/reproduce", help="output folder")
    reproduce.set_defaults(func=_cmd_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``hdbo`` command; returns the exit code."""
    from_command_line = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse after --help (0) or a usage error (2, one line)
        return int(stop.code or 0)
    args.argv = argv
    if args.command == "demo" and from_command_line and not kernels_pinned():
        # the same table on every x86-64 CPU (hdbo_cli.kernels): restart with pinned kernels
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, "-m", "hdbo_cli", *argv],
                  pinned_environment())
    try:
        return args.func(args)
    except UsageError as err:
        print(f"hdbo {args.command}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
