"""The results of ``ragdiag data get`` (the folder fetched or verified, its manifest) and ``ragdiag
data list`` (every public set's state in the data folder), as printed with ``--json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class GetResult(JsonRecord):
    """``data get``: the set, its folder, whether it was fetched (False: already there and verified), its manifest."""

    name: str
    path: Path
    fetched: bool  # False: the folder was already there and verified
    manifest: dict[str, Any]
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.path = Path(self.path)


@dataclass
class SetStatus(JsonRecord):
    """One public set in the data folder: what it is, where, its state, its counts and sample size."""

    name: str
    description: str
    origin: str
    license: str
    path: Path
    state: str  # "absent", "ok", "changed: <file>", "incomplete (no manifest)"
    counts: dict[str, int] = field(default_factory=dict)
    sample: int = 0
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.path = Path(self.path)


@dataclass
class ListResult(JsonRecord):
    """``data list``: the data folder and every set's state."""

    data_dir: Path
    sets: list[SetStatus]
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"sets": SetStatus}

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)


@dataclass
class InspectResult(JsonRecord):
    """``data inspect``: what ragdiag sees in a file or folder — its kind, format, row count, the fields
    it uses (role → field) and ignores, three sample records, the problems found, the command to run next."""

    path: Path
    kind: str  # corpus, questions, qrels, run, graded, table
    format: str
    rows: int
    fields_used: dict[str, str]
    fields_ignored: list[str]
    samples: list[dict[str, Any]]
    problems: list[str]
    next_command: str
    run_record: dict[str, Any] | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"run_record"})

    def __post_init__(self) -> None:
        self.path = Path(self.path)
