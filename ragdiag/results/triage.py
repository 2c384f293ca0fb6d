"""The result of ``ragdiag triage`` (``triage.json``) as objects (:mod:`ragdiag.results.base`):
:class:`TriageResult` holds the run's :class:`TriageMeta`, one :class:`TriagedQuery` per triaged query,
a :class:`CauseShare` per cause, the paid calls (:class:`TriageCalls`), the cost (:class:`TriageCost`),
the queries left out (:class:`LeftOut`) and, with single-passage, eRAG's τ (:class:`ERagSummary`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord

WRITE_NULLS: frozenset[str] = frozenset()  # a record built in code writes its null fields too


@dataclass(kw_only=True)
class TriageMeta(JsonRecord):
    """What was triaged and how: the data, K, the pool depth, the interventions, the grading reference."""

    command: str = "ragdiag triage"
    ragdiag_version: str | None = None
    dataset: str | None = None
    retriever: str | None = None
    n_queries: int = 0
    k: int = 0
    depth: int | None = None
    k_sweep: list[int] = field(default_factory=list)
    fail_below: float = 3.0
    all: bool = False
    interventions: list[str] = field(default_factory=list)
    exhaustive: bool = False
    ideal_cap: int = 0
    bootstrap: int = 0
    seed: int = 0
    repeats: int = 1  # --repeats: generations and gradings per variant (a fix holds on every one)
    intervals: str = "queries"  # what the shares' intervals resample: queries, or queries and repeats
    graded_against: str | None = None
    baseline: str = "generated on the top K"
    fix: str | None = None
    llm: dict[str, Any] = field(default_factory=dict)
    optional: ClassVar[frozenset[str] | None] = WRITE_NULLS


@dataclass(kw_only=True)
class TriagedQuery(JsonRecord):
    """A triaged query: primary cause, the later causes that also fixed it, every grade, its paid calls."""

    id: str | None = None
    cause: str | None = None
    also: list[str] = field(default_factory=list)
    grades: dict[str, float | None] = field(default_factory=dict)
    calls: int | None = None
    evidence: list[str] = field(default_factory=list)  # what the cause rests on: qrels, references
    optional: ClassVar[frozenset[str] | None] = WRITE_NULLS


@dataclass(kw_only=True)
class CauseShare(JsonRecord):
    """One cause over the failing queries: share = count / n with its 95% bootstrap interval, its fix, and how
    many of its queries rest on each evidence (qrels, references)."""

    share: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    count: int = 0
    fix: str = ""
    evidence: dict[str, int] = field(default_factory=dict)  # evidence (qrels, references) → queries resting on it
    optional: ClassVar[frozenset[str] | None] = WRITE_NULLS


@dataclass(kw_only=True)
class TriageCalls(JsonRecord):
    """Paid and reused calls, and how they spread over the triaged queries and the interventions."""

    paid: int = 0
    reused: int = 0
    triaged_queries: int = 0
    failing_queries: int = 0
    paid_triaged: int = 0
    paid_per_triaged_query: float | None = None
    baseline_queries: int = 0
    contexts_per_intervention: dict[str, int] = field(default_factory=dict)
    optional: ClassVar[frozenset[str] | None] = WRITE_NULLS


@dataclass(kw_only=True)
class TriageCost(JsonRecord):
    """The cost computed before any call (worst case, cheapest and dearest query), the cap and what was paid."""

    worst_case_calls: int = 0
    cheapest_query: int = 0
    dearest_query: int = 0
    exact: bool = False
    max_calls: int | None = None
    paid: int = 0
    client: dict[str, Any] = field(default_factory=dict)
    optional: ClassVar[frozenset[str] | None] = WRITE_NULLS


@dataclass(kw_only=True)
class LeftOut(JsonRecord):
    """A query the run did not triage, and why (its baseline not graded, the --max-calls cap)."""

    id: str = ""
    reason: str = ""


@dataclass(kw_only=True)
class KendallTau(JsonRecord):
    """Kendall's τ-b and its p-value over ``n`` queries (None when undefined)."""

    tau: float | None = None
    p_value: float | None = None
    n: int = 0
    optional: ClassVar[frozenset[str] | None] = WRITE_NULLS


@dataclass(kw_only=True)
class ERagSummary(JsonRecord):
    """eRAG: τ of utility and of relevance (each aggregation) against the end-to-end grade."""

    queries: int = 0
    against: str = ""
    utility: dict[str, KendallTau] = field(default_factory=dict)
    relevance: dict[str, KendallTau] = field(default_factory=dict)
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"utility": KendallTau, "relevance": KendallTau}


@dataclass(kw_only=True)
class TriageResult(JsonRecord):
    """``triage.json``: meta, queries, cause → :class:`CauseShare`, calls, cost, left out, notes, eRAG τ, run record."""

    meta: TriageMeta = field(default_factory=TriageMeta)
    queries: list[TriagedQuery] = field(default_factory=list)
    causes: dict[str, CauseShare] = field(default_factory=dict)
    calls: TriageCalls = field(default_factory=TriageCalls)
    cost: TriageCost = field(default_factory=TriageCost)
    left_out: list[LeftOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    erag: ERagSummary | None = None
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": TriageMeta, "queries": TriagedQuery,
                                                     "calls": TriageCalls, "cost": TriageCost, "left_out": LeftOut,
                                                     "erag": ERagSummary}
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"causes": CauseShare}
    optional: ClassVar[frozenset[str] | None] = frozenset({"erag", "run_record"})

    def rests_on(self, cause: str) -> str:
        """``qrels 5/5, references 5/5``: how many of the cause's queries rest on each evidence."""
        v = self.causes[cause]
        return ", ".join(f"{kind} {n}/{v.count}" for kind, n in sorted(v.evidence.items())) or "n/a"

    def ranked_causes(self) -> list[tuple[str, CauseShare]]:
        """Causes with at least one query, largest share first."""
        return sorted(((c, v) for c, v in self.causes.items() if v.count), key=lambda cv: -cv[1].count)

    def decision(self) -> str:
        """The headline: the largest cause, its share with its interval, and its lever."""
        ranked = self.ranked_causes()
        if not ranked:
            return "no failing query was triaged"
        cause, v = ranked[0]
        ci = "" if v.ci_low is None or v.ci_high is None else f" [{v.ci_low:.0%}, {v.ci_high:.0%}]"
        share = "n/a" if v.share is None else f"{v.share:.0%}"
        return f"{cause} explains {share}{ci} of the failures: {v.fix}"
