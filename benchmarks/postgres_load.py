"""Sampler overhead on one PostgreSQL study shared by many worker processes.

``--workers`` spawned processes (8) share one Optuna study on PostgreSQL
(a throwaway server from ``compat_tests/optuna/_postgres.py``, or
``--storage URL``) and run ``--trials`` (1000) trials of a ``--dim``-d (100)
sphere through ask/tell, with ``HDBOSampler(--algo)``, every worker with
engine seed 0. Per trial, each worker records:

* ``sampler``: wall and CPU (thread) seconds of ``sample_relative``, i.e.
  waiting for earlier asks of other workers, re-reading the study, building
  the history and pending points, the engine's ask and storing the proposal;
* ``ask``: wall seconds of ``study.ask()`` plus the ``--dim`` suggest calls
  (Optuna writes each parameter to the storage);
* ``tell``: wall seconds of ``study.tell``.

The table gives medians per block of 100 trial numbers, so the growth with
the number of finished trials shows (the sampler re-reads the study at every
ask). ``--algo random`` (default) is the cheapest configuration: the engine's
ask is a uniform draw, so what grows is the adapter and the storage, not a
model. Raw rows go to ``--out``/``trials.csv``.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 15 python benchmarks/postgres_load.py
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ["number", "worker", "sampler_wall_s", "sampler_cpu_s", "ask_wall_s", "tell_wall_s"]


def worker(url: str, study_name: str, algo: str, dim: int, w: int, claimed: Any, n_trials: int,
           out: str) -> None:
    """Ask, evaluate and tell until ``n_trials`` are handed out; write this worker's rows."""
    import optuna
    from optuna.samplers import RandomSampler

    from hdbo_adapters.optuna import HDBOSampler

    class TimedSampler(HDBOSampler):
        last = (float("nan"), float("nan"))

        def sample_relative(self, study: Any, trial: Any, search_space: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            values = super().sample_relative(study, trial, search_space)
            self.last = (time.perf_counter() - t0, time.thread_time() - c0)
            return values

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = TimedSampler(algo, seed=0, independent_sampler=RandomSampler(seed=w))
    study = optuna.load_study(study_name=study_name, storage=url, sampler=sampler)
    rows = []
    while True:
        with claimed.get_lock():
            if claimed.value >= n_trials:
                break
            claimed.value += 1
        sampler.last = (float("nan"), float("nan"))
        t0 = time.perf_counter()
        trial = study.ask()
        x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(dim)])
        t1 = time.perf_counter()
        study.tell(trial, float(np.sum((x - 0.3) ** 2)))
        rows.append([trial.number, w, *sampler.last, t1 - t0, time.perf_counter() - t1])
    with open(Path(out) / f"worker-{w}.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(rows)


def run(url: str, args: argparse.Namespace) -> list[list[float]]:
    """Create the study, run the workers, return all rows sorted by trial number."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study_name = f"load-{args.algo}-d{args.dim}-{int(time.time())}"
    optuna.create_study(study_name=study_name, storage=url)
    ctx = mp.get_context("spawn")
    claimed = ctx.Value("i", 0)
    procs = [ctx.Process(target=worker, args=(url, study_name, args.algo, args.dim, w, claimed,
                                              args.trials, str(args.out)))
             for w in range(args.workers)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        raise SystemExit(f"a worker failed: exit codes {[p.exitcode for p in procs]}")
    print(f"{args.trials} trials by {args.workers} workers in {time.perf_counter() - start:.0f} s")
    rows = [[float(v) for v in row] for w in range(args.workers)
            for row in csv.reader(open(args.out / f"worker-{w}.csv"))]
    return sorted(rows, key=lambda r: r[0])


def report(rows: list[list[float]], block: int) -> str:
    """Markdown table of medians (milliseconds) per block of trial numbers."""
    data = np.array(rows)
    lines = ["| trials | sampler wall ms | sampler CPU ms | ask + suggest wall ms | "
             "tell wall ms |", "|---|---|---|---|---|"]
    for lo in range(0, int(data[:, 0].max()) + 1, block):
        part = data[(data[:, 0] >= lo) & (data[:, 0] < lo + block)]
        med = [np.nanmedian(part[:, k]) * 1e3 for k in (2, 3, 4, 5)]
        lines.append(f"| {lo}-{lo + block - 1} | " + " | ".join(f"{m:.1f}" for m in med) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--algo", default="random", help="engine algorithm of HDBOSampler")
    parser.add_argument("--storage", default=None,
                        help="PostgreSQL URL, postgresql://user:password@host/dbname "
                             "(default: a throwaway local server)")
    parser.add_argument("--out", type=Path, default=Path("bench_out/postgres_load"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.storage:
        rows = run(args.storage, args)
    else:
        sys.path.insert(0, str(ROOT / "compat_tests" / "optuna"))
        from _postgres import ThrowawayPostgres

        with ThrowawayPostgres() as url:
            rows = run(url, args)
    with open(args.out / "trials.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(FIELDS)
        writer.writerows(rows)
    print(report(rows, 100))


if __name__ == "__main__":
    main()
