"""Mutation score of the algorithm tests: deliberate bugs, and which test catches each.

Each mutant changes one rule in a temporary copy of the repository. It is located in the
code's syntax tree, not its text: an :class:`Edit` names the function that holds the rule
(``Class.method``, a module-level function, or a module-level constant) and picks the
expressions to replace inside it by what they are (an operator, a call of a named function,
a named constant or attribute), and builds each replacement from the expression it
replaces. Renaming a local variable, reflowing a line or changing a comment leaves every
mutant applicable and the same bug; only the replaced expressions' text changes in the
copy. An edit that picks more or fewer expressions than it expects stops the run.

The mutant's relevant test files then run in the copy
(``python -m pytest <files> -x -q -n 0`` with ``PYTHONPATH`` pointing at the copy); the first
failing test is the one that caught it. A mutant whose files all pass survived. Before the
mutants, the same files run on the unmodified copy: they must pass, or the score means
nothing.

Usage::

    python scripts/mutation_score.py              # every mutant
    python scripts/mutation_score.py --list       # names and descriptions
    python scripts/mutation_score.py --only msucb-ucb-sign bkb-box-sign
    python scripts/mutation_score.py -k beats_random   # only the end-to-end comparisons

Set ``OMP_NUM_THREADS=1`` (and the other BLAS thread counts) on a shared machine.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("hdbo_engine", "hdbo_cli", "hdbo_adapters", "tests", "pyproject.toml")
BEATS_RANDOM = "tests/test_model_phase_beats_random.py"
AUTO = "hdbo_engine/algorithms/auto/portfolio.py"
AUTO_ARM = "hdbo_engine/algorithms/auto/arm.py"
AUTO_NOISE = "hdbo_engine/algorithms/auto/noise.py"
AUTO_CEI = "hdbo_engine/algorithms/auto/constrained_ei.py"
AUTO_ES = "hdbo_engine/algorithms/auto/evolution.py"
AUTO_MEMBERS = "hdbo_engine/algorithms/auto/members.py"
AUTO_COBYLA = "hdbo_engine/algorithms/auto/cobyla.py"
AUTO_TESTS = ("tests/test_auto.py", "tests/test_constraints.py")
COBYLA_TESTS = ("tests/test_auto_cobyla.py", "tests/test_design.py")
OPTUNA = "hdbo_adapters/optuna.py"
OPTUNA_TESTS = ("tests/test_optuna_adapter.py",)

# pick(expression, its parent node): whether the edit replaces this expression
Pick = Callable[[ast.expr, ast.AST], bool]


class MutantError(Exception):
    """A mutant that no longer matches the code: its scope or its expressions are missing."""


@dataclass(frozen=True)
class Edit:
    """Replace the ``count`` expressions inside ``scope`` for which ``pick`` is true, each by
    ``make(expression)``. ``scope`` is ``Class.method``, a module-level function, or the
    name of a module-level constant (its assigned value)."""

    scope: str
    pick: Pick
    make: Callable[[ast.expr], ast.expr]
    count: int = 1


@dataclass(frozen=True)
class Mutant:
    """A deliberate bug: ``edits`` of the module at ``path``."""

    name: str
    description: str
    path: str
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]


# --------------------------------------------------------------- what an edit picks

def called(node: ast.AST, name: str) -> bool:
    """``node`` calls a function or method named ``name`` (``np.sqrt``, ``self._select``:
    ``sqrt``, ``_select``), whatever object it is called on."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute)
            else getattr(func, "id", None)) == name


def mentions(node: ast.AST, name: str) -> bool:
    """``node`` holds the module-level name or the attribute ``name`` somewhere."""
    return any(getattr(n, "id", None) == name or getattr(n, "attr", None) == name
               for n in ast.walk(node))


def binop(node: ast.AST, op: type[ast.operator]) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, op)


def compare(node: ast.AST, op: type[ast.cmpop], name: str) -> bool:
    """A single comparison ``op`` that mentions ``name``."""
    return (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], op) and mentions(node, name))


def condition_of(kind: type[ast.stmt]) -> Pick:
    """Picks the condition of a ``kind`` statement (``ast.While``, ``ast.If``)."""
    return lambda node, parent: isinstance(parent, kind) and getattr(parent, "test", None) is node


def value_of_assignment(node: ast.expr, parent: ast.AST) -> bool:
    return isinstance(parent, ast.Assign)


# --------------------------------------------------------------- what it puts instead

def replaced(node: ast.AST, **fields: object) -> ast.expr:
    """A copy of ``node`` with ``fields`` replaced."""
    new = copy.copy(node)
    for key, value in fields.items():
        setattr(new, key, value)
    return new


def constant(value: object) -> Callable[[ast.expr], ast.expr]:
    return lambda node: ast.Constant(value)


def negated(node: ast.expr) -> ast.expr:
    return ast.UnaryOp(ast.USub(), node)


def term_dropped(scope: str, op: type[ast.operator], name: str) -> Edit:
    """The ``op`` operation in ``scope`` that mentions ``name`` reduced to its other operand."""
    def make(node: ast.expr) -> ast.expr:
        assert isinstance(node, ast.BinOp)
        return node.left if mentions(node.right, name) else node.right
    return Edit(scope, lambda n, _: binop(n, op) and mentions(n, name), make)


def swapped(first: str, second: str) -> Callable[[ast.expr], ast.expr]:
    """``node`` with its fields ``first`` and ``second`` exchanged."""
    return lambda node: replaced(node, **{first: getattr(node, second),
                                          second: getattr(node, first)})


def swapped_args(node: ast.expr) -> ast.expr:
    assert isinstance(node, ast.Call)
    return replaced(node, args=[node.args[1], node.args[0], *node.args[2:]])


def ucb_of_minus_mean(node: ast.expr) -> ast.expr:
    """``ucb(-mean, var, None if dmean is None else -dmean, ...)``."""
    assert isinstance(node, ast.Call)
    mean, var, dmean, *rest = node.args
    none = ast.Constant(None)
    return replaced(node, args=[negated(mean), var,
                                ast.IfExp(ast.Compare(dmean, [ast.Is()], [none]), none,
                                          negated(dmean)), *rest])


def bonus_not_rooted(node: ast.expr) -> ast.expr:
    """``mean + np.sqrt(beta) * sd`` -> ``mean + beta * sd``."""
    assert isinstance(node, ast.BinOp) and isinstance(node.right, ast.BinOp)
    root = node.right.left
    assert isinstance(root, ast.Call)
    return replaced(node, right=replaced(node.right, left=root.args[0]))


def region_stays_at_minimum(node: ast.expr) -> ast.expr:
    """``self.length_init, self.restarts + 1`` -> ``self.length_min, self.restarts``."""
    assert isinstance(node, ast.Tuple)
    length, restarts = node.elts
    assert isinstance(restarts, ast.BinOp)
    return replaced(node, elts=[replaced(length, attr="length_min"), restarts.left])


def halving_dropped(node: ast.expr) -> ast.expr:
    """``max(0.5 * radius, CEI_MIN_RADIUS)`` -> ``radius``."""
    assert isinstance(node, ast.Call) and isinstance(node.args[0], ast.BinOp)
    half = node.args[0]
    return half.right if isinstance(half.left, ast.Constant) else half.left


def best_known_value(node: ast.expr) -> ast.expr:
    """``... else cache.worst`` -> ``... else min(cache.known.values())``."""
    assert isinstance(node, ast.IfExp) and isinstance(node.orelse, ast.Attribute)
    known = ast.Attribute(node.orelse.value, "known", ast.Load())
    values = ast.Call(ast.Attribute(known, "values", ast.Load()), [], [])
    return replaced(node, orelse=ast.Call(ast.Name("min", ast.Load()), [values], []))


def _recommend_call(node: ast.expr, parent: ast.AST) -> bool:
    """A call of some object's ``recommend()``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "recommend")


def _best_point(node: ast.expr) -> ast.expr:
    """``<the object whose recommend() was called>.best[0]``: its best told point."""
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    return ast.Subscript(ast.Attribute(node.func.value, "best", ast.Load()), ast.Constant(0),
                         ast.Load())


MUTANTS = (
    Mutant("msucb-ucb-sign", "MS-UCB maximises -mu + sqrt(beta) sigma",
           "hdbo_engine/algorithms/msucb.py",
           (Edit("MSUCB._maximize", lambda n, _: called(n, "ucb"), ucb_of_minus_mean),),
           ("tests/test_msucb.py", BEATS_RANDOM)),
    Mutant("msucb-beta-scale-dropped", "MS-UCB's acquisition ignores beta_scale (10x beta)",
           "hdbo_engine/algorithms/msucb.py",
           (term_dropped("MSUCB.beta", ast.Mult, "beta_scale"),),
           ("tests/test_msucb.py", BEATS_RANDOM)),
    Mutant("msucb-t-from-zero", "MS-UCB's t counts the initial design too",
           "hdbo_engine/algorithms/msucb.py",
           (Edit("MSUCB._propose",
                 lambda n, _: binop(n, ast.Sub) and called(n.right, "_design_length"),
                 lambda n: n.left),),
           ("tests/test_msucb.py", BEATS_RANDOM)),
    Mutant("ucb-beta-not-rooted", "GP-UCB's bonus is beta sigma instead of sqrt(beta) sigma",
           "hdbo_engine/acquisition.py",
           (Edit("ucb", lambda n, _: binop(n, ast.Add) and binop(n.right, ast.Mult)
                 and called(n.right.left, "sqrt"), bonus_not_rooted),),
           ("tests/test_acquisition.py", "tests/test_msucb.py", "tests/test_cobbo.py",
            BEATS_RANDOM)),
    Mutant("trust-region-never-restarts", "the trust region stays at its minimum side",
           "hdbo_engine/trust_region.py",
           (Edit("TrustRegion.observe",
                 lambda n, _: isinstance(n, ast.Tuple) and mentions(n, "length_init"),
                 region_stays_at_minimum),),
           ("tests/test_msucb.py", "tests/test_trust_region.py", BEATS_RANDOM)),
    Mutant("gp-noise-dropped", "the GP's noise variance is left out of K",
           "hdbo_engine/gp.py",
           (term_dropped("GP._factorize", ast.Add, "noise_var"),),
           ("tests/test_msucb.py", "tests/test_gp.py", "tests/test_cobbo.py", BEATS_RANDOM)),
    Mutant("ei-sign", "expected improvement measured below the incumbent",
           "hdbo_engine/acquisition.py",
           (Edit("expected_improvement",  # (mean - best) in u and in the value
                 lambda n, _: binop(n, ast.Sub) and isinstance(n.left, ast.Name)
                 and isinstance(n.right, ast.Name), swapped("left", "right"), count=2),),
           ("tests/test_acquisition.py", "tests/test_cobbo.py", BEATS_RANDOM)),
    Mutant("bkb-box-sign", "BKB's box acquisition maximises -mu~ + beta~ sigma~",
           "hdbo_engine/algorithms/bkb.py",
           (Edit("BKB._maximize_box",  # the candidates' score, the refined value and gradient
                 lambda n, _: binop(n, ast.Add), lambda n: replaced(n, left=negated(n.left)),
                 count=3),),
           ("tests/test_bkb.py", BEATS_RANDOM)),
    Mutant("bkb-xi-is-lambda", "BKB's xi defaults to lambda instead of sqrt(lambda)",
           "hdbo_engine/algorithms/bkb.py",
           (Edit("BKB._beta", lambda n, _: called(n, "sqrt") and mentions(n, "lam"),
                 lambda n: n.args[0]),),
           ("tests/test_bkb.py", BEATS_RANDOM)),
    Mutant("cobbo-backoff-never", "CobBO's backoff rule never ends a block",
           "hdbo_engine/algorithms/cobbo.py",
           (Edit("CobBO._update", lambda n, _: isinstance(n, ast.BoolOp)
                 and isinstance(n.op, ast.Or) and mentions(n, "backoff_xi"),
                 lambda n: next(v for v in n.values if not mentions(v, "backoff_xi"))),),
           ("tests/test_cobbo.py", BEATS_RANDOM)),
    Mutant("cobbo-weights-swapped", "CobBO's eq. (2) rewards failures and punishes successes",
           "hdbo_engine/algorithms/cobbo.py",
           (Edit("CobBO._update", lambda n, _: isinstance(n, ast.IfExp) and called(n.body, "log"),
                 swapped("body", "orelse")),),
           ("tests/test_cobbo.py", BEATS_RANDOM)),
    Mutant("goucb-phase2-skipped", "GO-UCB never updates Sigma_t and w_t in Phase II",
           "hdbo_engine/algorithms/goucb.py",
           (Edit("GOUCB._sync", condition_of(ast.While), constant(False)),),
           ("tests/test_goucb.py", BEATS_RANDOM)),
    Mutant("goucb-no-bonus", "GO-UCB's step 5 drops the confidence bonus (beta = 0)",
           "hdbo_engine/algorithms/goucb.py",
           (Edit("GOUCB._propose", lambda n, _: called(n, "_select"),
                 lambda n: replaced(n, args=[*n.args[:2], ast.Constant(0.0), *n.args[3:]])),),
           ("tests/test_goucb.py", BEATS_RANDOM)),
    Mutant("auto-choice-argmin", "Auto asks the member with the smallest Thompson draw",
           AUTO, (Edit("Auto.allocate", lambda n, _: called(n, "max"),
                       lambda n: replaced(n, func=ast.Name("min", ast.Load()))),),
           AUTO_TESTS),
    Mutant("auto-beta-swapped", "Auto draws Beta(1 + failures, 1 + successes)",
           AUTO, (Edit("Auto.allocate", lambda n, _: called(n, "beta"), swapped_args),),
           AUTO_TESTS),
    Mutant("auto-window-ignored", "Auto's records keep every told proposal, not the last window",
           AUTO, (Edit("Auto.records", lambda n, _: isinstance(n, ast.Subscript)
                       and isinstance(n.slice, ast.Slice)
                       and isinstance(n.slice.lower, ast.UnaryOp), lambda n: n.value),),
           AUTO_TESTS),
    Mutant("auto-success-vs-last", "a success beats the previous value instead of the best",
           AUTO_ARM, (Edit("outcomes", lambda n, _: called(n, "min"), lambda n: n.args[-1]),),
           AUTO_TESTS),
    Mutant("auto-recommend-optimistic", "the noisy recommendation minimises mu - 1.28 sigma",
           AUTO_NOISE, (Edit("recommend", lambda n, _: binop(n, ast.Add)
                             and mentions(n.right, "ndtri"),
                             lambda n: replaced(n, op=ast.Sub())),),
           AUTO_TESTS),
    Mutant("auto-replicate-never-differs", "a replicate never shows noise",
           AUTO_NOISE, (Edit("noise_observed", lambda n, _: isinstance(n, ast.UnaryOp)
                             and called(n.operand, "isclose"), constant(False)),),
           AUTO_TESTS),
    Mutant("auto-replicate-wrong-point", "the replicate repeats the design's last point",
           AUTO_NOISE, (Edit("replicate", lambda n, _: isinstance(n, ast.Subscript)
                             and called(n.slice, "best_index"),
                             lambda n: replaced(n, slice=ast.Constant(-1))),),
           AUTO_TESTS),
    Mutant("auto-replicate-threshold-inverted", "a replicate follows a smooth design",
           AUTO_NOISE, (Edit("replicate", lambda n, _: compare(n, ast.Lt, "NOISY_VAR"),
                             lambda n: replaced(n, ops=[ast.GtE()])),),
           AUTO_TESTS),
    Mutant("auto-cei-never-shrinks", "the constrained-EI box never halves",
           AUTO_CEI, (Edit("ConstrainedEIArm.radius", lambda n, _: called(n, "max")
                           and mentions(n, "CEI_MIN_RADIUS"), halving_dropped),),
           AUTO_TESTS),
    Mutant("auto-es-rule-inverted", "the evolution strategy's step grows on a failure",
           AUTO_ES, (Edit("EvolutionArm.state", lambda n, _: isinstance(n, ast.IfExp)
                          and mentions(n.body, "ES_UP"),
                          lambda n: replaced(n, test=ast.UnaryOp(ast.Not(), n.test))),),
           AUTO_TESTS),
    Mutant("auto-es-restart-at-incumbent", "the evolution strategy restarts at the incumbent",
           AUTO_ES, (Edit("EvolutionArm.make", lambda n, p: condition_of(ast.If)(n, p)
                          and mentions(n, "restarts"), constant(False)),),
           AUTO_TESTS),
    Mutant("auto-others-told-as-own", "a member is told the others' points with their metas",
           AUTO_MEMBERS, (Edit("MemberArm._told_meta", lambda n, _: isinstance(n, ast.IfExp)
                               and isinstance(n.orelse, ast.Dict) and bool(n.orelse.keys),
                               lambda n: ast.Name("meta", ast.Load())),),  # pending: {}
           AUTO_TESTS),
    Mutant("auto-cobyla-rhobeg", "COBYLA starts with a radius of 1/5 of the box, not 1/6",
           AUTO_COBYLA, (Edit("COBYLA_RHOBEG", value_of_assignment,
                              lambda n: ast.BinOp(ast.Constant(1.0), ast.Div(),
                                                  ast.Constant(5.0))),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-at-ten-per-dim", "the COBYLA phase also runs at 10 evaluations per "
           "effective dimension", AUTO_COBYLA,
           (Edit("CobylaArm.active", lambda n, _: compare(n, ast.GtE, "COBYLA_PER_DIM"),
                 lambda n: replaced(n, ops=[ast.Gt()])),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-every-probed-coordinate", "the effective dimension counts every "
           "probed coordinate", AUTO_COBYLA,
           (Edit("effective_dim", lambda n, _: called(n, "float") and called(n.args[0], "mean"),
                 constant(1.0)),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-failure-as-best", "a failed COBYLA point counts as the best value fed",
           AUTO_COBYLA, (Edit("CobylaArm.next_point", lambda n, _: isinstance(n, ast.IfExp)
                              and mentions(n.orelse, "worst")
                              and isinstance(n.orelse, ast.Attribute), best_known_value),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-start-moves", "COBYLA's run restarts from each new incumbent",
           AUTO_COBYLA, (Edit("CobylaArm.next_point", lambda n, _: isinstance(n, ast.IfExp)
                              and mentions(n.body, "COBYLA_X0"), lambda n: n.orelse),),
           COBYLA_TESTS),
    Mutant("design-effect-any-probe", "a coordinate counts as changed when it was probed",
           "hdbo_engine/design.py",
           (Edit("InitialDesign._design_effects", lambda n, _: called(n, "bool")
                 and isinstance(n.args[0], ast.BoolOp), constant(True)),),
           COBYLA_TESTS),
    Mutant("design-combined-move-not-followed",
           "probes asked with a batch's combined move step from the best told point instead",
           "hdbo_engine/design.py",
           (Edit("InitialDesign._axis_probe", lambda n, parent: isinstance(n, ast.Subscript)
                 and isinstance(n.slice, ast.UnaryOp) and isinstance(parent, ast.Assign)
                 and isinstance(parent.targets[0], ast.Name),
                 lambda n: ast.Subscript(ast.Attribute(ast.Name("self", ast.Load()), "best",
                                                       ast.Load()), ast.Constant(0),
                                         ast.Load())),),
           ("tests/test_design.py",)),
    Mutant("optuna-first-trial-uniform",
           "the study's first trial is the independent sampler's draw, not the centre",
           OPTUNA,
           (Edit("HDBOSampler.sample_independent", lambda n, parent: isinstance(n, ast.Compare)
                 and isinstance(n.left, ast.Attribute) and n.left.attr == "number",
                 constant(False)),),
           OPTUNA_TESTS),
    Mutant("optuna-centre-not-stored",
           "the first trial, drawn at the centre, reaches the engine without the centre's meta",
           OPTUNA,
           (Edit("HDBOSampler._store_centre", lambda n, parent: isinstance(n, ast.Dict)
                 and any(isinstance(k, ast.Constant) and k.value == "centre" for k in n.keys),
                 lambda n: ast.Dict([], [])),),
           OPTUNA_TESTS),
    Mutant("optuna-recommended-trial-best-draw",
           "the recommended trial is the best told value, not the engine's recommendation",
           OPTUNA,
           (Edit("HDBOSampler.recommended_trial", _recommend_call, _best_point),),
           OPTUNA_TESTS),
    Mutant("optuna-study-seed-ignored",
           "every ask uses its sampler's own seed, not the seed of the study's first proposal",
           OPTUNA,
           (Edit("HDBOSampler._optimizer", lambda n, parent: isinstance(n, ast.Name)
                 and n.id == "seed" and isinstance(parent, ast.keyword),
                 lambda n: ast.Attribute(ast.Name("self", ast.Load()), "_seed", ast.Load())),),
           OPTUNA_TESTS),
    Mutant("minimize-recommends-best-draw",
           "minimize's x_recommended is the best told point, not the engine's recommendation",
           "hdbo_engine/loop.py",
           (Edit("minimize", _recommend_call, _best_point),),
           ("tests/test_loop.py",)),
    Mutant("skopt-recommends-best-draw",
           "skopt's recommend() is the best told point, not the engine's recommendation",
           "hdbo_adapters/skopt.py",
           (Edit("HDBOOptimizer.recommend", _recommend_call, _best_point),),
           ("tests/test_skopt_adapter.py",)),
    Mutant("nevergrad-recommends-best-draw",
           "Nevergrad's recommend() is its archive's best draw, never the engine's pick",
           "hdbo_adapters/nevergrad.py",
           (Edit("HDBOOptimizer._internal_provide_recommendation", _recommend_call,
                 _best_point),),
           ("tests/test_nevergrad_adapter.py",)),
)


# --------------------------------------------------------------- applying a mutant

def scope_node(tree: ast.Module, scope: str) -> ast.AST:
    """The function, method or module-level constant's value that ``scope`` names."""
    *owner, name = scope.split(".")
    body = tree.body
    if owner:
        body = next((c.body for c in body if isinstance(c, ast.ClassDef) and c.name == owner[0]),
                    [])
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
        if (not owner and isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) == name for t in node.targets)):
            return node.value
    raise MutantError(f"no {scope!r}")


def mutate(source: str, mutant: Mutant) -> str:
    """``source`` (the module at ``mutant.path``) with the mutant's edits applied; a
    :class:`MutantError` where an edit picks other than its ``count`` expressions."""
    tree = ast.parse(source)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    starts = [0]
    for line in source.encode().splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    for edit in mutant.edits:
        root = scope_node(tree, edit.scope)
        found = [n for n in ast.walk(root)
                 if isinstance(n, ast.expr) and edit.pick(n, parents[id(n)])]
        if len(found) != edit.count:
            raise MutantError(f"{edit.scope}: {len(found)} expressions picked, expected "
                              f"{edit.count}")
        for node in found:
            assert node.end_lineno is not None and node.end_col_offset is not None
            spans.append((starts[node.lineno - 1] + node.col_offset,
                          starts[node.end_lineno - 1] + node.end_col_offset,
                          f"({ast.unparse(edit.make(node))})"))
    text = source.encode()
    spans.sort(reverse=True)
    for (start, end, new), (_, previous_end, _) in zip(spans, [*spans[1:], (0, 0, "")],
                                                       strict=True):
        if previous_end > start:
            raise MutantError("two edits overlap")
        text = text[:start] + new.encode() + text[end:]
    return text.decode()


def make_copy(destination: Path) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, destination / name)


def apply(mutant: Mutant, copy: Path) -> None:
    path = copy / mutant.path
    path.write_text(mutate(path.read_text(), mutant))


def run_tests(copy: Path, files: tuple[str, ...], timeout: float,
              keyword: str | None = None) -> tuple[str, str, float]:
    """``(outcome, first failing test or "", seconds)``; outcome is "passed", "failed",
    "error" (collection or import), "timeout" or "none selected" (``keyword`` matched no
    test)."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    cmd = [sys.executable, "-m", "pytest", *files, "-x", "-q", "-rf", "-p", "no:cacheprovider",
           "-n", "0"]
    if keyword:
        cmd += ["-k", keyword]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", "", time.perf_counter() - start
    seconds = time.perf_counter() - start
    if proc.returncode == 0:
        return "passed", "", seconds
    if proc.returncode == 5:
        return "none selected", "", seconds
    failed = re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.MULTILINE)
    if failed:
        return "failed", failed[0], seconds
    return "error", proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "", seconds


def check_copy_is_imported(copy: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(copy)}
    out = subprocess.run([sys.executable, "-c", "import hdbo_engine; print(hdbo_engine.__file__)"],
                         cwd=copy, env=env, capture_output=True, text=True, check=True)
    if not Path(out.stdout.strip()).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"the copy is not the imported package: {out.stdout.strip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants only")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds per test run [900]")
    parser.add_argument("-k", "--keyword", default=None,
                        help="pytest -k expression: run only the matching tests of each file set "
                             "(e.g. 'beats_random' to see what the end-to-end tests catch)")
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:28s} {m.description}  [{m.path}]")
        return 0
    names = {m.name for m in MUTANTS}
    unknown = sorted(set(args.only or ()) - names)
    if unknown:
        parser.error(f"--only: unknown mutant(s) {unknown}; expected names from {sorted(names)}")
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    for mutant in chosen:  # every mutant still applies, before anything runs
        try:
            mutate((ROOT / mutant.path).read_text(), mutant)
        except MutantError as err:
            raise SystemExit(f"mutant {mutant.name}: {err} in {mutant.path}; "
                             "update the mutant") from err
    with tempfile.TemporaryDirectory(prefix="hdbo-mutants-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        make_copy(base)
        check_copy_is_imported(base)
        files = tuple(dict.fromkeys(f for m in chosen for f in m.tests))
        outcome, first, seconds = run_tests(base, files, args.timeout, args.keyword)
        print(f"unmodified copy: {outcome} ({seconds:.0f} s) {first}", flush=True)
        if outcome != "passed":
            print("the tests fail without a mutant: fix them before scoring")
            return 1
        rows = []
        for mutant in chosen:
            copy = Path(tmp) / mutant.name
            copy.mkdir()
            make_copy(copy)
            apply(mutant, copy)
            outcome, first, seconds = run_tests(copy, mutant.tests, args.timeout,
                                                args.keyword)
            caught = outcome not in ("passed", "none selected")
            rows.append((mutant.name, "caught" if caught else "SURVIVED",
                         first or outcome if caught else "", seconds))
            print(f"{mutant.name:28s} {rows[-1][1]:8s} {seconds:5.0f} s  {rows[-1][2]}",
                  flush=True)
            shutil.rmtree(copy)
    n_caught = sum(r[1] == "caught" for r in rows)
    print()
    print("| mutant | result | caught by | s |\n|---|---|---|---|")
    for name, result, by, seconds in rows:
        print(f"| {name} | {result} | {by} | {seconds:.0f} |")
    print(f"\nmutation score: {n_caught} / {len(rows)} caught")
    return 0 if n_caught == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
