"""The result of ``ragdiag sweep`` (``sweep.json``) as objects: :class:`SweepResult` holds its
:class:`SweepMeta`, one :class:`SweepPoint` per ANN operating point and one :class:`SweepControl` per
control (exact, gold, empty). ``to_json()`` gives exactly the JSON the command writes; ``from_json()``
reads any ``sweep.json`` it wrote (:mod:`ragdiag.results.base`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord
from ragdiag.results.robustness import RobustnessPoint


@dataclass
class SweepPoint(RobustnessPoint):
    """An operating point's recall and Robustness-δ@K (as in robustness; ``qps_batch`` is the median,
    ``qps_batch_runs`` the repeats) with its answers' grade, the paired difference from exact k-NN
    and its calls."""

    qps_batch_runs: dict[str, Any] | None = None
    grade_mean: float | None = None
    grade_ci: list[float] | None = None
    grade_diff_vs_exact: dict[str, Any] | None = None  # {"value", "ci"}
    worse_share: float | None = None
    n_pairs: int | None = None
    n_graded: int | None = None
    calls_sent: int | None = None
    calls_reused: int | None = None
    accuracy: float | None = None


@dataclass
class SweepControl(JsonRecord):
    """exact k-NN (with its recall 1.0 and timing), the gold passages, or an empty context."""

    name: str | None = None
    grade_mean: float | None = None
    grade_ci: list[float] | None = None
    n_graded: int | None = None
    calls_sent: int | None = None
    calls_reused: int | None = None
    accuracy: float | None = None
    recall_mean: float | None = None
    qps_batch: float | None = None
    qps_batch_runs: dict[str, Any] | None = None
    latency_ms: dict[str, Any] | None = None


@dataclass
class SweepMeta(JsonRecord):
    """How the sweep was run: data, K, δ values, bootstrap resamples (0: no intervals), seed, models, calls."""

    command: str | None = None
    dataset: str | None = None
    n_docs: int | None = None
    n_queries: int | None = None
    k: int | None = None
    metric: str | None = None
    embedder: str | None = None
    controls: list[str] = field(default_factory=list)
    deltas: list[float] = field(default_factory=list)
    bootstrap: int | None = None
    confidence_level: float | None = None
    seed: int | None = None
    llm: dict[str, Any] | None = None
    calls: dict[str, Any] | None = None
    qps_timing: dict[str, Any] | None = None
    seconds: dict[str, float] | None = None
    reference_gate: dict[str, Any] | None = None
    graded_against: str | None = None
    accuracy_threshold: float | None = None
    gold_control_informative: bool | None = None
    gold_control_note: str | None = None
    answer_plan: dict[str, Any] | None = None

    @property
    def delta_keys(self) -> list[str]:
        return [f"{d:g}" for d in self.deltas]


@dataclass
class SweepResult(JsonRecord):
    """``sweep.json``: meta, points, controls and the analyses over them (dicts and lists)."""

    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": SweepMeta, "points": SweepPoint, "controls": SweepControl}

    meta: SweepMeta = field(default_factory=SweepMeta)
    points: list[SweepPoint] = field(default_factory=list)
    controls: list[SweepControl] = field(default_factory=list)
    delta_calibration: list[dict[str, Any]] | None = None  # one {delta, spearman, ci, …} per δ
    recall_buckets: list[dict[str, Any]] | None = None
    recommendation: dict[str, Any] | None = None
    relative_accuracy: dict[str, Any] | None = None
    run_record: dict[str, Any] | None = None

    @property
    def deltas(self) -> list[str]:
        return list(self.points[0].robustness) if self.points else []

    def control(self, name: str) -> SweepControl | None:
        return next((c for c in self.controls if c.name == name), None)
