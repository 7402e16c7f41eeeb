"""No two modules of barb import each other, directly or around a circle, even lazily; and
the warning checks never import the engine that calls them.

Issue 11 took the script package out of a circle (patterns, evaluator, library, validator)
in which the function table's size depended on which module was imported first; a lazy
import inside a function closes such a circle as surely as one at the top (daily() once did:
parser -> library -> builtins -> functions -> parser). Imports under ``if TYPE_CHECKING``
are for annotations only and are left out, and so is a module's import of its own
packages (Python has imported them before it).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

BARB = Path(__file__).resolve().parent.parent / "barb"


def _module(path: Path) -> str:
    parts = path.relative_to(BARB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """The barb modules ``tree`` imports anywhere, annotations-only blocks aside."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(child) for child in ast.walk(node)}
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in names if name == "barb" or name.startswith("barb.")}


def _circle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path of imports from ``start`` back to it, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return path
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


@cache  # parsing every module takes seconds; both tests read the same graph, unchanged
def _graph() -> dict[str, set[str]]:
    """Each barb module's imports of other barb modules, its own packages aside."""
    files = {_module(path): path for path in BARB.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = _imported(tree, module, path.name == "__init__.py")
        # A module's own packages are imported before it whatever it names: no arrow back.
        own = {module.rsplit(".", n)[0] for n in range(1, module.count(".") + 1)}
        graph[module] = {n for n in imported if n in files and n != module and n not in own}
    return graph


def test_barb_has_no_import_circle() -> None:
    graph = _graph()
    assert sum(len(edges) for edges in graph.values()) > 300  # the walk reads the imports
    circles = [c for c in (_circle_through(graph, m) for m in sorted(graph)) if c is not None]
    assert circles == []


def test_the_warning_checks_never_import_the_engine() -> None:
    """barb.caveats' checks read a stage's answer from barb.stage_output and are handed
    run_stage when they run a stage again: an import of barb.stages or barb.interpreter
    would have them call back the engine that calls them. The planner's own warnings are
    in barb.plan_warnings, below it: the checks read plans, so the planner importing one
    of them would run an arrow back up."""
    graph = _graph()
    checks = [m for m in graph if m.startswith("barb.caveats.")]
    assert len(checks) > 30  # the walk finds the checks
    engine = {"barb.stages", "barb.interpreter"}
    assert {m: sorted(graph[m] & engine) for m in checks if graph[m] & engine} == {}
    assert sorted(n for n in graph["barb.planning"] if n.startswith("barb.caveats")) == []
