"""The house's shape, held by tests: no import circle and no module over 400 lines in ``src/``.

Imports are read from the source with :mod:`ast`, relative ones resolved, at module level and
inside functions alike (an import inside a function is a circle all the same, only a later one);
those under ``if TYPE_CHECKING:`` never run and are not counted. A circle is looked for between
modules, and between packages: ``dpscale.predict`` importing ``dpscale.nccltests`` which imports
``dpscale.predict`` is one, whichever of their modules carry it (a module of ``dpscale`` itself,
such as ``report``, counts as a package of one).

What issue 26 ("Each calculator has one home") has yet to fix is listed below, and the lists
must stay exactly what is found: a new offender fails, and so does one that was fixed but left
listed (remove it), so that the lists only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MOST_LINES = 400

ISSUE_26_LONG_MODULES: frozenset[str] = frozenset()
ISSUE_26_MODULE_CIRCLES: frozenset[frozenset[str]] = frozenset()
ISSUE_26_PACKAGE_CIRCLES: frozenset[frozenset[str]] = frozenset()
ISSUE_26_SHARED_NAMES: frozenset[str] = frozenset()


def module_name(path: Path, root: Path = SRC) -> str:
    """``dpscale.predict.model`` for ``src/dpscale/predict/model.py``; a package by its ``__init__.py``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported(source: str, name: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """The modules among ``known`` that the module ``name`` imports, anywhere in ``source`` but under TYPE_CHECKING.

    ``from a import b`` is an import of the module ``a.b`` where there is one, else of ``a``.
    """
    modules = set(known)
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit_one(other)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.add(f"{base}.{alias.name}")
                elif base in modules:
                    found.add(base)
        visit(node)

    visit(ast.parse(source))
    found.discard(name)
    return found


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Each module of ``root`` and the modules of ``root`` it imports."""
    paths = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    return {
        name: imported(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", paths)
        for name, path in paths.items()
    }


def package_of(module: str) -> str:
    """``dpscale.predict`` for its modules; a module of the top package is its own."""
    return ".".join(module.split(".")[:2])


def packages(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The graph between packages: an edge where a module of one imports a module of another."""
    out: dict[str, set[str]] = {package_of(name): set() for name in graph}
    for name, targets in graph.items():
        out[package_of(name)].update(package_of(t) for t in targets if package_of(t) != package_of(name))
    return out


def circles(graph: Mapping[str, set[str]]) -> set[frozenset[str]]:
    """The groups of nodes that reach each other (Tarjan's strongly connected components, two nodes or more)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.add(frozenset(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _said(groups: Iterable[frozenset[str]]) -> list[str]:
    return sorted(" ↔ ".join(sorted(group)) for group in groups)


def test_the_reader_sees_imports_inside_functions_and_resolves_relative_ones() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "from .c import thing\n"
        "if TYPE_CHECKING:\n    from p.d import Kind\n"
        "def f():\n    import p.e\n    from ..q import r\n"
    )
    known = ["p", "p.a", "p.b", "p.c", "p.d", "p.e", "q", "q.r"]
    assert imported(source, "p.a", False, known) == {"p.b", "p.c", "p.e", "q.r"}  # not p.d: never run
    assert imported("from .x import y\n", "p", True, ["p", "p.x"]) == {"p.x"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset({"a", "b", "c"})}
    assert packages({"dpscale.predict.network": {"dpscale.nccltests.profiling", "dpscale.predict.model"}}) == {
        "dpscale.predict": {"dpscale.nccltests"}
    }


def test_no_import_circle_between_modules() -> None:
    found = circles(import_graph())
    assert _said(found - ISSUE_26_MODULE_CIRCLES) == [], "new import circles between modules"
    assert _said(ISSUE_26_MODULE_CIRCLES - found) == [], "fixed: remove them from ISSUE_26_MODULE_CIRCLES"


def test_no_import_circle_between_packages() -> None:
    found = circles(packages(import_graph()))
    assert _said(found - ISSUE_26_PACKAGE_CIRCLES) == [], "new import circles between packages"
    assert _said(ISSUE_26_PACKAGE_CIRCLES - found) == [], "fixed: remove them from ISSUE_26_PACKAGE_CIRCLES"


def test_no_module_over_400_lines() -> None:
    long = {
        path.relative_to(SRC).as_posix(): lines
        for path in sorted(SRC.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert sorted(set(long) - ISSUE_26_LONG_MODULES) == [], f"modules over {MOST_LINES} lines: {long}"
    assert sorted(ISSUE_26_LONG_MODULES - set(long)) == [], "fixed: remove them from ISSUE_26_LONG_MODULES"


TESTS = Path(__file__).resolve().parent
SPECIAL_TEST_FOLDERS = {"browser", "distributed", "testbed", "data", "assets"}  # by what they need, not by module


def subpackages() -> set[str]:
    return {p.parent.name for p in (SRC / "dpscale").glob("*/__init__.py")}


def test_tests_mirror_the_subpackages() -> None:
    """``tests/predict/`` holds the tests of ``dpscale/predict/``: no test of a subpackage is left at the
    top (``tests/test_predict_x.py``), and every folder of tests but the special ones names a subpackage."""
    packages = subpackages()
    flat = sorted(
        p.name
        for p in TESTS.glob("test_*.py")
        if any(p.stem == f"test_{n}" or p.stem.startswith(f"test_{n}_") for n in packages)
    )
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert flat == []
    assert folders - SPECIAL_TEST_FOLDERS <= packages, folders - SPECIAL_TEST_FOLDERS - packages
    assert all((TESTS / name / "__init__.py").exists() for name in folders - {"data", "assets"})


def test_module_names_are_unique_across_the_tree() -> None:
    """One ``rank_trace.py``, one ``logfiles.py``: a module's name says which it is without its folder."""
    seen: dict[str, list[str]] = {}
    for path in sorted((SRC / "dpscale").rglob("*.py")):
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(module_name(path))
    shared = {name for name, modules in seen.items() if len(modules) > 1}
    assert shared == ISSUE_26_SHARED_NAMES, {name: seen[name] for name in shared}
