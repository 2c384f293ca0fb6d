"""The records ``ragdiag pipeline`` writes besides the stages' own: ``meta.pipeline`` of its
``correlation.json`` (:class:`PipelineMeta`) and, with ``--corpus``, ``corpus_run.json``
(:class:`CorpusRunManifest`: what was ranked, how, and where every stage wrote).

``from_json(doc).to_json() == doc``, key order included (:mod:`ragdiag.results.base`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord
from ragdiag.results.llm_run import GateCounts, RunMeta


@dataclass(kw_only=True)
class StageGates(JsonRecord):
    """``meta.pipeline.reference_gate``: the generate and grade stages' reference-gate counts."""

    generate: GateCounts | None = None
    grade: GateCounts | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"generate": GateCounts, "grade": GateCounts}
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class PipelineMeta(JsonRecord):
    """``meta.pipeline`` of the pipeline's ``correlation.json``: the stages' meta blocks, their
    reference-gate counts, and the ``ragdiag correlate`` command that redoes the last stage."""

    command: str = "pipeline"
    equivalent_command: str = ""
    generate_meta: RunMeta = field(default_factory=RunMeta)
    grade_meta: RunMeta = field(default_factory=RunMeta)
    reference_gate: StageGates = field(default_factory=StageGates)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"generate_meta": RunMeta, "grade_meta": RunMeta,
                                                     "reference_gate": StageGates}


@dataclass(kw_only=True)
class QueryCounts(JsonRecord):
    """``meta.queries`` of ``corpus_run.json``: judged queries with a relevant passage, those used, those
    left out (more relevant passages than ``ideal_cap``; the first 50 ids), and queries without judgements."""

    judged_with_relevant: int = 0
    used: int = 0
    left_out: int = 0
    left_out_ids: list[str] = field(default_factory=list)
    not_judged: int = 0
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class CorpusRunMeta(JsonRecord):
    """``meta`` of ``corpus_run.json``: what was ranked, how, and where every stage wrote."""

    command: str | None = None
    dataset: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    retrievers: list[dict[str, str]] = field(default_factory=list)
    embedders: Any = None
    ks: list[int] = field(default_factory=list)
    depth: int | None = None
    ideal_cap: int | None = None
    ideal: str | None = None
    nc: str | None = None
    short_lists_dropped: int | None = None
    queries: QueryCounts = field(default_factory=QueryCounts)
    ranked_samples: int | None = None
    qrels_graded: bool | None = None
    evaluate: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"queries": QueryCounts}


@dataclass
class CorpusRunManifest(JsonRecord):
    """``corpus_run.json``: the meta and the run record (the pipeline's, with the corpus files first)."""

    meta: CorpusRunMeta = field(default_factory=CorpusRunMeta)
    run_record: dict[str, Any] = field(default_factory=dict)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": CorpusRunMeta}
    optional: ClassVar[frozenset[str] | None] = frozenset()
