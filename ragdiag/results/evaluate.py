"""The result of ``ragdiag evaluate`` as objects: per-run metric values with intervals, the PROC
decision, stage attribution, paired comparisons and the label heterogeneity of the qrels.

``EvaluateResult.to_json()`` is the JSON ``ragdiag evaluate`` writes (keys and order as in every
earlier release) and ``EvaluateResult.from_json()`` reads such a file back. Import-light (no numpy):
the renderers and the HTML report read results through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


def _ci(value: Any) -> list[float] | None:
    """An interval as written: a list, or None when there is none."""
    return list(value) if value else None


@dataclass
class Estimate(JsonRecord):
    """A mean over queries with its 95% bootstrap interval (None when off) and the queries where defined."""

    value: float | None
    ci: list[float] | None
    n_defined: int
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.ci = _ci(self.ci)


@dataclass
class Spread(JsonRecord):
    median: float
    mean: float
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class LabelHeterogeneity(JsonRecord):
    """Paper 001 §3.5: how unevenly the useful passages spread over queries."""

    queries: int
    grade5: Spread
    grade4: Spread
    grade45: Spread
    prevalence45: Spread
    queries_without_grade5: int
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"grade5": Spread, "grade4": Spread, "grade45": Spread,
                                                     "prevalence45": Spread}


@dataclass
class MetricValue(JsonRecord):
    """The macro mean of one metric at one K over the queries where it is defined, with its 95% interval."""

    metric: str
    k: int
    value: float | None
    ci: list[float] | None
    n_defined: int
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.ci = _ci(self.ci)


@dataclass
class Verdict(JsonRecord):
    k: int
    verdict: str | None
    proc: float | None
    pct_proc: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class Thresholds(JsonRecord):
    proc_below_is_retrieval_bound: float
    pct_proc_below_is_ordering_bound: float
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class Decision(JsonRecord):
    """The PROC decision at the first K (``by_k``: at every K)."""

    k: int
    verdict: str | None
    proc: float | None
    pct_proc: float | None
    advice: str | None
    by_k: list[Verdict]
    thresholds: Thresholds
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"by_k": Verdict, "thresholds": Thresholds}


@dataclass
class StageShare(JsonRecord):
    value: float | None
    ci: list[float] | None
    n_defined: int
    count: int
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.ci = _ci(self.ci)


@dataclass
class StageAtK(JsonRecord):
    k: int
    matched_answers: int
    graded_answers: int
    shares: dict[str, StageShare]
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"shares": StageShare}


@dataclass
class Attribution(JsonRecord):
    """Stage attribution of the graded answers; ``note`` says why no K matched."""

    answers: str
    by_k: list[StageAtK] = field(default_factory=list)
    note: str | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"note"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"by_k": StageAtK}


@dataclass
class RunResult(JsonRecord):
    run: str
    metrics: list[MetricValue]
    decision: Decision
    attribution: Attribution | None
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"metrics": MetricValue, "decision": Decision,
                                                     "attribution": Attribution}


    def value(self, metric: str, k: int) -> MetricValue | None:
        return next((m for m in self.metrics if m.metric == metric and m.k == k), None)


@dataclass
class Comparison(JsonRecord):
    """diff = b − a with its paired interval; improved / worsened = shares of queries."""

    a: str
    b: str
    metric: str
    k: int
    diff: float | None
    ci: list[float] | None
    improved: float | None
    worsened: float | None
    n_defined: int
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.ci = _ci(self.ci)


@dataclass
class ResultParams(JsonRecord):
    """Every knob of the evaluation, as printed (``alpha`` … ``fallback3``: the rarity weights)."""

    k: list[int]
    alpha: float
    cap4: float
    cap3: float
    fallback4: float
    fallback3: float
    gold: int
    harm_max: int
    pool_depth: int
    metrics: list[str]
    bootstrap: int
    seed: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class RunInfo(JsonRecord):
    run: str
    path: str
    depth: int
    skipped_queries: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class EvaluateMeta(JsonRecord):
    command: str
    qrels: str
    qrels_binary: bool
    n_queries: int
    runs: list[RunInfo]
    conventions: dict[str, Any]
    seconds: float
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"runs": RunInfo}


@dataclass
class EvaluateResult(JsonRecord):
    """``meta`` (inputs, conventions, seconds), ``params``, one block per run, the pairwise comparisons,
    the label heterogeneity and the run record."""

    meta: EvaluateMeta | None
    params: ResultParams
    runs: list[RunResult]
    comparisons: list[Comparison]
    label_heterogeneity: LabelHeterogeneity | None
    run_record: dict[str, Any] | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"meta", "run_record"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": EvaluateMeta, "params": ResultParams, "runs": RunResult,
                                                     "comparisons": Comparison,
                                                     "label_heterogeneity": LabelHeterogeneity}


