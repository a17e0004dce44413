"""The command line shared by the scripts here that read `hdbo bench` cells at evaluations."""

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
