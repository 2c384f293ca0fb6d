"""The package's import graph, read from the source with ``ast`` (nothing is imported).

Every ``import ragdiag.x`` / ``from ragdiag.x import y`` counts, at module level or inside a
function: an import deferred into a function to dodge a cycle is still a cycle in the design.
Run ``python -m tests.architecture.import_graph`` to print which folder imports which.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

from tests.architecture.source_trees import nodes

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "ragdiag"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def module_graph() -> dict[str, set[str]]:
    """module → the ragdiag modules it imports (package ``__init__`` edges implied by a dotted
    import are not counted; an import of a submodule counts as that submodule). A fresh copy of
    the graph read once per state of the source (every file's modification time and size)."""
    state = tuple((name, path, path.stat().st_mtime_ns, path.stat().st_size) for name, path in modules().items())
    return {name: set(targets) for name, targets in _graph(state).items()}


@functools.cache
def _graph(state: tuple[tuple[str, Path, int, int], ...]) -> dict[str, frozenset[str]]:
    known = {name: path for name, path, _, _ in state}
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in nodes(path):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
            for target in targets:
                if target.split(".")[0] != "ragdiag":
                    continue
                resolved = _resolve(target, known)
                if resolved and resolved != name and resolved != "ragdiag":
                    graph[name].add(resolved)
    return {name: frozenset(targets) for name, targets in graph.items()}


def folder_of(module: str) -> str:
    """``ragdiag.llm.client`` → ``llm``; top-level modules (``ragdiag.errors``) → ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ragdiag"


def folder_graph(graph: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    graph = graph or module_graph()
    folders: dict[str, set[str]] = defaultdict(set)
    for source, targets in graph.items():
        folders[folder_of(source)]
        for target in targets:
            if folder_of(target) != folder_of(source):
                folders[folder_of(source)].add(folder_of(target))
    return dict(folders)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


if __name__ == "__main__":
    for folder, targets in sorted(folder_graph().items()):
        print(f"{folder:>10} → {', '.join(sorted(targets)) or '(nothing)'}")
