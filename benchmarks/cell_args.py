"""The command lines shared by the scripts here: reading `hdbo bench` cells at evaluations, and
running a bench problem with workers."""

from __future__ import annotations

import argparse
from pathlib import Path


def parse_cell_args(description: str, default_at: str) -> tuple[Path, range, list[int]]:
    """``(run folder, seeds, evaluations)`` from ``RUN [--seeds FIRST-LAST] [--at E1,E2]``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("run", type=Path, help="an hdbo bench output folder")
    parser.add_argument("--seeds", default="100-104", help="first-last seed")
    parser.add_argument("--at", default=default_at, help="evaluations to compare at")
    args = parser.parse_args()
    first, last = (int(s) for s in args.seeds.split("-"))
    return args.run, range(first, last + 1), [int(e) for e in args.at.split(",")]


def problem_parser(description: str, workers_help: str, default_workers: int
                   ) -> argparse.ArgumentParser:
    """``PROBLEM DIM BUDGET [--seeds FIRST-LAST] [--workers N]``; :func:`seed_range` reads
    ``--seeds``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("problem")
    parser.add_argument("dim", type=int)
    parser.add_argument("budget", type=int)
    parser.add_argument("--seeds", default="100-101", help="first-last seed")
    parser.add_argument("--workers", type=int, default=default_workers, help=workers_help)
    return parser


def seed_range(seeds: str) -> range:
    """The seeds of ``FIRST-LAST``."""
    first, last = (int(s) for s in seeds.split("-"))
    return range(first, last + 1)
