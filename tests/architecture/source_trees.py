"""The package's source read with ``ast`` once per test process, shared by the static checks.

Each check (import graph, writers, result shapes, the one DCG…) walked every module of ``ragdiag/``
again: ~1.5 s of CPU per parse of the whole package, a dozen times a run. A tree is cached under its
path, modification time and size, so an edited file is read afresh; the trees are shared, read-only.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[ast.Module, tuple[ast.AST, ...]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return tree, tuple(ast.walk(tree))


def _key(path: Path) -> tuple[Path, int, int]:
    stat = path.stat()
    return path.resolve(), stat.st_mtime_ns, stat.st_size


def tree(path: Path) -> ast.Module:
    """The parsed module at ``path`` (shared: do not change it)."""
    return _parsed(*_key(path))[0]


def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the module at ``path``, in ``ast.walk`` order."""
    return _parsed(*_key(path))[1]
