"""The result of ``ragdiag label`` as objects: the manifest written beside the graded qrels
(``OUT.manifest.json``) and the totals printed after a run.

``LabelManifest.to_json()`` is that manifest (keys and order as in every earlier release: meta, run,
pool, summary, failures, unparsed, then refine, repeats and human when present, then the run record);
``LabelManifest.from_json()`` reads one back. Import-light (no numpy).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OPTIONAL_SECTIONS = ("refine", "repeats", "human")


@dataclass
class LabelPool:
    """The fused candidate pool: its sources, depth, fusion rule, sizes, pruning and grade counts."""

    sources: list[str]
    depth: int
    fusion: str
    queries: int
    pairs: int
    per_source_pairs: dict[str, int]
    pool_size: dict[str, int]
    prune: dict[str, Any]
    grade_counts: dict[str, int]


@dataclass
class RefineTotals:
    """What the listwise refinement did, over every query."""

    queries: int
    judgements: int
    failed_batches: int
    stable: int


@dataclass
class HumanAgreement:
    """Judge against human grades on the shared (query, passage) pairs; None where undefined."""

    pairs: int
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    mean_abs_diff: float | None


@dataclass
class LabelManifest:
    meta: dict[str, Any]
    run: dict[str, Any]
    pool: LabelPool
    summary: dict[str, Any]
    failures: list[Any] = field(default_factory=list)
    unparsed: list[Any] = field(default_factory=list)
    refine: dict[str, Any] | None = None
    repeats: dict[str, Any] | None = None
    human: dict[str, Any] | None = None
    run_record: dict[str, Any] | None = None

    @property
    def refine_totals(self) -> RefineTotals | None:
        block = self.summary.get("refine")
        return RefineTotals(**block) if block else None

    @property
    def human_agreement(self) -> HumanAgreement | None:
        block = self.summary.get("human")
        return HumanAgreement(**block) if block else None

    def sections(self) -> dict[str, Any]:
        """Every section but the run record, in the manifest's order (what the writer stamps)."""
        doc: dict[str, Any] = {"meta": self.meta, "run": self.run, "pool": asdict(self.pool), "summary": self.summary,
                               "failures": self.failures, "unparsed": self.unparsed}
        doc.update({name: getattr(self, name) for name in OPTIONAL_SECTIONS if getattr(self, name) is not None})
        return doc

    def to_json(self) -> dict[str, Any]:
        doc = self.sections()
        if self.run_record is not None:
            doc["run_record"] = self.run_record
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> LabelManifest:
        return cls(doc["meta"], doc["run"], LabelPool(**doc["pool"]), doc["summary"], doc["failures"], doc["unparsed"],
                   *(doc.get(name) for name in OPTIONAL_SECTIONS), doc.get("run_record"))
