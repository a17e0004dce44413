"""The command lines shared by the scripts here: reading `hdbo bench` cells at evaluations, and
running a bench problem with workers."""

from __future__ import annotations

import argparse
from pathlib import Path


def parse_cell_args(description: str, default_at: str | None) -> tuple[Path, range, list[int]]:
    """``(run folder, seeds, evaluations)`` from ``RUN [--seeds FIRST-LAST] [--at E1,E2]``;
    without ``default_at`` there is no ``--at`` and no evaluations."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("run", type=Path, help="an hdbo bench output folder")
    parser.add_argument("--seeds", default="100-104", help="first-last seed")
    if default_at is not None:
        parser.add_argument("--at", default=default_at, help="evaluations to compare at")
    args = parser.parse_args()
    at = [] if default_at is None else [int(e) for e in args.at.split(",")]
    return args.run, seed_range(args.seeds), at


def problem_parser(description: str, workers_help: str | None = None, default_workers: int = 1
                   ) -> argparse.ArgumentParser:
    """``PROBLEM DIM BUDGET [--seeds FIRST-LAST] [--workers N]`` (``--workers`` only with
    ``workers_help``); :func:`seed_range` reads ``--seeds``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("problem")
    parser.add_argument("dim", type=int)
    parser.add_argument("budget", type=int)
    parser.add_argument("--seeds", default="100-101", help="first-last seed")
    if workers_help is not None:
        parser.add_argument("--workers", type=int, default=default_workers, help=workers_help)
    return parser


def seed_range(seeds: str) -> range:
    """The seeds of ``FIRST-LAST``."""
    first, last = (int(s) for s in seeds.split("-"))
    return range(first, last + 1)
