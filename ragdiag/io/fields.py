"""Which field of a user's file is which, and in which format to read it: the one ``Reading`` every
loader of a corpus, questions, qrels, a run or a per-query table takes.

``--fields id=doc_id,text=body`` (or ``--id-field`` … ``--score-field``) names a field per role; a
role not named is found among its common names (:data:`COMMON_NAMES`, first present wins).
``--corpus-format`` … ``--run-format`` force a format; otherwise the suffix (then the content)
decides. Pure declarations: the command line builds a ``Reading`` before any work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from ragdiag.errors import RagdiagError

FORMATS: tuple[str, ...] = ("jsonl", "json", "csv", "tsv", "parquet", "txt", "trec")
ROLES: tuple[str, ...] = ("id", "text", "title", "query", "score", "query_id", "doc_id", "relevance", "rank",
                          "answer")

# role → names recognised without a flag, in order of preference
COMMON_NAMES: dict[str, tuple[str, ...]] = {
    "id": ("_id", "id", "doc_id", "docid", "pid"),
    "text": ("text", "contents", "body", "passage", "chunk"),
    "title": ("title",),
    "query": ("query", "question", "text"),
    "query_id": ("query_id", "query-id", "qid", "question_id"),
    "doc_id": ("doc_id", "corpus-id", "docid", "pid", "passage_id", "_id", "id"),
    "relevance": ("relevance", "score", "rel", "label", "grade"),
    "score": ("score",),
    "rank": ("rank",),
}

# the flag that names each role (``--fields ROLE=NAME`` names any of them)
ROLE_FLAGS: dict[str, str] = {"id": "--id-field", "text": "--text-field", "title": "--title-field",
                              "query": "--query-field", "score": "--score-field"}


def role_flag(role: str, column: str) -> str:
    """The flag a user writes to read ``column`` as ``role``."""
    flag = ROLE_FLAGS.get(role)
    return f"{flag} {column}" if flag else f"--fields {role}={column}"


def parse_fields(text: str) -> dict[str, str]:
    """``id=doc_id,text=body`` → {"id": "doc_id", "text": "body"}; roles from :data:`ROLES`."""
    mapping: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        role, sep, name = (s.strip() for s in part.partition("="))
        if not sep or not role or not name:
            raise RagdiagError(f"--fields '{text}': expected ROLE=FIELD pairs, comma-separated, e.g. id=doc_id,text=body")
        if role not in ROLES:
            raise RagdiagError(f"--fields '{text}': unknown role '{role}'; roles: {', '.join(ROLES)}")
        if role in mapping:
            raise RagdiagError(f"--fields '{text}': role '{role}' is given twice")
        mapping[role] = name
    if not mapping:
        raise RagdiagError(f"--fields '{text}': expected ROLE=FIELD pairs, e.g. id=doc_id,text=body")
    return mapping


def parse_format(text: str) -> str:
    """A format name from :data:`FORMATS` (``ndjson`` is ``jsonl``)."""
    name = text.strip().lower().lstrip(".")
    name = {"ndjson": "jsonl", "pq": "parquet"}.get(name, name)
    if name not in FORMATS:
        raise RagdiagError(f"format '{text}': expected one of {', '.join(FORMATS)}")
    return name


@dataclass(frozen=True)
class Reading:
    """Field names per role and formats per input kind (``corpus``, ``queries``, ``qrels``, ``run``, ``table``),
    plus how a folder of documents is cut into passages (``chunk_size``/``chunk_overlap`` tokens)."""

    fields: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    chunk_size: int = 256
    chunk_overlap: int = 32
    by_document: bool = False  # runs of passages 'path#n' read as runs of documents (see document_of)

    def named(self, role: str) -> str | None:
        return self.fields.get(role)

    def format_of(self, kind: str) -> str | None:
        return self.formats.get(kind)

    @contextmanager
    def activate(self) -> Iterator[Reading]:
        """Make this the reading of every loader called without one (``with reading.activate(): ...``),
        as :meth:`ragdiag.engine.settings.EngineSettings.activate` does for the engine."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


def reading(fields: str | None = None, *, id_field: str | None = None, text_field: str | None = None,
            title_field: str | None = None, query_field: str | None = None, score_field: str | None = None,
            formats: dict[str, str | None] | None = None, chunk_size: int = 256, chunk_overlap: int = 32,
            by_document: bool = False) -> Reading:
    """The ``Reading`` of the command-line options; a role named twice differently is an error."""
    mapping = parse_fields(fields) if fields else {}
    for role, name in (("id", id_field), ("text", text_field), ("title", title_field), ("query", query_field),
                       ("score", score_field)):
        if name is None:
            continue
        if mapping.get(role, name) != name:
            raise RagdiagError(f"{ROLE_FLAGS[role]} {name} and --fields {role}={mapping[role]} disagree; give one")
        mapping[role] = name
    if not 0 <= chunk_overlap < chunk_size:
        raise RagdiagError(f"--chunk-overlap {chunk_overlap} must be smaller than --chunk-size {chunk_size}")
    chosen = {kind: parse_format(value) for kind, value in (formats or {}).items() if value}
    return Reading(mapping, chosen, chunk_size, chunk_overlap, by_document)


DOCUMENT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")


def document_of(passage_id: str) -> str:
    """The document of a passage cut from a folder: ``guide/install.md#3`` → ``guide/install`` (the
    file's relative path without ``#n`` and without its document suffix); any other id is itself."""
    path, sep, number = passage_id.rpartition("#")
    if not sep or not number.isdigit():
        return passage_id
    for suffix in DOCUMENT_SUFFIXES:
        if path.lower().endswith(suffix):
            return path[: -len(suffix)]
    return path


DEFAULT_READING = Reading()
_CURRENT: ContextVar[Reading] = ContextVar("ragdiag_reading", default=DEFAULT_READING)


def current_reading(given: Reading | None = None) -> Reading:
    """``given``, else the reading a command activated, else the default (common names, formats by suffix)."""
    return given if given is not None else _CURRENT.get()
