"""``ragdiag data get|list``: fetch public BEIR-style sets into the data folder, verify them, list them.

A fetched set is a folder ``DATA/<name>/`` in the BEIR layout ragdiag's loaders read
(``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``) plus ``manifest.json``: the counts, each
file's bytes and sha256, where the rows came from, and the run record. The folder is written under a
temporary name and renamed into place once verified, so an interrupted fetch leaves nothing
half-written under the final name. ``data list`` re-hashes each file against its manifest.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ragdiag.config import default_data_dir
from ragdiag.data.public_sets import (
    HUB,
    PUBLIC_SETS,
    FetchedSet,
    FetchError,
    fetch,
    public_set,
)
from ragdiag.errors import RagdiagError
from ragdiag.io.files import file_sha256
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import check_output_dir, write_json, write_jsonl, write_text
from ragdiag.results.data import GetResult, ListResult, SetStatus

MANIFEST = "manifest.json"
SOURCE_ENV = "RAGDIAG_DATA_SOURCE"


@dataclass
class GetRequest:
    """``data get NAME``: where to put it (None = the data folder), where to read it (None = its public
    origin, or ``$RAGDIAG_DATA_SOURCE``), how many passages (None = the set's default; 0 = all)."""

    name: str
    data_dir: Path | None = None
    source: Path | None = None
    sample: int | None = None
    force: bool = False
    show_progress: bool = True


@dataclass
class ListRequest:
    data_dir: Path | None = None


def resolve_data_dir(data_dir: Path | None) -> Path:
    """``--dir``, else ``$RAGDIAG_DATA``, else the user data dir."""
    return Path(data_dir).expanduser() if data_dir else default_data_dir()


def _source(source: Path | None) -> str:
    chosen = source or os.environ.get(SOURCE_ENV) or None
    if chosen is None:
        return HUB
    if not Path(chosen).is_dir():
        raise RagdiagError(f"--source {chosen}: not a folder (a local mirror of the hub's layout)")
    return str(chosen)


def verify(fetched: FetchedSet, name: str) -> dict[str, int]:
    """Counts after checking: ids unique and non-empty, texts non-empty, every qrels id known."""
    counts = {"corpus": len(fetched.corpus), "queries": len(fetched.queries)}
    for what, rows in (("corpus", fetched.corpus), ("queries", fetched.queries)):
        ids = [row["_id"] for row in rows]
        if not ids:
            raise FetchError(f"{name}: the {what} is empty")
        if len(set(ids)) != len(ids) or "" in ids:
            raise FetchError(f"{name}: the {what} has empty or duplicate ids")
        empty = next((row["_id"] for row in rows if not row["text"].strip()), None)
        if empty is not None:
            raise FetchError(f"{name}: {what} record '{empty}' has an empty text")
    docs, queries = {r["_id"] for r in fetched.corpus}, {r["_id"] for r in fetched.queries}
    for file, rels in fetched.qrels.items():
        if not rels:
            raise FetchError(f"{name}: qrels/{file} is empty")
        bad = next(((q, d) for q, d, _ in rels if q not in queries or d not in docs), None)
        if bad is not None:
            raise FetchError(f"{name}: qrels/{file} names query '{bad[0]}' / passage '{bad[1]}', not in the set")
        counts[f"qrels/{file}"] = len(rels)
    return counts


class FileEntry(TypedDict):
    """One file of a set's manifest: its size and sha256."""

    bytes: int
    sha256: str


def _file_entries(folder: Path) -> dict[str, FileEntry]:
    return {str(p.relative_to(folder)): {"bytes": p.stat().st_size, "sha256": file_sha256(p)}
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST}


def _write(fetched: FetchedSet, folder: Path) -> None:
    write_jsonl(folder / "corpus.jsonl", fetched.corpus)
    write_jsonl(folder / "queries.jsonl", fetched.queries)
    for file, rels in fetched.qrels.items():
        write_text(folder / "qrels" / file,
                   "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rels))


def _inside(rel: str) -> bool:
    """A relative path that stays inside the set's folder (no absolute path, no ``..``)."""
    from pathlib import PurePosixPath, PureWindowsPath

    parts = PurePosixPath(rel).parts
    return bool(rel) and not PurePosixPath(rel).is_absolute() and not PureWindowsPath(rel).is_absolute() \
        and ".." not in parts and "\\" not in rel


def check_manifest(manifest: Any, path: Path) -> None:
    """A set's ``manifest.json`` as ``data get`` writes it: an object whose ``files`` maps paths inside
    the folder to ``{"bytes", "sha256"}``, ``counts`` names to counts, ``sample`` a count. One line
    naming the file and the field otherwise (a tampered manifest is never followed outside the folder)."""
    from ragdiag.errors import DataError

    again = f"; fetch the set again with `ragdiag data get {path.parent.name} --force`"

    def bad(field: str, problem: str) -> DataError:
        return DataError.at(str(path), None, field, problem + again)

    if not isinstance(manifest, dict):
        raise DataError(f"{path}: expected a JSON object, got {type(manifest).__name__}{again}")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise bad("files", f"expected an object of file entries, got {files!r}")
    for rel, entry in files.items():
        if not _inside(rel):
            raise bad("files", f"{rel!r} is not a path inside the set's folder")
        if not isinstance(entry, dict) or not _count(entry.get("bytes")) or not isinstance(entry.get("sha256"), str):
            raise bad(f"files.{rel}", f"expected {{\"bytes\": a whole number, \"sha256\": a string}}, got {entry!r}")
    counts = manifest.get("counts", {})
    if not isinstance(counts, dict) or not all(_count(v) for v in counts.values()):
        raise bad("counts", f"expected an object of whole numbers, got {counts!r}")
    if not _count(manifest.get("sample", 0)):
        raise bad("sample", f"expected a whole number >= 0, got {manifest.get('sample')!r}")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_folder(folder: Path) -> tuple[str, dict[str, Any]]:
    """(state, manifest) of a set's folder: the manifest checked (:func:`check_manifest`), then every
    file it names re-hashed."""
    import json

    if not folder.is_dir():
        return "absent", {}
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "incomplete (no readable manifest.json)", {}
    check_manifest(manifest, folder / MANIFEST)
    for rel, entry in manifest["files"].items():
        path = folder / rel
        if not path.is_file():
            return f"missing {rel}", manifest
        if path.stat().st_size != entry.get("bytes") or file_sha256(path) != entry.get("sha256"):
            return f"changed {rel} (sha256 differs from manifest)", manifest
    return "ok", manifest


def _get(request: GetRequest) -> GetResult:
    spec = public_set(request.name)
    sample = spec.default_sample if request.sample is None else request.sample
    source = _source(request.source)
    root = check_output_dir(resolve_data_dir(request.data_dir), "data folder")
    final = root / spec.name
    if final.is_dir() and not request.force:  # a link to a set's folder is read as one
        state, manifest = check_folder(final)
        if state == "ok" and manifest.get("sample", 0) == sample:
            return GetResult(spec.name, final, False, manifest)
        detail = state if state != "ok" else f"fetched with --sample {manifest.get('sample', 0)}"
        raise RagdiagError(f"{final} exists ({detail}); give --force to fetch it again")
    if final.is_symlink() or final.exists() and not final.is_dir():
        what = f"a symbolic link to {os.readlink(final)}" if final.is_symlink() else "not a folder"
        raise RagdiagError(f"{final} is {what}: data get replaces only a folder of its own; remove it, "
                           "or give --dir the folder that should hold the set (nothing was changed)")
    record = start_run("ragdiag data get")
    fetched = fetch(spec, source, sample, request.show_progress)
    counts = verify(fetched, spec.name)
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}.", suffix=".partial", dir=root))
    except OSError as err:
        raise RagdiagError(f"cannot create the data folder {root} ({err.strerror})") from None
    try:
        _write(fetched, staging)
        manifest = {"name": spec.name, "description": spec.description, "origin": fetched.origin,
                    "license": spec.license, "sample": sample, "counts": counts, "notes": fetched.notes,
                    "files": _file_entries(staging)}
        write_json(staging / MANIFEST, stamp(manifest, record))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes it 0700; the data folder is as readable as any other
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return GetResult(spec.name, final, True, manifest)


def _list(request: ListRequest) -> ListResult:
    root = resolve_data_dir(request.data_dir)
    sets = []
    for spec in PUBLIC_SETS.values():
        state, manifest = check_folder(root / spec.name)
        sets.append(SetStatus(spec.name, spec.description, spec.origin, spec.license, root / spec.name, state,
                              manifest.get("counts", {}), manifest.get("sample", 0)))
    return ListResult(root, sets)


def run(request: GetRequest | ListRequest) -> GetResult | ListResult:
    """Fetch one set (:class:`GetRequest`) or list the data folder (:class:`ListRequest`)."""
    if isinstance(request, GetRequest):
        return _get(request)
    return _list(request)
