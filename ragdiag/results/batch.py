"""The result of ``ragdiag batch status|collect|cancel``: the batch folder's files after the action and
what a collect put into the cache, as printed with ``--json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ragdiag.results.base import JsonRecord


class CollectTotals(Protocol):
    """What one collection put into the cache (:class:`ragdiag.llm.batch.Collected`)."""

    answered: int
    failures: list[dict[str, str]]
    prompt_tokens: int
    completion_tokens: int
    cost_batch: float | None
    cost_sync: float | None


class Stamp(Protocol):
    """A run record (:class:`ragdiag.io.run_record.RunRecord`)."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass
class BatchResult(JsonRecord):
    """The folder's files after the action (``entries``, ``open`` = not yet collected), what a collect
    put into the cache (answered, failed, tokens, cost at batch and synchronous prices), what was
    cancelled, and the run record."""

    action: str
    folder: Path
    entries: list[dict[str, Any]]
    collected: CollectTotals
    cancelled: list[str] = field(default_factory=list)
    record: Stamp | None = field(default=None, compare=False)
    layout: ClassVar[tuple[str, ...] | None] = (
        "action", "folder", "entries", "open", "answered", "failed", "prompt_tokens", "completion_tokens",
        "cost_batch", "cost_sync", "cancelled", "run_record")
    optional: ClassVar[frozenset[str] | None] = frozenset({"run_record"})

    @property
    def open(self) -> int:
        """Files not collected yet."""
        return sum(1 for e in self.entries if not e["collected"])

    def field_value(self, key: str) -> Any:
        if key == "open":
            return self.open
        if key == "failed":
            return len(self.collected.failures)
        if key == "run_record":
            return None if self.record is None else self.record.to_json()
        if key in ("answered", "prompt_tokens", "completion_tokens", "cost_batch", "cost_sync"):
            return getattr(self.collected, key)
        return super().field_value(key)
