"""benchmarks/merge_cells.py, which rebuilds the cell folders of BENCHMARKS.md from the
committed archives: which archive comes later (its cells replace earlier ones) and which
run folders feed which suite."""

from __future__ import annotations

import importlib.util
import sys
import tarfile
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "merge_cells.py"
_SPEC = importlib.util.spec_from_file_location("merge_cells", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
merge_cells = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = merge_cells
_SPEC.loader.exec_module(merge_cells)


def test_archives_are_ordered_by_date_then_number_then_hour(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["cells-2026-11-26T23-replicate.tar.gz", "cells-2026-11-26-auto.tar.gz",
             "cells-2026-11-26-s20.tar.gz", "cells-2026-11-25-s19.tar.gz",
             "cells-2026-11-26T09-flat.tar.gz", "cells-2026-11-23-s7-hd.tar.gz",
             "cells-2026-11-23-s10-hd.tar.gz"]
    for name in names:
        (tmp_path / name).touch()
    monkeypatch.setattr(merge_cells, "ARCHIVES", tmp_path)
    assert [p.name for p in merge_cells.archives()] == [
        "cells-2026-11-23-s7-hd.tar.gz", "cells-2026-11-23-s10-hd.tar.gz",
        "cells-2026-11-25-s19.tar.gz", "cells-2026-11-26-s20.tar.gz",
        "cells-2026-11-26-auto.tar.gz", "cells-2026-11-26T09-flat.tar.gz",
        "cells-2026-11-26T23-replicate.tar.gz"]


@pytest.mark.parametrize(("run_dir", "suite"), [
    ("bench-hd-s19", "hd"), ("bench-hopper-2000", "hd"), ("bench-rl", "hd"),
    ("bench-d100", "d100"), ("bench-bbob-s8", "bbob"), ("bench-scale5000", "scale"),
    ("bench-constrained", "constrained"), ("bench-hd-go", None), ("bench-hd-pair", None),
    ("replaced", None), ("bench-flat", None)])
def test_run_folders_feed_their_suite_and_the_record_only_runs_none(run_dir: str,
                                                                   suite: str | None) -> None:
    assert merge_cells._suite_of(run_dir) == suite


def test_help_prints_usage_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        merge_cells.main(["--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out
    assert not any(tmp_path.iterdir())  # no folder named --help


def test_only_the_groups_a_suite_lists_enter_its_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder named like the `bbob` suite's but holding BBOB f3 as well as f1: f1 at
    D = 20 with 100 evaluations is a group of `bbob` (hdbo_cli/suites/bbob.toml) and is
    merged; f3 is not one, and neither is f1 at D = 10."""
    run = tmp_path / "src" / "bench-bbob-heldout"
    for group in ("bbob-f1-D20-n100", "bbob-f3-D20-n100", "bbob-f1-D10-n100"):
        cell = run / "cells" / group / "auto"
        cell.mkdir(parents=True)
        (cell / "seed100.csv").write_text("evaluation,value,best_so_far\n1,1.0,1.0\n")
    archives = tmp_path / "results"
    archives.mkdir()
    with tarfile.open(archives / "cells-2026-12-01-heldout.tar.gz", "w:gz") as tar:
        tar.add(run, arcname=run.name)
    monkeypatch.setattr(merge_cells, "ARCHIVES", archives)
    counts = merge_cells.merge(tmp_path / "out")
    assert counts["bbob"] == 1
    merged = sorted(p.name for p in (tmp_path / "out" / "bench-bbob" / "cells").iterdir())
    assert merged == ["bbob-f1-D20-n100"]

