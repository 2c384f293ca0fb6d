"""The result of ``ragdiag triage`` (``triage.json``) as objects (:mod:`ragdiag.results.base`):
:class:`TriageResult` holds one :class:`TriagedQuery` per triaged query and the cause shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class TriagedQuery(JsonRecord):
    """A triaged query: primary cause, the later causes that also fixed it, every grade, its paid calls."""

    id: str | None = None
    cause: str | None = None
    also: list[str] = field(default_factory=list)
    grades: dict[str, float | None] = field(default_factory=dict)
    calls: int | None = None


@dataclass
class TriageResult(JsonRecord):
    """``triage.json``: queries, cause → {share, ci_low, ci_high, count, fix}, calls, cost, and eRAG τ."""

    meta: dict[str, Any] = field(default_factory=dict)
    queries: list[TriagedQuery] = field(default_factory=list)
    causes: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: dict[str, Any] = field(default_factory=dict)
    cost: dict[str, Any] = field(default_factory=dict)
    left_out: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    erag: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"queries": TriagedQuery}

    def ranked_causes(self) -> list[tuple[str, dict[str, Any]]]:
        """Causes with at least one query, largest share first."""
        return sorted(((c, v) for c, v in self.causes.items() if v.get("count")), key=lambda cv: -cv[1]["count"])

    def decision(self) -> str:
        """The headline: the largest cause, its share with its interval, and its lever."""
        ranked = self.ranked_causes()
        if not ranked:
            return "no failing query was triaged"
        cause, v = ranked[0]
        ci = "" if v.get("ci_low") is None else f" [{v['ci_low']:.0%}, {v['ci_high']:.0%}]"
        return f"{cause} explains {v['share']:.0%}{ci} of the failures: {v['fix']}"
