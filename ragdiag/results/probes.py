"""Result objects of ``ragdiag probe names`` and ``ragdiag noise`` (one per language and embedder),
and of ``probe names --queries`` (names on a user's own queries).

``to_json()`` gives exactly the JSON document the commands write (keys in the same order, NaN
already written as null); ``from_json()`` reads such a document back, including files written
before these objects existed. Optional parts (the corpus, the qrels and the rewrite columns of a
noise level) are absent from the JSON when they were not asked for, and ``None`` here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any


def _known(cls, doc: dict[str, Any], **parts: Any):
    """``cls`` from the fields ``doc`` has (a missing one is None: the HTML report also reads partial
    files), with ``parts`` already converted."""
    return cls(**{f.name: parts[f.name] if f.name in parts else doc.get(f.name) for f in fields(cls)})


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
class MetricChange:
    """Mean change of one metric over the changed queries, its paired bootstrap interval (None when
    no interval was drawn) and how many queries define it."""

    value: float | None
    ci: list[float] | None
    n_defined: int


@dataclass
class WorstQuery:
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


@dataclass
class QueryImpact:
    """One variant of the queries: mean change per metric with its interval, and the worst queries."""

    name: str
    k: int
    changed_queries: int
    unchanged_queries: int
    original: dict[str, float | None]
    changed: dict[str, float | None]
    difference: dict[str, MetricChange]
    worst: list[WorstQuery]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> QueryImpact:
        return cls(**{**doc, "difference": {m: MetricChange(**d) for m, d in doc["difference"].items()},
                      "worst": [WorstQuery(**w) for w in doc["worst"]]})


@dataclass
class TextCounts:
    total: int
    unique: int


@dataclass
class EmbeddingCalls:
    """Counter difference of one embedder over the probe (0 model calls on a fully cached rerun)."""

    texts: int
    cache_hits: int
    model_calls: int
    embedded: int
    retries: int


@dataclass
class ProbeMeta:
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

    @property
    def seed(self) -> int:
        return self.params["seed"]

    def to_json(self) -> dict[str, Any]:
        doc = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("texts", "embedding_calls", "rewrite")}
        if self.rewrite is not None:
            doc["rewrite"] = self.rewrite
        return {**doc, "texts": _plain(self.texts), "embedding_calls": _plain(self.embedding_calls)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ProbeMeta:
        texts, calls = doc.get("texts"), doc.get("embedding_calls")
        return _known(cls, doc, texts=_known(TextCounts, texts) if texts else None,
                      embedding_calls=_known(EmbeddingCalls, calls) if calls else None)


@dataclass
class NamesBase:
    """Δ_name and Δ_topic of the unchanged bundle (mean and between-run SD) and their ratio."""

    delta_name: float | None
    delta_name_sd: float | None
    delta_topic: float | None
    delta_topic_sd: float | None
    name_topic_ratio: float | None


@dataclass
class NamesAblation:
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


@dataclass
class NamesResult:
    """The Δ-margin name probe on one language and embedder (docs/methods.md#6-name-probe)."""

    meta: ProbeMeta
    lang: str
    embedder: str
    base: NamesBase
    ablations: list[NamesAblation]
    run_record: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        doc = {"meta": self.meta.to_json(), "lang": self.lang, "embedder": self.embedder, "base": asdict(self.base),
               "ablations": [asdict(a) for a in self.ablations]}
        return _with_record(doc, self.run_record)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> NamesResult:
        return cls(ProbeMeta.from_json(doc.get("meta") or {}), doc.get("lang"), doc.get("embedder"),
                   _known(NamesBase, doc.get("base") or {}), [_known(NamesAblation, a) for a in doc["ablations"]],
                   doc.get("run_record"))


@dataclass
class RetrievalImpact:
    """With --corpus: share of the clean query's top K kept, Jaccard overlap and Kendall τ (means)."""

    recall_at_k: float | None
    overlap_at_k: float | None
    kendall_tau: float | None


@dataclass
class RewrittenLevel:
    """With --rewrite: the rewritten queries' cosines (and retrieval), drop and recovery."""

    cosine_to_clean: float | None
    cosine_to_reference: float | None
    retrieval: RetrievalImpact | None
    drop_pct: float | None
    recovery_pct: float | None
    recovery_flag: str | None = None


_RETRIEVAL = ("recall_at_k", "overlap_at_k", "kendall_tau")


@dataclass
class NoiseLevel:
    """One noise level: cosine to the clean query and to the reference (mean, SD), drops, counts;
    with a corpus ``k`` and ``retrieval`` (and ``qrels_impact`` with --qrels); with --rewrite ``rewritten``."""

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

    def to_json(self) -> dict[str, Any]:
        doc = {f.name: getattr(self, f.name) for f in fields(self)[:10]}
        if self.retrieval is not None:
            doc.update({"k": self.k, **asdict(self.retrieval)})
        if self.qrels_impact is not None:
            doc["qrels_impact"] = self.qrels_impact.to_json()
        rw = self.rewritten
        if rw is not None:
            doc.update({"rewritten_cosine_to_clean": rw.cosine_to_clean,
                        "rewritten_cosine_to_reference": rw.cosine_to_reference})
            if rw.retrieval is not None:
                doc.update({f"rewritten_{key}": value for key, value in asdict(rw.retrieval).items()})
            doc.update({"rewritten_drop_pct": rw.drop_pct, "recovery_pct": rw.recovery_pct})
            if rw.recovery_flag:
                doc["recovery_flag"] = rw.recovery_flag
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> NoiseLevel:
        retrieval = _known(RetrievalImpact, doc) if "recall_at_k" in doc else None
        impact = QueryImpact.from_json(doc["qrels_impact"]) if "qrels_impact" in doc else None
        rewritten = None
        if "recovery_pct" in doc:
            rw_retrieval = (RetrievalImpact(*(doc.get(f"rewritten_{key}") for key in _RETRIEVAL))
                            if "rewritten_recall_at_k" in doc else None)
            rewritten = RewrittenLevel(doc.get("rewritten_cosine_to_clean"), doc.get("rewritten_cosine_to_reference"),
                                       rw_retrieval, doc.get("rewritten_drop_pct"), doc["recovery_pct"],
                                       doc.get("recovery_flag"))
        return _known(cls, doc, retrieval=retrieval, qrels_impact=impact, rewritten=rewritten)


@dataclass
class NoiseResult:
    """The conversational-noise probe on one language and embedder (docs/methods.md#7-noise-probe)."""

    meta: ProbeMeta
    lang: str
    embedder: str
    levels: list[NoiseLevel]
    examples: dict[str, str]
    rewritten_examples: dict[str, str] | None = None
    run_record: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        doc = {"meta": self.meta.to_json(), "lang": self.lang, "embedder": self.embedder,
               "levels": [lv.to_json() for lv in self.levels], "examples": self.examples}
        if self.rewritten_examples is not None:
            doc["rewritten_examples"] = self.rewritten_examples
        return _with_record(doc, self.run_record)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> NoiseResult:
        return cls(ProbeMeta.from_json(doc.get("meta") or {}), doc.get("lang"), doc.get("embedder"),
                   [NoiseLevel.from_json(lv) for lv in doc["levels"]], doc.get("examples"),
                   doc.get("rewritten_examples"), doc.get("run_record"))


@dataclass
class NamesRealMeta:
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


@dataclass
class DetectedQuery:
    """A judged query holding at least one detected name."""

    query_id: str
    text: str
    names: list[str]


@dataclass
class NamesRealResult:
    meta: NamesRealMeta
    detected: list[DetectedQuery]
    impacts: list[QueryImpact]
    judged_queries: int
    embedder: str
    notes: list[str] = field(default_factory=list)
    run_record: dict[str, Any] | None = None
    written: list[Path] = field(default_factory=list)  # what this run wrote (not part of the JSON)

    def to_json(self) -> dict[str, Any]:
        doc = {"meta": asdict(self.meta), "judged_queries": self.judged_queries, "embedder": self.embedder,
               "detected": [asdict(d) for d in self.detected], "impacts": [i.to_json() for i in self.impacts],
               "notes": self.notes}
        return {**doc, "run_record": self.run_record} if self.run_record is not None else doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> NamesRealResult:
        return cls(NamesRealMeta(**doc["meta"]), [DetectedQuery(**d) for d in doc["detected"]],
                   [QueryImpact.from_json(i) for i in doc["impacts"]], doc["judged_queries"], doc["embedder"],
                   doc["notes"], doc.get("run_record"))


ProbeResult = NamesResult | NoiseResult


@dataclass
class ProbeRun:
    """What ``probe names`` / ``noise`` return: one result per (language, embedder), written as one
    JSON object when there is one and a list otherwise, plus the notes for stderr."""

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


def _plain(part: Any) -> Any:
    return asdict(part) if part is not None else None


def _with_record(doc: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    return {**doc, "run_record": record} if record is not None else doc
