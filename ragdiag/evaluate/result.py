"""The result of ``ragdiag evaluate`` as objects: per-run metric values with intervals, the PROC
decision, stage attribution, paired comparisons and the label heterogeneity of the qrels.

``EvaluateResult.to_json()`` is the JSON ``ragdiag evaluate`` writes (keys and order as in every
earlier release) and ``EvaluateResult.from_json()`` reads such a file back. Import-light (no numpy):
the renderers and the HTML report read results through it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


def _ci(value: Any) -> list[float] | None:
    return list(value) if value else None


@dataclass
class Estimate:
    """A mean over queries with its 95% bootstrap interval (None when off) and the queries where defined."""

    value: float | None
    ci: list[float] | None
    n_defined: int

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "ci": _ci(self.ci), "n_defined": self.n_defined}


@dataclass
class Spread:
    median: float
    mean: float


@dataclass
class LabelHeterogeneity:
    """Paper 001 §3.5: how unevenly the useful passages spread over queries."""

    queries: int
    grade5: Spread
    grade4: Spread
    grade45: Spread
    prevalence45: Spread
    queries_without_grade5: int

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> LabelHeterogeneity:
        return cls(doc["queries"], Spread(**doc["grade5"]), Spread(**doc["grade4"]), Spread(**doc["grade45"]),
                   Spread(**doc["prevalence45"]), doc["queries_without_grade5"])


@dataclass
class MetricValue:
    """The macro mean of one metric at one K over the queries where it is defined, with its 95% interval."""

    metric: str
    k: int
    value: float | None
    ci: list[float] | None
    n_defined: int

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "k": self.k, "value": self.value, "ci": _ci(self.ci), "n_defined": self.n_defined}


@dataclass
class Verdict:
    k: int
    verdict: str | None
    proc: float | None
    pct_proc: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Thresholds:
    proc_below_is_retrieval_bound: float
    pct_proc_below_is_ordering_bound: float


@dataclass
class Decision:
    """The PROC decision at the first K (``by_k``: at every K)."""

    k: int
    verdict: str | None
    proc: float | None
    pct_proc: float | None
    advice: str | None
    by_k: list[Verdict]
    thresholds: Thresholds

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "verdict": self.verdict, "proc": self.proc, "pct_proc": self.pct_proc,
                "advice": self.advice, "by_k": [v.to_json() for v in self.by_k], "thresholds": asdict(self.thresholds)}

    @classmethod
    def from_json(cls, doc: dict) -> Decision:
        return cls(doc["k"], doc["verdict"], doc["proc"], doc["pct_proc"], doc["advice"],
                   [Verdict(**v) for v in doc["by_k"]], Thresholds(**doc["thresholds"]))


@dataclass
class StageShare:
    value: float | None
    ci: list[float] | None
    n_defined: int
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "ci": _ci(self.ci), "n_defined": self.n_defined, "count": self.count}


@dataclass
class StageAtK:
    k: int
    matched_answers: int
    graded_answers: int
    shares: dict[str, StageShare]

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "matched_answers": self.matched_answers, "graded_answers": self.graded_answers,
                "shares": {stage: s.to_json() for stage, s in self.shares.items()}}

    @classmethod
    def from_json(cls, doc: dict) -> StageAtK:
        return cls(doc["k"], doc["matched_answers"], doc["graded_answers"],
                   {stage: StageShare(**s) for stage, s in doc["shares"].items()})


@dataclass
class Attribution:
    """Stage attribution of the graded answers; ``note`` says why no K matched."""

    answers: str
    by_k: list[StageAtK] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"answers": self.answers, "by_k": [b.to_json() for b in self.by_k]}
        if self.note is not None:
            doc["note"] = self.note
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> Attribution:
        return cls(doc["answers"], [StageAtK.from_json(b) for b in doc["by_k"]], doc.get("note"))


@dataclass
class RunResult:
    run: str
    metrics: list[MetricValue]
    decision: Decision
    attribution: Attribution | None

    def value(self, metric: str, k: int) -> MetricValue | None:
        return next((m for m in self.metrics if m.metric == metric and m.k == k), None)

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "metrics": [m.to_json() for m in self.metrics], "decision": self.decision.to_json(),
                "attribution": self.attribution.to_json() if self.attribution is not None else None}

    @classmethod
    def from_json(cls, doc: dict) -> RunResult:
        attribution = doc.get("attribution")
        return cls(doc["run"], [MetricValue(**m) for m in doc["metrics"]], Decision.from_json(doc["decision"]),
                   Attribution.from_json(attribution) if attribution else None)


@dataclass
class Comparison:
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

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "metric": self.metric, "k": self.k, "diff": self.diff, "ci": _ci(self.ci),
                "improved": self.improved, "worsened": self.worsened, "n_defined": self.n_defined}


@dataclass
class ResultParams:
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

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "k": list(self.k), "metrics": list(self.metrics)}


@dataclass
class RunInfo:
    run: str
    path: str
    depth: int
    skipped_queries: int


@dataclass
class EvaluateMeta:
    command: str
    qrels: str
    qrels_binary: bool
    n_queries: int
    runs: list[RunInfo]
    conventions: dict[str, Any]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> EvaluateMeta:
        return cls(doc["command"], doc["qrels"], doc["qrels_binary"], doc["n_queries"],
                   [RunInfo(**r) for r in doc["runs"]], doc["conventions"], doc["seconds"])


@dataclass
class EvaluateResult:
    """``meta`` (inputs, conventions, seconds), ``params``, one block per run, the pairwise comparisons,
    the label heterogeneity and the run record."""

    meta: EvaluateMeta | None
    params: ResultParams
    runs: list[RunResult]
    comparisons: list[Comparison]
    label_heterogeneity: LabelHeterogeneity | None
    run_record: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {} if self.meta is None else {"meta": self.meta.to_json()}
        doc.update({"params": self.params.to_json(), "runs": [r.to_json() for r in self.runs],
                    "comparisons": [c.to_json() for c in self.comparisons],
                    "label_heterogeneity": self.label_heterogeneity.to_json() if self.label_heterogeneity else None})
        if self.run_record is not None:
            doc["run_record"] = self.run_record
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> EvaluateResult:
        het = doc.get("label_heterogeneity")
        return cls(EvaluateMeta.from_json(doc["meta"]) if "meta" in doc else None, ResultParams(**doc["params"]),
                   [RunResult.from_json(r) for r in doc["runs"]], [Comparison(**c) for c in doc["comparisons"]],
                   LabelHeterogeneity.from_json(het) if het else None, doc.get("run_record"))
