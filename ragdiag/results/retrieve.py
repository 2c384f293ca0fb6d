"""The result of ``ragdiag retrieve``: the run file's ``<out>.meta.json`` (``meta`` and
``run_record``) and where the run went."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class RetrieveResult(JsonRecord):
    """``<out>.meta.json``: how the run was made (``meta``: index, mode, k, queries, seconds …) and the run record."""

    meta: dict[str, Any]
    run_record: dict[str, Any]
    out: Path = field(default_factory=Path, compare=False)  # the run file (not part of the JSON)
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "run_record")
    optional: ClassVar[frozenset[str] | None] = frozenset()

    @property
    def n_queries(self) -> int:
        """How many queries were ranked."""
        return int(self.meta["n_queries"])

    @property
    def seconds(self) -> float:
        """Wall time of the ranking."""
        return float(self.meta["seconds"])
