"""Renderers receive objects and return text, HTML and figures; they open no file (issue 30).

Every module under ``ragdiag/report`` (the terminal tables, the plots, the HTML report) is read with
``ast``: no call opens, reads, writes, lists or stats a file, saves a figure, makes a folder or a
temporary file, and no module imports the file-touching modules. The commands read the inputs (and
the manifests beside them: :mod:`ragdiag.commands.provenance`) and pass them in; they write what a
renderer returns (``io/writer.write_figure`` for a figure). No exceptions.
"""

from __future__ import annotations

import ast

from tests.architecture.import_graph import PACKAGE_DIR
from tests.architecture.source_trees import nodes

REPORT = PACKAGE_DIR / "report"
# calls by name (a method or a function): reading, writing, listing or checking files, saving figures
FILE_CALLS = {
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "write_json", "write_jsonl", "write_result",
    "write_figure", "atomic_path", "read_json_records", "iter_jsonl", "read_jsonl", "load_json", "loads_file",
    "savefig", "print_figure", "print_png", "imsave", "imread", "to_parquet",
    "mkdir", "makedirs", "touch", "unlink", "rmdir", "rmtree", "rename", "symlink_to", "mkstemp", "mkdtemp",
    "TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile", "exists", "is_file", "is_dir", "glob", "rglob",
    "iterdir", "listdir", "scandir", "walk", "stat", "lstat", "resolve", "realpath", "chmod", "fsync",
}
# calls by module: os.replace / os.remove and json.load / json.dump take files
MODULE_CALLS = {("os", "replace"), ("os", "remove"), ("json", "load"), ("json", "dump"), ("orjson", "dump"),
                ("shutil", "copy"), ("shutil", "move")}
IMPORTS = {"tempfile", "shutil", "ragdiag.io.writer", "ragdiag.io.jsonl", "ragdiag.io.files", "ragdiag.io.paths",
           "ragdiag.io.out_format", "ragdiag.io.run_record", "ragdiag.commands"}


def _call_name(call: ast.Call) -> tuple[str | None, str]:
    func = call.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        return owner, func.attr
    return None, getattr(func, "id", "")


def _imports(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def offences() -> list[str]:
    found = []
    for path in sorted(REPORT.rglob("*.py")):
        where = path.relative_to(PACKAGE_DIR.parent).as_posix()
        for node in nodes(path):
            if isinstance(node, ast.Call):
                owner, name = _call_name(node)
                if name in FILE_CALLS or (owner, name) in MODULE_CALLS:
                    found.append(f"{where}:{node.lineno}: calls {name}()")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found += [f"{where}:{node.lineno}: imports {name}" for name in _imports(node)
                          if any(name == banned or name.startswith(banned + ".") for banned in IMPORTS)]
    return found


def test_renderers_open_no_file():
    found = offences()
    assert found == [], "report/ renders objects it is given; the commands read and write:\n" + "\n".join(found)


def test_the_scan_sees_what_it_refuses(tmp_path, monkeypatch):
    """The scan is not blind: a module that saves a figure, reads a manifest or makes a temporary
    folder is named, line by line."""
    import tests.architecture.test_renderers as scan

    folder = tmp_path / "ragdiag" / "report"
    folder.mkdir(parents=True)
    (folder / "bad.py").write_text(
        "import tempfile\nfrom pathlib import Path\n\n\ndef draw(fig, path):\n    fig.savefig(path)\n"
        "    Path(path).with_name('x.json').read_text()\n    return tempfile.mkdtemp()\n", encoding="utf-8")
    monkeypatch.setattr(scan, "REPORT", folder)
    monkeypatch.setattr(scan, "PACKAGE_DIR", tmp_path / "ragdiag")
    assert scan.offences() == ["ragdiag/report/bad.py:1: imports tempfile", "ragdiag/report/bad.py:6: calls savefig()",
                               "ragdiag/report/bad.py:7: calls read_text()", "ragdiag/report/bad.py:8: calls mkdtemp()"]
