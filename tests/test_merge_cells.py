"""benchmarks/merge_cells.py, which rebuilds the cell folders of BENCHMARKS.md from the
committed archives: which archive comes later (its cells replace earlier ones) and which
run folders feed which suite."""

from __future__ import annotations

import importlib.util
import sys
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
