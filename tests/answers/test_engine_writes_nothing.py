"""The answer engine (``ragdiag/answers/``) writes no file and stamps no run record: ``commands/`` does.

Read from the source with ``ast``: no import of the writer or the run record, no call of a writing
function or method, no ``open`` in a writing mode, and no function annotated to return a ``dict``.
The call cache under ``remote/`` persists the replies of the calls the engine makes through the
client: that is the one allowed exception, and it lives outside this package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "ragdiag" / "answers"
FORBIDDEN_MODULES = ("ragdiag.io.writer", "ragdiag.io.run_record")
WRITES = {"write_text", "write_bytes", "write_json", "write_jsonl", "atomic_path", "savefig", "write_table",
          "to_parquet", "dump", "write_result", "touch", "unlink", "rename", "mkdir", "rmtree", "write_graded_table",
          "start_run", "stamp"}
MODULES = sorted(ENGINE.glob("*.py"))


def _writing_open(call: ast.Call) -> bool:
    modes = call.args[1:2] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+") for m in modes)


def test_the_engine_has_modules():
    assert {p.stem for p in MODULES} >= {"generation", "judging", "contexts", "labelling", "plan", "runs"}


def problems(path: Path) -> list[str]:
    """Imports of the writer or run record, writing calls and dict return annotations in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in FORBIDDEN_MODULES:
            found.append(f"line {node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import) and any(a.name in FORBIDDEN_MODULES for a in node.names):
            found.append(f"line {node.lineno}: imports the writer or the run record")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in WRITES or (name == "open" and _writing_open(node)):
                found.append(f"line {node.lineno}: calls {name}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None \
                and ast.unparse(node.returns).startswith(("dict", "Dict")):
            found.append(f"line {node.lineno}: {node.name} returns {ast.unparse(node.returns)}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_module_writes_nothing_and_returns_no_dict(path):
    assert problems(path) == [], f"{path.name}: " + "; ".join(problems(path))


def test_the_check_sees_a_writer():
    """The same check on the commands' write helpers finds their writes and their run record."""
    found = problems(ENGINE.parent / "commands" / "llm_files.py")
    assert any("ragdiag.io.writer" in f for f in found) and any("calls write_bytes" in f for f in found)
    assert any("calls start_run" in f for f in found)
