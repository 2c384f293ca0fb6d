"""Result objects of ``ragdiag probe names`` and ``ragdiag noise`` (one per language and embedder),
and of ``probe names --queries`` (names on a user's own queries).

``to_json()`` gives exactly the JSON document the commands write (keys in the same order, NaN
already written as null); ``from_json()`` reads such a document back, including files written
before these objects existed. Optional parts (the corpus, the qrels and the rewrite columns of a
noise level) are absent from the JSON when they were not asked for, and ``None`` here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


def clean_nans(obj: Any) -> Any:
    """Replace float NaN by None recursively (JSON has no NaN)."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean_nans(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clean_nans(v) for v in obj]
    return obj


@dataclass
class MetricChange(JsonRecord):
    """Mean change of one metric over the changed queries, its paired bootstrap interval (None when
    no interval was drawn) and how many queries define it."""

    value: float | None
    ci: list[float] | None
    n_defined: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class WorstQuery(JsonRecord):
    """A query that loses RA-nWG@K: its text before and after, each metric before and after."""

    query_id: str
    original: str
    changed: str
    nrecall4_before: float | None
    ra_nwg_before: float | None
    recall_before: float | None
    nrecall4_after: float | None
    ra_nwg_after: float | None
    recall_after: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class QueryImpact(JsonRecord):
    """One variant of the queries: mean change per metric with its interval, and the worst queries."""

    name: str
    k: int
    changed_queries: int
    unchanged_queries: int
    original: dict[str, float | None]
    changed: dict[str, float | None]
    difference: dict[str, MetricChange]
    worst: list[WorstQuery]
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"difference": MetricChange}
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"worst": WorstQuery}


@dataclass
class TextCounts(JsonRecord):
    total: int
    unique: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class EmbeddingCalls(JsonRecord):
    """Counter difference of one embedder over the probe (0 model calls on a fully cached rerun)."""

    texts: int
    cache_hits: int
    model_calls: int
    embedded: int
    retries: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class ProbeMeta(JsonRecord):
    """How a result was made: command line, versions, embedders, parameters, file hashes, counters."""

    probe: str
    command: str
    ragdiag_version: str
    versions: dict[str, str | None]
    embedders: list[str]
    params: dict[str, Any]
    data_files_sha256: dict[str, str]
    texts: TextCounts
    embedding_calls: EmbeddingCalls
    rewrite: list[dict[str, Any]] | None = None  # noise --rewrite: model, prompt and call counters per language
    optional: ClassVar[frozenset[str] | None] = frozenset({"rewrite"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"texts": TextCounts, "embedding_calls": EmbeddingCalls}
    layout: ClassVar[tuple[str, ...] | None] = ("probe", "command", "ragdiag_version", "versions", "embedders", "params",
                                                "data_files_sha256", "rewrite", "texts", "embedding_calls")


    @property
    def seed(self) -> int:
        """The probe's seed (in ``params``)."""
        return int(self.params["seed"])


@dataclass
class NamesBase(JsonRecord):
    """Δ_name and Δ_topic of the unchanged bundle (mean and between-run SD) and their ratio."""

    delta_name: float | None
    delta_name_sd: float | None
    delta_topic: float | None
    delta_topic_sd: float | None
    name_topic_ratio: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class NamesAblation(JsonRecord):
    """One ablation: its margins, the % and absolute change of Δ_name against base, bundles excluded."""

    name: str
    delta_name: float | None
    delta_name_sd: float | None
    pct_change: float | None
    pct_change_sd: float | None
    abs_change: float | None
    delta_topic: float | None
    delta_topic_sd: float | None
    excluded: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class NamesResult(JsonRecord):
    """The Δ-margin name probe on one language and embedder (docs/methods.md#6-name-probe)."""

    meta: ProbeMeta
    lang: str
    embedder: str
    base: NamesBase
    ablations: list[NamesAblation]
    run_record: dict[str, Any] | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"run_record"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": ProbeMeta, "base": NamesBase, "ablations": NamesAblation}


@dataclass
class RetrievalImpact(JsonRecord):
    """With --corpus: share of the clean query's top K kept, Jaccard overlap and Kendall τ (means)."""

    recall_at_k: float | None
    overlap_at_k: float | None
    kendall_tau: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class RewrittenLevel(JsonRecord):
    """With --rewrite: the rewritten queries' cosines (and retrieval), drop and recovery."""

    cosine_to_clean: float | None
    cosine_to_reference: float | None
    retrieval: RetrievalImpact | None
    drop_pct: float | None
    recovery_pct: float | None
    recovery_flag: str | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset()


_LEVEL = ("level", "name", "cosine_to_clean", "cosine_to_clean_sd", "cosine_to_reference", "cosine_to_reference_sd",
          "drop_pct", "clean_drop_pct", "n_queries", "n_with_reference")
_RETRIEVAL = ("recall_at_k", "overlap_at_k", "kendall_tau")
# with --rewrite: the key of each RewrittenLevel part (its retrieval's keys are prefixed "rewritten_" too)
_REWRITTEN = {"rewritten_cosine_to_clean": "cosine_to_clean", "rewritten_cosine_to_reference": "cosine_to_reference",
              "rewritten_drop_pct": "drop_pct", "recovery_pct": "recovery_pct", "recovery_flag": "recovery_flag"}


@dataclass
class NoiseLevel(JsonRecord):
    """One noise level: cosine to the clean query and to the reference (mean, SD), drops, counts;
    with a corpus ``k`` and ``retrieval`` (and ``qrels_impact`` with --qrels); with --rewrite ``rewritten``.

    ``retrieval`` and ``rewritten`` are written flat in the level's object (``recall_at_k`` …,
    ``rewritten_cosine_to_clean`` …, ``recovery_pct``): :meth:`field_value` and :meth:`fresh_keys`
    name those keys, :meth:`from_json` reads them back."""

    level: int
    name: str
    cosine_to_clean: float | None
    cosine_to_clean_sd: float | None
    cosine_to_reference: float | None
    cosine_to_reference_sd: float | None
    drop_pct: float | None
    clean_drop_pct: float | None
    n_queries: int
    n_with_reference: int
    k: int | None = None
    retrieval: RetrievalImpact | None = None
    qrels_impact: QueryImpact | None = None
    rewritten: RewrittenLevel | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"qrels_impact": QueryImpact}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> NoiseLevel:
        level = super().from_json(doc)
        if "recall_at_k" in doc:
            level.retrieval = RetrievalImpact.from_json({k: doc.get(k) for k in _RETRIEVAL})
        if "recovery_pct" in doc:
            retrieval = (RetrievalImpact.from_json({k: doc.get(f"rewritten_{k}") for k in _RETRIEVAL})
                         if "rewritten_recall_at_k" in doc else None)
            level.rewritten = RewrittenLevel(doc.get("rewritten_cosine_to_clean"), doc.get("rewritten_cosine_to_reference"),
                                             retrieval, doc.get("rewritten_drop_pct"), doc["recovery_pct"],
                                             doc.get("recovery_flag"))
        flat = {*_RETRIEVAL, *(f"rewritten_{k}" for k in _RETRIEVAL), *_REWRITTEN}
        level.extra = {k: v for k, v in level.extra.items() if k not in flat}
        return level

    def fresh_keys(self) -> tuple[str, ...]:
        keys: tuple[str, ...] = _LEVEL
        if self.retrieval is not None:
            keys = (*keys, "k", *_RETRIEVAL)
        if self.qrels_impact is not None:
            keys = (*keys, "qrels_impact")
        rw = self.rewritten
        if rw is not None:
            keys = (*keys, "rewritten_cosine_to_clean", "rewritten_cosine_to_reference")
            if rw.retrieval is not None:
                keys = (*keys, *(f"rewritten_{k}" for k in _RETRIEVAL))
            keys = (*keys, "rewritten_drop_pct", "recovery_pct", *(("recovery_flag",) if rw.recovery_flag else ()))
        return keys

    def field_value(self, key: str) -> Any:
        if key in _RETRIEVAL:
            return getattr(self.retrieval, key, None)
        if key.startswith("rewritten_") and key[len("rewritten_"):] in _RETRIEVAL:
            return getattr(self.rewritten.retrieval if self.rewritten else None, key[len("rewritten_"):], None)
        if key in _REWRITTEN:
            return getattr(self.rewritten, _REWRITTEN[key], None)
        return super().field_value(key)


@dataclass
class NoiseResult(JsonRecord):
    """The conversational-noise probe on one language and embedder (docs/methods.md#7-noise-probe)."""

    meta: ProbeMeta
    lang: str
    embedder: str
    levels: list[NoiseLevel]
    examples: dict[str, str]
    rewritten_examples: dict[str, str] | None = None
    run_record: dict[str, Any] | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"rewritten_examples", "run_record"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": ProbeMeta, "levels": NoiseLevel}


@dataclass
class NamesRealMeta(JsonRecord):
    """How the result was made: the inputs, the language, K, the ablations, bootstrap and seed."""

    command: str
    mode: str
    queries: str
    corpus: str
    qrels: str
    lang: str
    k: int
    ablations: list[str]
    bootstrap: int
    seed: int
    names_file: str | None
    detector: str
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class DetectedQuery(JsonRecord):
    """A judged query holding at least one detected name."""

    query_id: str
    text: str
    names: list[str]
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class NamesRealResult(JsonRecord):
    meta: NamesRealMeta
    detected: list[DetectedQuery]
    impacts: list[QueryImpact]
    judged_queries: int
    embedder: str
    notes: list[str] = field(default_factory=list)
    run_record: dict[str, Any] | None = None
    written: list[Path] = field(default_factory=list)  # what this run wrote (not part of the JSON)
    optional: ClassVar[frozenset[str] | None] = frozenset({"run_record"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": NamesRealMeta, "detected": DetectedQuery, "impacts": QueryImpact}
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "judged_queries", "embedder", "detected", "impacts", "notes",
                                                "run_record")


ProbeResult = NamesResult | NoiseResult


@dataclass
class ProbeRun:
    """What ``probe names`` / ``noise`` return: one result per (language, embedder), written as one
    JSON object when there is one and a list otherwise, plus the notes for stderr.

    Not a :class:`JsonRecord`: its JSON is an object or a list of them (each a :class:`JsonRecord`)."""

    results: list[ProbeResult]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any] | list[dict[str, Any]]:
        docs = [r.to_json() for r in self.results]
        return docs[0] if len(docs) == 1 else docs

    @classmethod
    def from_json(cls, doc: dict[str, Any] | list[dict[str, Any]]) -> ProbeRun:
        return cls([probe_result(d) for d in (doc if isinstance(doc, list) else [doc])])


def probe_result(doc: dict[str, Any]) -> ProbeResult:
    """A names or noise result, by its ``meta.probe`` (or its shape, for a file without one)."""
    probe = (doc.get("meta") or {}).get("probe")
    if probe == "noise" or (probe is None and "levels" in doc):
        return NoiseResult.from_json(doc)
    return NamesResult.from_json(doc)
