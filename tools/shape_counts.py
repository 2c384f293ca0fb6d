"""Measure the shape issue 30 names: dict returns, string-key subscripts, writers and readers by folder.

Read from the source with ``ast``; nothing is imported. ``python tools/shape_counts.py [--list KIND]``.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ragdiag"
# os.replace / os.rename are left out: the name also matches str.replace and dataclasses.replace
# (tests/architecture/test_writers.py tells them apart by what was imported)
WRITES = {"write_text", "write_bytes", "write_json", "write_jsonl", "write_parquet", "write_figure", "atomic_path",
          "savefig", "save", "write_table", "to_parquet", "dump", "write_result", "touch", "unlink", "mkdir", "rmtree"}
STRICT = ("commands/", "results/", "measures/", "answers/")
STAMPS = {"start_run", "stamp"}
READS = {"read_text", "read_bytes", "load", "loads_file", "read_json", "read_table", "read_jsonl", "iter_jsonl",
         "load_json", "imread"}


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_dict(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation)
    return text.startswith(("dict", "Dict", "'dict", '"dict')) or text in {"Mapping", "dict"}


def _opens_for_write(call: ast.Call) -> bool:
    modes = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax") for m in modes)


def measure() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {k: [] for k in ("dict_returns", "dict_any_returns", "str_subscripts", "writers", "stampers",
                                                   "hand_to_json", "json_record", "renderer_reads")}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        top = rel.split("/")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_dict(node.returns):
                found["dict_returns"].append(f"{where} {node.name}")
                if "Any" in ast.unparse(node.returns) and node.name != "to_json":
                    found["dict_any_returns"].append(f"{where} {node.name}")
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                found["str_subscripts"].append(where)
            elif isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                if "JsonRecord" in bases:
                    found["json_record"].append(f"{where} {node.name}")
                elif any(isinstance(b, ast.FunctionDef) and b.name in {"to_json", "to_dict", "as_dict"} for b in node.body):
                    found["hand_to_json"].append(f"{where} {node.name}")
            elif isinstance(node, ast.Call):
                name = _name(node)
                if top not in {"commands", "io"} and (name in WRITES or (name == "open" and _opens_for_write(node))):
                    found["writers"].append(f"{where} {name}")
                if top != "commands" and name in STAMPS and rel != "io/run_record.py":
                    found["stampers"].append(f"{where} {name}")
                if top == "report" and (name in READS or name == "open"):
                    found["renderer_reads"].append(f"{where} {name}")
    return found


def main() -> None:
    found = measure()
    if len(sys.argv) > 2 and sys.argv[1] == "--list":
        print("\n".join(found[sys.argv[2]]))
        return
    for kind, rows in found.items():
        files = Counter(r.split(":")[0] for r in rows)
        print(f"{kind:16} {len(rows):5}  in {len(files)} modules")
    commands = [r for r in found["dict_returns"] if r.startswith("commands/")]
    strict = [r for r in found["dict_any_returns"] if r.startswith(STRICT)]
    print(f"dict_returns in commands/: {len(commands)}")
    print(f"dict[str, Any] returns (to_json aside) in commands/, results/, measures/, answers/: {len(strict)}")


if __name__ == "__main__":
    main()
