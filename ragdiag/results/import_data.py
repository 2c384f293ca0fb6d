"""The result of ``ragdiag import``: the manifest ``import.manifest.json`` (``meta``, ``written``,
``run_record``) and the folder written.

``ImportResult.from_json(doc).to_json() == doc``, key order included (:mod:`ragdiag.results.base`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class ImportMeta(JsonRecord):
    """What was imported: the tool and file, the system and subset names, the score column and its scale."""

    command: str
    source: str
    system: str
    subset: str
    score_col: str | None
    score_scale: str | None
    records: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class ImportResult(JsonRecord):
    """The manifest ``import.manifest.json`` (``meta``, ``written``, ``run_record``) and the folder."""

    meta: ImportMeta
    written: list[str]
    run_record: dict[str, Any] | None = None
    out: Path | None = field(default=None, compare=False)  # the folder written (not part of the JSON)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": ImportMeta}
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "written", "run_record")

    @property
    def graded_name(self) -> str | None:
        """The graded file written, None when the records carried no score."""
        return next((name for name in self.written if name.startswith("graded.")), None)


@dataclass
class TracesMeta(JsonRecord):
    """What ``import traces`` read and kept: spans and traces, the traces kept and those skipped by
    reason, the conventions found, and how many kept traces reached texts/ranked/answers (a relevant
    document in the qrels) and carry a reference answer."""

    command: str
    source: str
    system: str
    subset: str
    spans: int
    traces: int
    kept: int
    skipped: dict[str, int]
    conventions: dict[str, int]
    qrels: str | None
    references: str | None
    labelled: int
    unlabelled: int
    with_reference: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class TracesImportResult(JsonRecord):
    """The manifest ``import-traces.manifest.json`` (``meta``, ``written``, ``run_record``) and the folder."""

    meta: TracesMeta
    written: list[str]
    run_record: dict[str, Any] | None = None
    out: Path | None = field(default=None, compare=False)  # the folder written (not part of the JSON)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": TracesMeta}
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "written", "run_record")
