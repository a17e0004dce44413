"""The hand-written mutants of ``benchmarks/mutation_score.py`` still apply to the code: each
replacement's text occurs exactly once in its file, and its test files exist. A mutant whose
text the code no longer contains stops the mutation run instead of scoring."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutation_score",
                                               ROOT / "benchmarks" / "mutation_score.py")
assert _spec is not None and _spec.loader is not None
mutation_score = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = mutation_score  # dataclasses look their module up there
_spec.loader.exec_module(mutation_score)


@pytest.mark.parametrize("mutant", mutation_score.MUTANTS, ids=lambda m: m.name)
def test_each_mutant_applies_once_and_names_existing_tests(mutant) -> None:
    text = (ROOT / mutant.path).read_text()
    for old, new in mutant.replacements:
        assert text.count(old) == 1, f"{mutant.name}: {old!r}"
        assert new != old
    assert all((ROOT / f).is_file() for f in mutant.tests)


def test_mutant_names_are_distinct() -> None:
    names = [m.name for m in mutation_score.MUTANTS]
    assert len(names) == len(set(names))
