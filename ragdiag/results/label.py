"""The result of ``ragdiag label`` as objects: the manifest written beside the graded qrels
(``OUT.manifest.json``) and the totals printed after a run.

``LabelManifest.to_json()`` is that manifest (keys and order as in every earlier release: meta, run,
pool, summary, failures, unparsed, then refine, repeats and human when present, then the run record);
``LabelManifest.from_json()`` reads one back. Import-light (no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord
from ragdiag.results.llm_run import RunDetails, RunMeta

OPTIONAL_SECTIONS = ("refine", "repeats", "human")


@dataclass
class LabelPool(JsonRecord):
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
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class RefineTotals(JsonRecord):
    """What the listwise refinement did, over every query."""

    queries: int
    judgements: int
    failed_batches: int
    stable: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class HumanAgreement(JsonRecord):
    """Judge against human grades on the shared (query, passage) pairs; None where undefined."""

    pairs: int
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    mean_abs_diff: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class LabelManifest(JsonRecord):
    """``OUT.manifest.json`` of ``ragdiag label``: meta, run, pool, summary, failures, unparsed, then
    refine, repeats and human when present, then the run record."""

    meta: RunMeta
    run: RunDetails
    pool: LabelPool
    summary: dict[str, Any]
    failures: list[Any] = field(default_factory=list)
    unparsed: list[Any] = field(default_factory=list)
    refine: dict[str, Any] | None = None
    repeats: dict[str, Any] | None = None
    human: dict[str, Any] | None = None
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": RunMeta, "run": RunDetails, "pool": LabelPool}
    optional: ClassVar[frozenset[str] | None] = frozenset({*OPTIONAL_SECTIONS, "run_record"})

    @property
    def refine_totals(self) -> RefineTotals | None:
        block = self.summary.get("refine")
        return RefineTotals.from_json(block) if block else None

    @property
    def human_agreement(self) -> HumanAgreement | None:
        block = self.summary.get("human")
        return HumanAgreement.from_json(block) if block else None
