"""The hand-written mutants of ``scripts/mutation_score.py`` still apply to the code: each
edit picks the expressions it expects in the function it names, the mutated module compiles
and differs from the code, and its test files exist. A rewording of the code that keeps its
behaviour (every local variable of the mutated functions renamed, the module reflowed and its
comments dropped) leaves each mutant applicable and the same bug."""

from __future__ import annotations

import ast
import importlib.util
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutation_score",
                                               ROOT / "scripts" / "mutation_score.py")
assert _spec is not None and _spec.loader is not None
mutation_score = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = mutation_score  # dataclasses look their module up there
_spec.loader.exec_module(mutation_score)


@cache
def _source(path: str) -> str:
    return (ROOT / path).read_text()


@cache
def _code_tree(path: str) -> str:
    return _tree(_source(path))


def _tree(source: str) -> str:
    return ast.dump(ast.parse(source))


def _reworded(source: str, scopes: list[str], names: set[str]) -> str:
    """``source`` with ``names`` renamed inside ``scopes``, reflowed by ``ast.unparse``."""
    tree = ast.parse(source)
    for scope in scopes:
        for node in ast.walk(mutation_score.scope_node(tree, scope)):
            if isinstance(node, ast.Name) and node.id in names:
                node.id += "_renamed"
    return ast.unparse(tree)


@pytest.mark.parametrize("mutant", mutation_score.MUTANTS, ids=lambda m: m.name)
def test_each_mutant_applies_and_changes_the_code(mutant) -> None:
    source = _source(mutant.path)
    mutated = mutation_score.mutate(source, mutant)
    compile(mutated, mutant.path, "exec")
    assert _tree(mutated) != _code_tree(mutant.path)
    assert all((ROOT / f).is_file() for f in mutant.tests)


def _excerpt(source: str, scopes: list[str]) -> str:
    """The module-level statements that hold ``scopes``, a class cut to the named methods."""
    body: list[ast.stmt] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            node.body = [m for m in node.body if f"{node.name}.{getattr(m, 'name', '')}" in scopes]
        names = {getattr(node, "name", None), *(getattr(t, "id", None)
                                                for t in getattr(node, "targets", []))}
        if names & set(scopes) or isinstance(node, ast.ClassDef) and node.body:
            body.append(node)
    return ast.unparse(ast.Module(body, []))


@pytest.mark.parametrize("mutant", mutation_score.MUTANTS, ids=lambda m: m.name)
def test_each_mutant_is_the_same_bug_after_a_rewording(mutant) -> None:
    scopes = [edit.scope for edit in mutant.edits]
    source = _excerpt(_source(mutant.path), scopes)
    tree = ast.parse(source)
    names = {node.id for scope in scopes
             for node in ast.walk(mutation_score.scope_node(tree, scope))
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    assert names or scopes == ["COBYLA_RHOBEG"]  # a constant has no local variables
    reworded = _reworded(source, scopes, names)
    assert _tree(mutation_score.mutate(reworded, mutant)) == _tree(
        _reworded(mutation_score.mutate(source, mutant), scopes, names))


def test_a_mutant_that_no_longer_matches_stops_with_its_scope() -> None:
    mutant = mutation_score.MUTANTS[0]
    with pytest.raises(mutation_score.MutantError, match="MSUCB._maximize"):
        mutation_score.mutate(_source(mutant.path).replace("ucb(mean", "lcb(mean"), mutant)
    with pytest.raises(mutation_score.MutantError, match="no 'MSUCB._maximize'"):
        mutation_score.mutate("x = 1\n", mutant)


def test_mutant_names_are_distinct() -> None:
    names = [m.name for m in mutation_score.MUTANTS]
    assert len(names) == len(set(names))
