"""Rebuild the current benchmark cells from the committed archives.

``benchmarks/results/cells-*.tar.gz`` hold every ``hdbo bench`` cell that BENCHMARKS.md
uses, each archive holding runs of one date (ordered by the date in its name, then by the
number after it, ``-s7``; an archive without a number comes last on its date, and among
those one whose date carries an hour, ``cells-2026-11-26T22-...``, comes after those
without, in the order of the hours). A later archive's
cell replaces an earlier one of the same (suite, group, method, seed). This script extracts
them in order and copies each cell into ``OUT/bench-<suite>/cells/...``, beside the suite's
definition, where ``hdbo report OUT/bench-<suite>`` reads them, with the command that runs
the suite's missing cells into that folder (``command.txt``; the runs behind the archived
cells are listed in ``preface.md``). Runs kept in the archives
for the record but not in the tables (folders named ``*-go*``, ``*-pair`` and
``replaced``) are skipped, and so is a cell of a group the suite's definition does not
list (a run of other problems, sizes or budgets whose folder name starts with the suite's).

    python benchmarks/merge_cells.py hdbo_runs
"""

from __future__ import annotations

import argparse
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

from hdbo_cli.bench import load_suite

ARCHIVES = Path(__file__).with_name("results")
SUITES = ("hd", "d100", "bbob", "scale", "demo", "constrained")
_SKIP = re.compile(r"(-go\b|-go-|-pair$|^replaced$)")
_ORDER = re.compile(r"cells-(\d{4}-\d{2}-\d{2})(?:T(\d{2}))?(?:-s(\d+))?")
SUITE_FILES = Path(__file__).resolve().parents[1] / "hdbo_cli" / "suites"


def _suite_of(run_dir: str) -> str | None:
    """The suite a run folder's cells belong to (``bench-hd-s19`` -> ``hd``), or None."""
    if _SKIP.search(run_dir):
        return None
    name = run_dir.removeprefix("bench-")
    if name.startswith(("hd", "hopper", "rl")):
        return "hd"
    return next((s for s in SUITES if name.startswith(s)), None)


def archives() -> list[Path]:
    """The archives, oldest first."""
    def key(p: Path) -> tuple[str, int, int, str]:
        m = _ORDER.search(p.name)
        if m is None:
            return ("", 0, -1, p.name)
        number = int(m.group(3)) if m.group(3) else 10**6
        return (m.group(1), number, int(m.group(2)) if m.group(2) else -1, p.name)
    return sorted(ARCHIVES.glob("cells-*.tar.gz"), key=key)


def merge(out: Path) -> dict[str, int]:
    """Copy every kept cell into ``out/bench-<suite>`` beside the committed suite definition
    (``suite.toml``, which ``hdbo report`` reads); the number of cells per suite."""
    counts: dict[str, set[Path]] = {s: set() for s in SUITES}
    groups = {s: {c.group for c in load_suite(s).cells_by_seed} for s in SUITES}
    for suite in SUITES:
        (out / f"bench-{suite}").mkdir(parents=True, exist_ok=True)
        shutil.copy2(SUITE_FILES / f"{suite}.toml", out / f"bench-{suite}" / "suite.toml")
        (out / f"bench-{suite}" / "command.txt").write_text(
            f"hdbo bench --suite {suite} --out {out.as_posix()}/bench-{suite}\n")
    for archive in archives():
        with tempfile.TemporaryDirectory() as tmp, tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
            for cell in sorted(Path(tmp).glob("*/cells/*/*/seed*.*")):
                run_dir = cell.relative_to(tmp).parts[0]
                suite = _suite_of(run_dir)
                if suite is None:
                    continue
                rel = cell.relative_to(Path(tmp) / run_dir)
                if rel.parts[1] not in groups[suite]:
                    continue
                target = out / f"bench-{suite}" / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(cell, target)
                counts[suite].add(rel.with_suffix(""))
    return {s: len(c) for s, c in counts.items()}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``merge_cells.py [OUT]`` (``--help`` prints the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default="hdbo_runs", type=Path,
                        help="folder that receives bench-<suite>/ [hdbo_runs]")
    for suite, n in merge(parser.parse_args(argv).out).items():
        print(f"bench-{suite}: {n} cells")


if __name__ == "__main__":
    main()
