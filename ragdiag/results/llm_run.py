"""The manifests of the LLM commands (generate, grade; the summaries of label and sweep) as objects.

``OUT.manifest.json`` beside a generate or grade output holds ``meta`` (:class:`RunMeta`: what
determines the result), ``run`` (:class:`RunDetails`: how the server was reached), ``summary``
(:class:`RunSummary`: coverage = covered / items, the call counters of :class:`CallStats` flat in
the object, then what the command adds), ``failures``, then ``skipped`` (generate) or ``unparsed``
(grade), and the run record. ``RunManifest.from_json(doc).to_json() == doc``, key order included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass(kw_only=True)
class CallStats(JsonRecord):
    """Counters for one LLM client's lifetime; ``cost`` is None once any call had no price."""

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    shared: int = 0
    from_other_process: int = 0
    retries: int = 0
    failures: int = 0
    capped_replies: int = 0
    truncated: int = 0  # replies that stopped at their output limit (finish_reason: length)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    batch_calls: int = 0
    cost_sync: float | None = 0.0  # every call of this run at synchronous prices
    cost_batch: float | None = 0.0  # the same calls at batch prices (None: a model without one)
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def add_costs(self, sync: float | None, batch: float | None) -> None:
        """Count one call's costs at both prices."""
        self.cost_sync = None if sync is None or self.cost_sync is None else self.cost_sync + sync
        self.cost_batch = None if batch is None or self.cost_batch is None else self.cost_batch + batch


@dataclass(kw_only=True)
class LlmSettings(JsonRecord):
    """``meta.llm``: the provider, the model and its sampling parameters."""

    provider: str | None = None
    model: str | None = None
    temperature: float | None = None
    seed: int | None = None
    output_limit_param: str | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class RunMeta(JsonRecord):
    """The ``meta`` block of a generate or grade result: command, version, the model and its sampling
    parameters, prompt versions, then what the command adds (``k``, ``dataset``, the inputs for
    generate; ``judges``, ``repeats``, ``grade_mode``, the answers for grade)."""

    command: str | None = None
    ragdiag_version: str | None = None
    llm: LlmSettings = field(default_factory=LlmSettings)
    prompts: list[str] = field(default_factory=list)
    k: list[int] | None = None
    dataset: str | None = None
    judges: list[str] | None = None
    repeats: int | None = None
    grade_mode: str | None = None
    lang: str | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"llm": LlmSettings}


@dataclass(kw_only=True)
class SkipCount(JsonRecord):
    """Rows left out for one reason: how many, and the first few ids."""

    count: int = 0
    first: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Agreement(JsonRecord):
    """Repeat and judge agreement of a grade run: per-item SD over repeats, Krippendorff's α between
    repeats and between judges (``alpha_repeats_ordinal`` …, named by level: kept in ``extra``)."""

    repeats: int = 1
    judges: list[str] = field(default_factory=list)
    item_sd_mean: float | None = None
    item_sd_max: float | None = None

    def values(self) -> list[tuple[str, float | None]]:
        """(key, value) of every agreement value but the repeats and judges, in the file's order."""
        return [(k, v) for k, v in self.to_json().items() if k not in ("repeats", "judges")]


@dataclass(kw_only=True)
class GateCounts(JsonRecord):
    """``summary.reference_gate``: the gate's patterns and kinds, degenerate ideal and top-K answers
    per kind (``ideal``, ``topK``: kind → count, plus ``total`` and ``answers``), rows not graded."""

    patterns: str | None = None
    long_answer_ratio: float | None = None
    kinds: list[str] = field(default_factory=list)
    ideal: dict[str, int] | None = None
    topK: dict[str, int] | None = None
    skipped_rows: int | None = None
    keep_degenerate: bool | None = None


@dataclass(kw_only=True)
class CoverageRow(JsonRecord):
    """Coverage of one K, segment or sweep point: covered / items, and what it is of (``K``, ``segment``, ``point``)."""

    items: int = 0
    covered: int = 0
    coverage: float = 1.0
    K: int | None = None
    segment: str | None = None
    point: str | None = None


@dataclass(kw_only=True)
class CoverageByK(JsonRecord):
    """``summary.coverage_by_K``: coverage per K and per segment, the gap across K in points, uneven when it matters."""

    by_K: list[CoverageRow] = field(default_factory=list)
    by_segment: list[CoverageRow] = field(default_factory=list)
    gap_points_across_K: float | None = None
    uneven: bool = False
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"by_K": CoverageRow, "by_segment": CoverageRow}


@dataclass(kw_only=True)
class LangCounts(JsonRecord):
    """``summary.lang``: the ``--lang`` setting, then the rows answered per language (``en``, ``fr`` …, in ``extra``)."""

    setting: str = "auto"

    def counts(self) -> list[tuple[str, int]]:
        """(language, rows) in the file's order."""
        return [(k, int(v)) for k, v in self.extra.items()]


@dataclass(kw_only=True)
class RunSummary(JsonRecord):
    """The ``summary`` of an LLM run (generate, grade, label, sweep): coverage = covered / items, the
    call counts (``stats``, a :class:`CallStats`, flat in the file), then what the command adds."""

    items: int = 0
    covered: int = 0
    coverage: float = 1.0
    seconds: float = 0.0
    stats: CallStats = field(default_factory=CallStats)
    skipped: dict[str, SkipCount] | None = None
    missing_grades: int | None = None
    no_answer: int | None = None
    retried_unparsed: int | None = None
    agreement: Agreement | None = None
    reference_gate: GateCounts | None = None
    coverage_by_K: CoverageByK | None = None
    coverage_by_point: list[CoverageRow] | None = None
    lang: LangCounts | None = None
    references_cut: int | None = None
    context_exceeded: int | None = None
    context_refits: int | None = None
    flat: ClassVar[tuple[str, type[JsonRecord]] | None] = ("stats", CallStats)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {
        "agreement": Agreement, "reference_gate": GateCounts, "coverage_by_K": CoverageByK,
        "coverage_by_point": CoverageRow, "lang": LangCounts}
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"skipped": SkipCount}


def as_summary(result_summary: RunSummary | Mapping[str, Any]) -> RunSummary:
    """A :class:`RunSummary` from one, or from a summary's JSON (label and sweep keep theirs as JSON)."""
    return result_summary if isinstance(result_summary, RunSummary) else RunSummary.from_json(dict(result_summary))


@dataclass(kw_only=True)
class RunDetails(JsonRecord):
    """``run``: how this particular run reached the server (base URL without credentials, cache mode,
    workers, retries, rate limits; batch, Ray and adapted concurrency when used)."""

    base_url: str | None = None
    cache: str | None = None
    workers: int | None = None
    max_retries: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"base_url"})


@dataclass(kw_only=True)
class RunManifest(JsonRecord):
    """The manifest beside a generate or grade output (``OUT.manifest.json``): ``meta`` (what
    determines the result), ``run`` (how the server was reached), ``summary``, ``failures``, then
    ``skipped`` (generate) or ``unparsed`` (grade), and the run record."""

    meta: RunMeta = field(default_factory=RunMeta)
    run: RunDetails = field(default_factory=RunDetails)
    summary: RunSummary = field(default_factory=RunSummary)
    failures: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, SkipCount] | None = None
    unparsed: list[dict[str, Any]] | None = None
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": RunMeta, "run": RunDetails, "summary": RunSummary}
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"skipped": SkipCount}

    @property
    def command(self) -> str | None:
        """The command that wrote it (``meta.command``, else the run record's)."""
        return self.meta.command or (self.run_record or {}).get("command")


def skip_counts(doc: Mapping[str, Any]) -> dict[str, SkipCount]:
    """``{"reason": {"count": n, "first": [...]}}`` as :class:`SkipCount` records, by reason."""
    return {reason: SkipCount.from_json(dict(entry)) for reason, entry in doc.items()}
