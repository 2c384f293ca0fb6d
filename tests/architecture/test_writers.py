"""Only ``commands/`` writes files and stamps run records (issue 30: check → read → compute → write → stamp).

Every module outside ``ragdiag/commands/`` and ``ragdiag/io/`` (the writer, the run record) is read
with ``ast`` — nothing is imported — and refused when it calls a writing function or stamps a run
record, unless :data:`EXCEPTIONS` names it with the reason: persistent stores whose whole job is to
persist. An entry whose module no longer writes fails too, so the list stays true.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.import_graph import PACKAGE_DIR
from tests.architecture.source_trees import nodes

# The one writer (io/writer: write_text, write_bytes, write_json, write_jsonl, atomic_path,
# write_figure; io/out_format.write_result), pathlib's own writers, numpy / faiss / matplotlib /
# pyarrow / pandas savers, json/pickle dump, folder and file creation or removal, temporary files.
WRITING_CALLS = frozenset({
    "write_text", "write_bytes", "write_json", "write_jsonl", "atomic_path", "write_result", "write_figure",
    "savefig", "save", "savez", "savez_compressed", "savetxt", "write_index", "to_parquet", "write_table",
    "dump", "mkdir", "makedirs", "touch", "unlink", "rmdir", "removedirs", "rmtree",
    "mkdtemp", "mkstemp", "NamedTemporaryFile", "TemporaryDirectory",
})
SHUTIL_WRITES = frozenset({"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move", "rmtree", "make_archive",
                           "unpack_archive", "copymode", "copystat", "chown"})
OS_WRITES = frozenset({"remove", "unlink", "rename", "replace", "renames", "truncate", "link", "symlink"})
STAMPING_CALLS = frozenset({"start_run", "stamp", "stamp_record"})  # io/run_record
MODULE_OPENS = frozenset({"gzip", "bz2", "lzma", "io", "codecs", "builtins"})  # X.open(path, mode)
OS_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")
ALLOWED_FOLDERS = ("commands", "io")

# module (relative to ragdiag/) → why it may write: stores whose whole job is to persist.
EXCEPTIONS: dict[str, str] = {
    "config.py": "resolve_cache_dir creates the cache folder, the home of the persistent LLM and embedding call caches",
    "remote/store.py": "the SQLite store behind the LLM and embedding call caches creates its folder; persisting "
                       "calls across runs is its whole job",
    "llm/batch.py": "a batch folder is the durable state of one batch job between 'batch submit', 'status' and "
                    "'collect' (state file, request chunks and their index, failures)",
    "retrieval/store.py": "the index store: writes an index folder's files (faiss index, doc ids, passage owners) "
                          "and removes what an earlier build left",
    "retrieval/indexes.py": "faiss writes an index only by file name (save_index, called by retrieval/store.py inside "
                            "io/writer.atomic_path)",
    "retrieval/bm25.py": "the BM25 index saves itself into the index folder and loads itself back",
    "retrieval/pgvector_server.py": "the embedded PostgreSQL's temporary data folder, made and removed around the "
                                    "server's life",
}

def _imported_names(module_nodes: tuple[ast.AST, ...]) -> dict[str, tuple[str, str]]:
    """local name → (module, original name) of every ``from X import Y [as Z]``."""
    return {alias.asname or alias.name: (node.module or "", alias.name)
            for node in module_nodes if isinstance(node, ast.ImportFrom) for alias in node.names}


def _is_write_mode(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(set(node.value) & set("wax+"))


def _writes(call: ast.Call, imported: dict[str, tuple[str, str]]) -> str | None:
    """What ``call`` writes or stamps (``"open(w)"``, ``"os.replace"`` …), or None."""
    func = call.func
    if isinstance(func, ast.Attribute):
        name, receiver = func.attr, ast.unparse(func.value)
    elif isinstance(func, ast.Name):
        receiver, name = imported.get(func.id, ("", func.id))
    else:
        return None
    if name in STAMPING_CALLS:
        return f"stamps ({name})"
    if receiver == "shutil":
        return f"shutil.{name}" if name in SHUTIL_WRITES else None
    if receiver == "os":
        if name == "open":
            flags = " ".join(ast.unparse(a) for a in call.args[1:])
            return "os.open (write flags)" if any(f in flags for f in OS_WRITE_FLAGS) else None
        if name in OS_WRITES:
            return f"os.{name}"
    if name in WRITING_CALLS:
        return name
    if name == "open":
        bare = isinstance(func, ast.Name) or receiver in MODULE_OPENS
        modes = [*call.args[1:2]] if bare else [*call.args[:1]]  # open(path, mode) / Path.open(mode)
        modes += [k.value for k in call.keywords if k.arg == "mode"]
        return "open(w)" if any(_is_write_mode(m) for m in modes) else None
    if name in {"rename", "replace"} and isinstance(func, ast.Attribute) and len(call.args) == 1 \
            and not call.keywords and receiver != "dataclasses":
        return name  # Path.rename(target) / Path.replace(target); str.replace takes two arguments
    return None


def _stamps_by_hand(node: ast.Assign) -> bool:
    """``x.run_record = record.as_dict()`` / ``doc["run_record"] = record.as_dict()``: a stamp without :func:`stamp`."""
    value = node.value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "as_dict"):
        return False
    return any((isinstance(t, ast.Attribute) and t.attr == "run_record")
               or (isinstance(t, ast.Subscript) and ast.unparse(t.slice) in ("'run_record'", "RUN_RECORD_KEY"))
               for t in node.targets)


def offenders(package: Path = PACKAGE_DIR) -> dict[str, list[str]]:
    """module (relative to ``ragdiag/``) → ``"line: what"`` for every write or stamp outside commands/ and io/."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.split("/")[0] in ALLOWED_FOLDERS:
            continue
        imported = _imported_names(nodes(path))
        for node in nodes(path):
            if isinstance(node, ast.Call) and (what := _writes(node, imported)):
                found.setdefault(rel, []).append(f"{node.lineno}: {what}")
            elif isinstance(node, ast.Assign) and _stamps_by_hand(node):
                found.setdefault(rel, []).append(f"{node.lineno}: stamps (run_record = ….as_dict())")
    return found


def test_only_commands_write_files_and_stamp_run_records():
    wrong = [f"ragdiag/{module}:{hit}" for module, hits in offenders().items()
             if module not in EXCEPTIONS for hit in hits]
    assert wrong == [], ("library modules write files or stamp run records; return objects and let commands/ "
                         "write them (or list a persistent store in EXCEPTIONS with its reason):\n" + "\n".join(wrong))


def test_every_listed_module_still_needs_its_entry():
    found = offenders()
    stale = sorted(m for m in EXCEPTIONS if m not in found)
    assert stale == [], f"these modules no longer write or stamp: remove them from EXCEPTIONS: {stale}"
    assert all(reason.strip() for reason in EXCEPTIONS.values())


def test_the_scan_sees_every_kind_of_write(tmp_path):
    """The detector on a module holding one of each write (and things that only look like one)."""
    package = tmp_path / "ragdiag"
    (package / "lib").mkdir(parents=True)
    (package / "commands").mkdir()
    (package / "commands" / "ok.py").write_text("from ragdiag.io.writer import write_json\nwrite_json('a', 1)\n")
    (package / "lib" / "m.py").write_text(
        "import json, os, shutil, gzip, dataclasses\n"
        "import numpy as np\n"
        "from ragdiag.io.writer import write_jsonl as put\n"
        "from ragdiag.io.run_record import start_run, stamp\n"
        "open('x', 'w')\nopen('x')\nopen('x', mode='a')\ngzip.open('x', 'wt')\np.open('w')\np.open()\n"
        "p.write_text('t')\njson.dump({}, h)\njson.dumps({})\nnp.save('x', a)\nfig.savefig('x.png')\n"
        "t.to_parquet('x')\npq.write_table(t, 'x')\np.mkdir()\np.unlink()\nos.replace('a', 'b')\n"
        "p.rename(q)\n'abc'.replace('a', 'b')\ndataclasses.replace(r, a=1)\nshutil.copy('a', 'b')\n"
        "shutil.which('x')\nput('x', [])\nrecord = start_run('ragdiag x')\nstamp({}, record)\n"
        "os.open('x', os.O_WRONLY | os.O_CREAT)\nos.open('x', os.O_RDONLY)\n"
        "doc.run_record = record.as_dict()\ndoc['run_record'] = self.run_record\nstats = client.stats.as_dict()\n")
    hits = offenders(package)
    assert list(hits) == ["lib/m.py"]
    kinds = [hit.split(": ", 1)[1] for hit in hits["lib/m.py"]]
    assert sorted(kinds) == sorted([
        "open(w)", "open(w)", "open(w)", "open(w)", "write_text", "dump", "save", "savefig", "to_parquet",
        "write_table", "mkdir", "unlink", "os.replace", "rename", "shutil.copy", "write_jsonl",
        "stamps (start_run)", "stamps (stamp)", "os.open (write flags)", "stamps (run_record = ….as_dict())"]), kinds
