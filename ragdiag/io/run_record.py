"""The run record: how a result was made, written by :func:`stamp` into every JSON result and
manifest under the one key ``run_record``.

Fields: ``command`` (e.g. ``ragdiag correlate``), ``argv``, ``ragdiag_version``, ``versions`` (key
libraries, read from package metadata without importing them), ``python``, ``models``,
``prompts`` (name → version), ``seeds``, ``inputs`` (path, bytes, sha256), ``cache`` (mode),
``started_at`` / ``finished_at`` (UTC, ISO 8601), ``host`` (platform, machine, cores), ``settings``
(each setting of :mod:`ragdiag.io.settings`: value and source — flag, env, file, default); and
``test_server_replies`` when replies of ragdiag's test servers were used during the run
(:mod:`ragdiag.io.provenance`).
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from ragdiag import __version__
from ragdiag.io.files import file_sha256
from ragdiag.io.provenance import marked_replies
from ragdiag.io.redact import redact_arg

RUN_RECORD_KEY = "run_record"
KEY_LIBRARIES = ("numpy", "scipy", "faiss-cpu", "sentence-transformers", "torch", "openai", "voyageai",
                 "bm25s", "rank-bm25", "ir-measures", "psycopg", "datasets")


def package_versions(names: Iterable[str] = KEY_LIBRARIES) -> dict[str, str]:
    """Installed versions from package metadata (no import); absent packages are left out."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def describe_input(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"path", "bytes", "sha256"}`` of an input file; a folder hashes its files' (name, sha256)
    pairs in sorted order; anything else (a hub name, ``bundled``) is kept as a name."""
    p = Path(path)
    if p.is_file():
        return {"path": str(p), "bytes": p.stat().st_size, "sha256": file_sha256(p)}
    if p.is_dir():
        digest, total = hashlib.sha256(), 0
        for child in sorted(q for q in p.rglob("*") if q.is_file()):
            digest.update(f"{child.relative_to(p)}\0{file_sha256(child)}\n".encode())
            total += child.stat().st_size
        return {"path": str(p), "bytes": total, "sha256": digest.hexdigest()}
    return {"name": str(path)}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _host() -> dict[str, Any]:
    return {"platform": platform.platform(), "machine": platform.machine(), "cpu_count": os.cpu_count()}


def _settings() -> dict[str, dict[str, Any]]:
    from ragdiag.io.settings import in_this_run

    return in_this_run()


@dataclass
class RunRecord:
    """How one run was made; see the module docstring for the fields."""

    command: str
    argv: list[str] = field(default_factory=lambda: [redact_arg(arg) for arg in sys.argv[1:]])  # no URL credentials
    ragdiag_version: str = __version__
    versions: dict[str, str] = field(default_factory=package_versions)
    python: str = field(default_factory=platform.python_version)
    models: dict[str, Any] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    cache: str | None = None
    started_at: str = field(default_factory=_now)
    finished_at: str | None = None
    host: dict[str, Any] = field(default_factory=_host)
    settings: dict[str, dict[str, Any]] = field(default_factory=_settings)
    marked_at_start: int = field(default_factory=marked_replies, repr=False)

    def add_inputs(self, *paths: str | os.PathLike[str] | None) -> RunRecord:
        """Record inputs (``None`` skipped) with their size and sha256."""
        self.inputs.extend(describe_input(p) for p in paths if p is not None)
        return self

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON data, ``finished_at`` set to now if still open."""
        data = asdict(self)
        data["finished_at"] = self.finished_at or _now()
        marked = marked_replies() - data.pop("marked_at_start")
        if marked > 0:  # replies of ragdiag's test servers were used: results say so
            data["test_server_replies"] = marked
        return data


def start_run(command: str, *, inputs: Iterable[str | os.PathLike[str] | None] = (),
              models: Mapping[str, Any] | None = None, prompts: Mapping[str, str] | None = None,
              seeds: Mapping[str, int] | None = None, cache: str | None = None) -> RunRecord:
    """Open a record for ``command`` (``"ragdiag correlate"``) at the start of the work."""
    record = RunRecord(command=command, models=dict(models or {}), prompts=dict(prompts or {}),
                       seeds=dict(seeds or {}), cache=cache)
    return record.add_inputs(*inputs)


def stamp(result: dict[str, Any], record: RunRecord) -> dict[str, Any]:
    """Put the record into ``result`` under ``run_record`` (the one key, in every JSON result and manifest)."""
    result[RUN_RECORD_KEY] = record.to_json()
    return result


class Stampable(Protocol):
    """A typed result that takes a key appended after the keys it holds (``results.base.JsonRecord``)."""

    def add(self, key: str, value: Any) -> None: ...


def stamp_record(result: Stampable, record: RunRecord) -> None:
    """:func:`stamp` for a typed result: ``run_record`` appended after the keys it holds."""
    result.add(RUN_RECORD_KEY, record.to_json())


def without_run_record(result: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``result`` without its run record: what identical reruns must reproduce exactly."""
    return {k: v for k, v in result.items() if k != RUN_RECORD_KEY}
