"""The result of ``ragdiag correlate`` (and of ``correlate --table``, which has the same shape) as
objects: ``CorrelateResult.from_json(doc)`` reads a result file, ``to_json()`` gives back exactly
the JSON written (same keys, same order, same values).

Each object remembers which keys its JSON had and in what order (``present``): the two paths write
different key sets (``--table`` has no ``coverage``; a bootstrap adds ``ci``; the judge-noise
correction adds ``corrected`` and ``lead_holds_joint``; ``grade_distribution`` comes after the run
record), and a key written as ``null`` differs from a key not written. Keys this module does not
name are kept as read (``extra``); :class:`ragdiag.results.base.JsonRecord` does both. Import-light
(no numpy): the CLI imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass(kw_only=True)
class Corrected(JsonRecord):
    """A maximum corrected for judge noise (Spearman's correction by the judge's reliability)."""

    value: float | None = None
    reliability: float | None = None
    ci: list[float] | None = None


@dataclass(kw_only=True)
class KindEntry(JsonRecord):
    """One correlation kind of one (segment, measure): the max over α, the α reaching it, the interval."""

    value: float | None = None
    alpha: float | None = None
    ci: list[float] | None = None
    corrected: Corrected | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"corrected": Corrected}


@dataclass(kw_only=True)
class SegmentResult(JsonRecord):
    """One (segment, measure) row, with an entry per correlation kind (``kinds["spearman"]``)."""

    segment: str = ""
    measure: str = ""
    n: int = 0
    side: str = ""
    kinds: dict[str, KindEntry] = field(default_factory=dict)
    per_kind: ClassVar[tuple[str, type[JsonRecord]] | None] = ("kinds", KindEntry)


@dataclass(kw_only=True)
class Difference(JsonRecord):
    """max(first) − max(second) for one kind, its interval and the share of resamples above 0."""

    difference: float | None = None
    ci: list[float] | None = None
    share_positive: float | None = None


@dataclass(kw_only=True)
class Comparison(JsonRecord):
    """The paired difference of the two ``--compare`` measures in one segment, per kind."""

    segment: str = ""
    measures: list[str] = field(default_factory=list)
    n: list[int] = field(default_factory=list)
    kinds: dict[str, Difference] = field(default_factory=dict)
    per_kind: ClassVar[tuple[str, type[JsonRecord]] | None] = ("kinds", Difference)


@dataclass(kw_only=True)
class Verdict(JsonRecord):
    """Per subset and side: the measure that predicts the grade best, its lead and how often it holds."""

    subset: str = ""
    side: str = ""
    kind: str = ""
    best: str = ""
    best_mean: float = 0.0
    segments: int = 0
    runner_up: str | None = None
    runner_up_mean: float | None = None
    lead: float | None = None
    lead_holds: float | None = None
    tied: list[str] = field(default_factory=list)
    lead_holds_joint: float | None = None
    survives_judge_noise: bool | None = None


@dataclass(kw_only=True)
class Covered(JsonRecord):
    """Rows (``items``) and graded rows (``covered``) at one K (``K``) or in one segment (``segment``)."""

    items: int = 0
    covered: int = 0
    coverage: float = 0.0
    K: int | None = None
    segment: str | None = None


@dataclass(kw_only=True)
class CompleteCases(JsonRecord):
    """``--complete-cases``: whether it was used, and the queries and rows it kept."""

    used: bool = False
    queries: int | None = None
    queries_kept: int | None = None
    rows_before: int | None = None
    rows_kept: int | None = None


@dataclass(kw_only=True)
class Coverage(JsonRecord):
    """Graded share per K and segment (:mod:`ragdiag.metrics.coverage`) and the complete-case choice."""

    by_K: list[Covered] = field(default_factory=list)
    by_segment: list[Covered] = field(default_factory=list)
    gap_points_across_K: float = 0.0
    gap_points_across_segments: float = 0.0
    uneven: bool = False
    threshold_points: float = 0.0
    complete_cases: CompleteCases = field(default_factory=CompleteCases)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"by_K": Covered, "by_segment": Covered,
                                        "complete_cases": CompleteCases}


@dataclass(kw_only=True)
class DroppedSegment(JsonRecord):
    """A segment left out for having fewer than ``--min-samples`` rows."""

    segment: str = ""
    rows: int = 0


@dataclass(kw_only=True)
class SystemCorrelation(JsonRecord):
    """``--by config``: one per-configuration statistic correlated with the mean grade across configurations."""

    statistic: str = ""
    spearman: float | None = None
    pearson: float | None = None
    kendall_b: float | None = None
    kendall_c: float | None = None


@dataclass(kw_only=True)
class SystemView(JsonRecord):
    """``--by config``: the configurations (``groups``) and the correlations across them."""

    groups: list[dict[str, Any]] = field(default_factory=list)
    best_alpha: dict[str, Any] | None = None
    correlations: list[SystemCorrelation] = field(default_factory=list)
    deltas: list[float] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"correlations": SystemCorrelation}


@dataclass(kw_only=True)
class JudgeReliability(JsonRecord):
    """Grades with repeats or a second judge: the judge's reliability (:mod:`ragdiag.metrics.judge_reliability`)
    and the joint bootstrap behind the corrected maxima."""

    source: str = ""  # "repeats" or "judges"
    ratings_per_row: float = 0.0
    icc_1_1: float | None = None
    icc_1_k: float | None = None
    alpha_ordinal: float | None = None
    alpha_interval: float | None = None
    alpha_note: str | None = None
    used: str = ""  # the reliability used: "icc_1_k" or "icc_1_1"
    reliability: float | None = None
    joint_bootstrap: int = 0
    survival_share: float | None = None
    ratings_note: str | None = None  # rows with another number of repeats, or none (data/graded_ratings.py)


@dataclass(kw_only=True)
class ReferenceGate(JsonRecord):
    """The reference-quality gate: rows graded against a degenerate ideal answer, left out or kept."""

    patterns: str | None = None
    long_answer_ratio: float | None = None
    kinds: list[str] = field(default_factory=list)
    applied: bool = False
    keep_degenerate: bool = False
    max_excluded_share: float | None = None
    rows_checked: int | None = None
    excluded_rows: int = 0
    degenerate_rows: int = 0
    kept_degenerate_rows: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    segments: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None


@dataclass(kw_only=True)
class WithheldVerdict(JsonRecord):
    """A verdict withheld because the gate left out more than half of one of its segments."""

    subset: str = ""
    side: str = ""
    segment: str = ""
    share: float = 0.0
    excluded: int = 0
    rows: int = 0
    message: str = ""


@dataclass(kw_only=True)
class CorrelateMeta(JsonRecord):
    """How the result was made: source, options, library versions (``--table`` adds ``table``)."""

    command: str = "correlate"
    argv: list[str] = field(default_factory=list)
    ragdiag: str | None = None
    python: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    source: str = ""
    source_sha256: str | None = None
    simulated_grades: bool = False
    grades: str = ""
    notice: str | None = None
    rows: int = 0
    skipped_missing_grade: int = 0
    reference_gate: ReferenceGate | None = None
    segments: str = ""
    min_samples: int | None = None
    measures: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    alpha_grid: str | None = None
    alpha_grid_size: int | None = None
    xk: float | None = None
    ties: str | None = None
    grade_classes: str | None = None
    bootstrap: int = 0
    seed: int = 0
    bootstrap_unit: str | None = None
    compare: list[str] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    table: dict[str, Any] | None = None
    shown_kinds: list[str] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"reference_gate": ReferenceGate}

    @property
    def group_col(self) -> str | None:
        """``--table --group-col``: the column whose values the verdicts are per."""
        return (self.table or {}).get("group_col")


GRADES = (1, 2, 3, 4, 5)


@dataclass
class GradePanel(JsonRecord):
    """One embedder × subset of ``grade_distribution``: ``counts[g][b]`` rows with grade GRADES[g] in
    bin ``bins[b]``; ``grades`` and ``shares`` (counts / column total) are written after them."""

    embedder: str
    subset: str
    bins: list[float]
    counts: list[list[int]]
    dropped_bins: dict[str, int] = field(default_factory=dict)
    layout: ClassVar[tuple[str, ...] | None] = ("embedder", "subset", "bins", "grades", "counts", "shares",
                                                "dropped_bins")
    optional: ClassVar[frozenset[str] | None] = frozenset()

    @property
    def shares(self) -> list[list[float]]:
        """counts / column total: every column sums to 1 (NaN for an empty column)."""
        totals = [sum(column) for column in zip(*self.counts)]
        return [[c / t if t else float("nan") for c, t in zip(row, totals)] for row in self.counts]

    def field_value(self, key: str) -> Any:
        if key == "grades":
            return list(GRADES)
        if key == "shares":
            return self.shares
        return super().field_value(key)


@dataclass
class GradeDistribution(JsonRecord):
    """``grade_distribution`` (``correlate --grade-plot``): every panel of one graded table, binned one way."""

    by: str
    min_samples: int
    panels: list[GradePanel]
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"panels": GradePanel}


@dataclass(kw_only=True)
class CorrelateResult(JsonRecord):
    """``ragdiag correlate``'s result: per-segment correlation tables, verdicts, coverage and meta."""

    meta: CorrelateMeta = field(default_factory=CorrelateMeta)
    results: list[SegmentResult] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    segments_kept: int = 0
    segments_total: int | None = None
    segments_dropped: list[DroppedSegment] | None = None
    rows_without_sibling: int | None = None
    comparisons: list[Comparison] | None = None
    judge_reliability: JudgeReliability | None = None
    verdicts_withheld: list[WithheldVerdict] | None = None
    coverage: Coverage | None = None
    system: SystemView | None = None
    run_record: dict[str, Any] | None = None
    grade_distribution: GradeDistribution | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {
        "meta": CorrelateMeta, "results": SegmentResult, "verdicts": Verdict,
        "comparisons": Comparison, "coverage": Coverage,
        "segments_dropped": DroppedSegment, "system": SystemView,
        "judge_reliability": JudgeReliability, "verdicts_withheld": WithheldVerdict,
        "grade_distribution": GradeDistribution,
    }

    def shown_kinds(self) -> list[str]:
        """The kinds the tables show: those asked for with --corr, else the first (Spearman)."""
        return list(self.meta.shown_kinds or self.meta.kinds[:1])

    def measures_with_values(self) -> list[str]:
        """The measures asked for that have at least one result row (E has none without its x·K ranking)."""
        have = {r.measure for r in self.results}
        return [m for m in self.meta.measures if m in have]
