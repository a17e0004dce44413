"""The house (docs/ARCHITECTURE.md): no import cycles, the engine without torch, adapters apart
from the command line."""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hdbo_engine", "hdbo_adapters", "hdbo_cli")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (never run)."""
    nodes, stack = [], [tree]
    while stack:
        node = stack.pop()
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            stack.extend(node.orelse)
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Our modules that ``path`` imports anywhere in it (top level or inside a function)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        found.update(t for t in targets if t in modules)
    return found - {name}


def _graph() -> dict[str, set[str]]:
    paths = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def test_no_import_cycle_among_our_modules() -> None:
    graph = _graph()
    assert "hdbo_engine.registry" in graph["hdbo_engine.loop"]
    assert "hdbo_engine.base" not in graph["hdbo_engine.gp"]  # models do not import the contract
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as err:
        raise AssertionError(f"import cycle: {' -> '.join(err.args[1])}") from err


def test_the_engine_holds_algorithms_not_benchmarks() -> None:
    engine = {p.name for p in (ROOT / "hdbo_engine").rglob("*.py")}
    assert not engine & {"problems.py", "tasks.py", "functions.py"}


def test_adapters_and_engine_do_not_import_the_command_line() -> None:
    graph = _graph()
    offenders = {m: sorted(d for d in deps if d.startswith("hdbo_cli"))
                 for m, deps in graph.items() if not m.startswith("hdbo_cli")}
    assert {m: d for m, d in offenders.items() if d} == {}
    assert not any(d.startswith(("hdbo_adapters", "hdbo_cli"))
                   for m, deps in graph.items() if m.startswith("hdbo_engine") for d in deps)


def test_minimize_imports_without_the_algorithms_package() -> None:
    proc = _run("import sys, hdbo_engine.loop as b; "
                "print(sorted(m for m in sys.modules if m.startswith('hdbo_engine.algorithms'))); "
                "print(b.minimize(lambda v: sum(x * x for x in v), 2, 'random', budget=3, "
                "seed=0, progress=False).n_evals)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[]", "3"]


def test_algorithms_import_from_the_package_top_without_torch() -> None:
    proc = _run("import sys\n"
                "class NoTorch:\n"
                "    def find_spec(self, name, path=None, target=None):\n"
                "        if name.partition('.')[0] == 'torch':\n"
                "            raise ModuleNotFoundError(name)\n"
                "sys.meta_path.insert(0, NoTorch())\n"
                "import hdbo_engine\n"
                "from hdbo_engine import MSUCB, CobBO, BKB, GPUCB, RandomSearch\n"
                "from hdbo_engine import GOUCB\n"
                "print(MSUCB.__module__, CobBO.__module__, BKB.__module__, GOUCB.__module__)\n"
                "try:\n    GOUCB(3)\nexcept ImportError as err:\n    print(err)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == [
        "hdbo_engine.algorithms.msucb hdbo_engine.algorithms.cobbo hdbo_engine.algorithms.bkb "
        "hdbo_engine.algorithms.goucb",
        'GOUCB needs torch; install it with: pip install "hdbo[torch]"']


def test_top_level_classes_are_the_registered_ones() -> None:
    import hdbo_engine

    for name in ("MSUCB", "CobBO", "BKB", "GPUCB", "RandomSearch"):
        assert getattr(hdbo_engine, name) is hdbo_engine.get_algorithm(
            hdbo_engine.registry.class_names()[name])
    assert {"MSUCB", "CobBO", "GOUCB", "BKB"} <= set(dir(hdbo_engine))
