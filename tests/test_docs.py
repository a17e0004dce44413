"""The documentation agrees with the code: the map of docs/ARCHITECTURE.md lists every module
that exists and nothing that does not, and every cross-reference in the docstrings and comments
of the engine, the adapters and the command line points to a section that exists.

Cross-references take these forms (``TITLE`` a section title, ``ANCHOR`` a GitHub anchor):

* ``[#ANCHOR]``: a section of the module's own page, the ``docs/algorithms/<name>.md`` its
  module docstring names first;
* ``PAGE.md#ANCHOR``: a section of a page (``docs/``, ``docs/algorithms/`` or the top folder);
* ``PAGE.md, "TITLE"`` and ``README, "TITLE"``: a Markdown heading of that page, or a bold
  paragraph label (``**TITLE.**``);
* ``module docstring, "TITLE"`` (this module), ``NAME module docstring, "TITLE"`` (a module of
  the same package or of the engine) and ``:mod:`PACKAGE.MODULE`, "TITLE"`` or
  ````PACKAGE.MODULE``, "TITLE"``: a numpy-style section (``TITLE`` over a line of dashes) or a
  bold label (``**TITLE**``) of that module's docstring;
* ``docs/PAGE.md`` or ``BENCHMARKS.md`` alone: the page exists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hdbo_engine", "hdbo_adapters", "hdbo_cli")
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
TREE_SECTION = "The floors"

# Where a page named without its folder (``constraints.md#...``) is looked for, in order.
PAGE_FOLDERS = (ROOT / "docs" / "algorithms", ROOT / "docs", ROOT)


# ------------------------------------------------------------------------------ the map
def _section(text: str, title: str) -> str:
    """The body of the Markdown section ``title`` (up to the next heading of its level)."""
    match = re.search(rf"^(#+) {re.escape(title)}\s*$", text, re.M)
    assert match, f"docs/ARCHITECTURE.md has no section {title!r}"
    level = len(match.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, match.end())
    return text[match.end(): end.start() if end else len(text)]


def tree_paths() -> dict[str, str]:
    """The paths the map lists (folders end with ``/``), each with its description.

    The map is the first fenced block of "The floors": one entry per line, a path (a folder
    ends with ``/``) and, after two spaces or more, its description; an entry indented two
    spaces more than a folder line lies in that folder.
    """
    body = _section(ARCHITECTURE.read_text(), TREE_SECTION)
    block = re.search(r"^```[^\n]*\n(.*?)^```", body, re.M | re.S)
    assert block, "the section 'The floors' has no fenced tree"
    paths: dict[str, str] = {}
    parents: list[tuple[int, str]] = []  # (indent, folder path) of the open folders
    for number, line in enumerate(block.group(1).splitlines(), 1):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        name, _, description = (re.split(r"( {2,})", line.strip(), maxsplit=1) + ["", ""])[:3]
        assert indent % 2 == 0 and " " not in name, \
            f"map line {number} is not 'PATH  description': {line!r}"
        while parents and parents[-1][0] >= indent:
            parents.pop()
        assert (indent == 0) == (not parents), \
            f"map line {number} is indented without a folder line above it: {line!r}"
        path = (parents[-1][1] if parents else "") + name
        assert path not in paths, f"the map lists {path} twice"
        paths[path] = description.strip()
        if name.endswith("/"):
            parents.append((indent, path))
    return paths


def code_modules() -> set[str]:
    """Every module file of the engine, the adapters and the command line (``__init__.py``
    aside: a package is its folder), and every package folder under them."""
    found: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT)
            if "__pycache__" in rel.parts:
                continue
            for k in range(1, len(rel.parts)):
                found.add("/".join(rel.parts[:k]) + "/")
            if path.name != "__init__.py":
                found.add(rel.as_posix())
    return found


def test_every_path_the_map_lists_exists() -> None:
    listed = tree_paths()
    missing = sorted(p for p in listed
                     if not (p.endswith("/") and (ROOT / p).is_dir()
                             or not p.endswith("/") and (ROOT / p).is_file()))
    assert not missing, f"docs/ARCHITECTURE.md lists paths that do not exist: {missing}"
    undescribed = sorted(p for p, description in listed.items() if not description)
    assert not undescribed, f"docs/ARCHITECTURE.md lists paths without a description: " \
                            f"{undescribed}"


def test_the_map_lists_every_module() -> None:
    listed = set(tree_paths())
    unlisted = sorted(code_modules() - listed)
    assert not unlisted, f"modules missing from docs/ARCHITECTURE.md, 'The floors': {unlisted}"


# -------------------------------------------------------------------------- anchors
def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lowercased, punctuation other than
    hyphens and underscores removed, spaces turned to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def _plain(title: str) -> str:
    """A title compared as text: no Markdown marks, spaces collapsed, case and a trailing
    full stop or colon ignored."""
    text = re.sub(r"[`*]", "", title)
    return re.sub(r"\s+", " ", text).strip().rstrip(".:").strip().casefold()


@dataclass(frozen=True)
class Page:
    """The sections of a Markdown page: its headings and bold paragraph labels."""

    headings: tuple[str, ...]
    labels: tuple[str, ...]

    def anchors(self) -> set[str]:
        seen: dict[str, int] = {}
        out = set()
        for heading in self.headings:
            anchor = github_anchor(heading)
            k = seen.get(anchor, 0)
            seen[anchor] = k + 1
            out.add(anchor if k == 0 else f"{anchor}-{k}")
        return out

    def titles(self) -> set[str]:
        return {_plain(t) for t in (*self.headings, *self.labels)}


def read_page(path: Path) -> Page:
    headings, labels, fence = [], [], ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif match := re.match(r"#{1,6} +(.*?)(?: +#+)?\s*$", line):
            headings.append(match.group(1))
        elif match := re.match(r"\s*(?:[-*] +)?\*\*(.+?)\*\*", line):
            labels.append(match.group(1))
    return Page(tuple(headings), tuple(labels))


def docstring_titles(path: Path) -> set[str]:
    """The section titles of a module docstring: numpy-style headings (a line over a line of
    dashes) and bold labels (``**Title**``)."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    lines = doc.splitlines()
    titles = {lines[k - 1] for k in range(1, len(lines))
              if re.fullmatch(r"\s*-{3,}\s*", lines[k]) and lines[k - 1].strip()}
    titles |= set(re.findall(r"\*\*(.+?)\*\*", doc, re.S))
    return {_plain(t) for t in titles}


# ---------------------------------------------------------------- cross-references
ANCHOR_HERE = re.compile(r"\[#([\w-]+)\]")
ANCHOR_PAGE = re.compile(r"(?<![\w/.-])((?:docs/)?(?:algorithms/)?[\w-]+\.md)#([\w-]+)")
TITLE = r",\s*(?:\"(?P<title>[^\"]+)\"|'(?P<title_>[^']+)')"
TITLE_IN_PAGE = re.compile(r"(?<![\w/.{}-])(?P<page>(?:[\w-]+/)*[\w-]+\.md|README)`{0,2}"
                           + TITLE)
TITLE_IN_DOCSTRING = re.compile(r"(?:\b(?P<name>\w+) )?module docstring" + TITLE)
TITLE_IN_MODULE = re.compile(r"(?::mod:`~?|``)(?P<module>(?:" + "|".join(PACKAGES)
                             + r")(?:\.\w+)*)(?:`|``)" + TITLE)
PAGE_ALONE = re.compile(r"(?<![\w/.{}-])((?:docs/)(?:[\w-]+/)*[\w-]+\.md|[A-Z][A-Z_]+\.md)\b")
NOT_MODULE_NAMES = {"the", "this", "its", "own", "see"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _title(match: re.Match[str]) -> str:
    return match.group("title") or match.group("title_")


@dataclass(frozen=True)
class Reference:
    source: Path  # the module that holds it
    line: int
    text: str

    def where(self) -> str:
        return f"{_rel(self.source)}:{self.line}: {self.text}"


def source_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                  if "__pycache__" not in p.parts)


def _prose(path: Path) -> tuple[str, list[int]]:
    """The file's lines joined by spaces (comment marks and indentation dropped), so that a
    reference broken over two lines reads as one, and the line at which each character
    starts."""
    parts: list[str] = []
    line_of: list[int] = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = re.sub(r"^\s*(?:#+\s?)?", "", line).rstrip()
        parts.append(text)
        line_of.extend([number] * (len(text) + 1))
    return " ".join(parts), line_of


def references(path: Path, pattern: re.Pattern[str]) -> Iterator[tuple[re.Match[str], Reference]]:
    text, line_of = _prose(path)
    for match in pattern.finditer(text):
        yield match, Reference(path, line_of[match.start()], match.group(0))


def find_page(name: str) -> Path | None:
    """The page ``name`` (``docs/x.md``, ``x.md``, ``README``): a path from the top folder, or a
    bare name looked for in docs/algorithms/, docs/ and the top folder, in that order."""
    name = "README.md" if name == "README" else name
    if "/" in name:
        return ROOT / name if (ROOT / name).is_file() else None
    return next((folder / name for folder in PAGE_FOLDERS if (folder / name).is_file()), None)


def own_page(path: Path) -> Path | None:
    """The page a module's ``[#anchor]`` references point into: the first
    ``docs/algorithms/<name>.md`` its module docstring names."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    match = re.search(r"docs/algorithms/[\w-]+\.md", doc)
    return ROOT / match.group(0) if match else None


def find_module(name: str, near: Path) -> Path | None:
    """A module by dotted name (``hdbo_engine.base``) or, for a bare name, the module of
    that name in the package of ``near`` or else in the engine."""
    if "." in name:
        base = ROOT.joinpath(*name.split("."))
        candidates = [base.with_suffix(".py"), base / "__init__.py"]
    else:
        candidates = [near.parent / f"{name}.py", near.parent / name / "__init__.py",
                      ROOT / "hdbo_engine" / f"{name}.py"]
    return next((p for p in candidates if p.is_file()), None)


def broken_references() -> list[str]:
    """Every cross-reference that does not resolve, with its file, line and the reason."""
    pages: dict[Path, Page] = {}

    def page(path: Path) -> Page:
        if path not in pages:
            pages[path] = read_page(path)
        return pages[path]

    broken = []
    for path in source_files():
        for match, ref in references(path, ANCHOR_HERE):
            target = own_page(path)
            if target is None:
                broken.append(f"{ref.where()} (the module docstring names no "
                              f"docs/algorithms page)")
            elif match.group(1) not in page(target).anchors():
                broken.append(f"{ref.where()} (no such section in "
                              f"{_rel(target)})")
        for match, ref in references(path, ANCHOR_PAGE):
            target = find_page(match.group(1))
            if target is None:
                broken.append(f"{ref.where()} (no such page)")
            elif match.group(2) not in page(target).anchors():
                broken.append(f"{ref.where()} (no such section in "
                              f"{_rel(target)})")
        for match, ref in references(path, TITLE_IN_PAGE):
            target = find_page(match.group("page"))
            if target is None:
                broken.append(f"{ref.where()} (no such page)")
            elif _plain(_title(match)) not in page(target).titles():
                broken.append(f"{ref.where()} (no such heading or label in "
                              f"{_rel(target)})")
        for pattern in (TITLE_IN_DOCSTRING, TITLE_IN_MODULE):
            for match, ref in references(path, pattern):
                named = match.groupdict().get("name", match.groupdict().get("module"))
                module = path if pattern is TITLE_IN_DOCSTRING and (
                    named is None or named.lower() in NOT_MODULE_NAMES) \
                    else find_module(named, path)
                if module is None:
                    broken.append(f"{ref.where()} (no module {named!r})")
                elif _plain(_title(match)) not in docstring_titles(module):
                    broken.append(f"{ref.where()} (no such section in the docstring of "
                                  f"{_rel(module)})")
        for match, ref in references(path, PAGE_ALONE):
            if find_page(match.group(1)) is None:
                broken.append(f"{ref.where()} (no such page)")
    return broken


def test_every_cross_reference_resolves() -> None:
    broken = broken_references()
    assert not broken, "cross-references that do not resolve:\n" + "\n".join(broken)


def test_the_large_d_warning_names_existing_sections() -> None:
    """``warn_beyond_measured_scale(name, page, ...)`` points users to ``page``'s "Large D"."""
    calls = [(path, m.group(1)) for path in source_files() for m in re.finditer(
        r"warn_beyond_measured_scale\([^,]+,\s*[\"']([\w-]+)[\"']", path.read_text())]
    assert calls
    broken = [f"{path.relative_to(ROOT)}: docs/algorithms/{name}.md, 'Large D'"
              for path, name in calls
              if not (ROOT / "docs" / "algorithms" / f"{name}.md").is_file()
              or "large d" not in read_page(ROOT / "docs" / "algorithms" / f"{name}.md").titles()]
    assert not broken, f"the large-D warning points to missing sections: {broken}"


# ------------------------------------------------------------------- the checks' checks
@pytest.mark.parametrize(("heading", "anchor"), [
    ("Virtual points' variance", "virtual-points-variance"),
    ("Step 5: linearised inner maximum", "step-5-linearised-inner-maximum"),
    ("`q_bar`", "q_bar"),
    ("Stage-2 data cap", "stage-2-data-cap"),
    ("D = 5000", "d--5000"),
])
def test_github_anchor(heading: str, anchor: str) -> None:
    assert github_anchor(heading) == anchor


def test_the_reference_patterns_read_every_form(tmp_path: Path) -> None:
    text = ('"""Doc.\n\nNoise\n-----\n* **Merit value** (x).\n"""\n'
            '# [#a-b] auto.md#large-d (module docstring, "Noise")\n'
            "# (docs/algorithms/cobbo.md,\n#  \"Large D\") (base module docstring, \"Presets\")\n"
            "# (:mod:`hdbo_engine.base`, \"Constraints\") (``docs/testing.md``)\n")
    path = tmp_path / "m.py"
    path.write_text(text)
    found = {pattern.pattern: [m.group(0) for m, _ in references(path, pattern)]
             for pattern in (ANCHOR_HERE, ANCHOR_PAGE, TITLE_IN_PAGE, TITLE_IN_DOCSTRING,
                             TITLE_IN_MODULE, PAGE_ALONE)}
    assert found[ANCHOR_HERE.pattern] == ["[#a-b]"]
    assert found[ANCHOR_PAGE.pattern] == ["auto.md#large-d"]
    assert [(m.group("page"), _title(m)) for m, _ in references(path, TITLE_IN_PAGE)] == [
        ("docs/algorithms/cobbo.md", "Large D")]
    assert [m.group("name") for m, _ in references(path, TITLE_IN_DOCSTRING)] == [None, "base"]
    assert found[TITLE_IN_MODULE.pattern] == [':mod:`hdbo_engine.base`, "Constraints"']
    assert found[PAGE_ALONE.pattern] == ["docs/algorithms/cobbo.md", "docs/testing.md"]
    assert docstring_titles(path) == {"noise", "merit value"}
    assert [ref.line for _, ref in references(path, TITLE_IN_PAGE)] == [8]
