"""The result of ``ragdiag robustness`` as objects: :class:`RobustnessResult` holds its
:class:`RobustnessMeta` and one :class:`RobustnessPoint` per operating point (an index at one setting
of its search parameters, or one run). ``to_json()`` gives exactly the JSON the command writes;
``from_json()`` reads any file it wrote (:mod:`ragdiag.results.base`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class RobustnessPoint(JsonRecord):
    """One operating point: recall, Robustness-δ@K (keys ``f"{δ:g}"``), their 95% intervals (absent or
    null without bootstrap) and, for index points, timing, build seconds and serialized bytes."""

    index: str | None = None
    spec: str | None = None
    label: str | None = None  # a run's file name (index points have none)
    params: dict[str, Any] = field(default_factory=dict)
    recall_mean: float | None = None
    robustness: dict[str, float] = field(default_factory=dict)
    zero_recall_queries: int | None = None
    recall_histogram: dict[str, list[Any]] | None = None
    n_queries: int | None = None
    recall_kind: str | None = None
    qps_batch: dict[str, Any] | float | None = None  # robustness: {median, min, max, repeats}; sweep: the median
    latency_ms: dict[str, Any] | None = None
    build_s: float | None = None
    index_bytes: int | None = None
    threads: int | None = None
    builds: dict[str, Any] | None = None  # pgvector rebuilt N times: mean and SD over the builds
    recall_mean_ci: list[float] | None = None
    robustness_ci: dict[str, list[float] | None] | None = None

    @property
    def name(self) -> str:
        """``hnsw M=16,efConstruction=100,efSearch=32``, or a run's label."""
        return self.label or f"{self.index} {','.join(f'{a}={b}' for a, b in self.params.items())}".strip()

    @property
    def params_text(self) -> str:
        return ",".join(f"{a}={b}" for a, b in self.params.items())

    @property
    def qps_median(self) -> float | None:
        """Median batch QPS: ``robustness`` keeps the timing dict, ``sweep`` the median as a number."""
        return self.qps_batch.get("median") if isinstance(self.qps_batch, dict) else self.qps_batch

    @property
    def timed(self) -> bool:
        return self.qps_batch is not None

    def interval(self, delta: str) -> list[float] | None:
        """The 95% interval of Robustness-δ@K for ``delta`` (``"0.5"``), when there is one."""
        return (self.robustness_ci or {}).get(delta)


@dataclass
class RobustnessMeta(JsonRecord):
    """How the points were measured: mode (``ann`` or ``labelled``), K, metric, δ values, seed, bootstrap."""

    command: str | None = None
    mode: str | None = None
    ground_truth: str | None = None
    recall: str | None = None
    k: int | None = None
    metric: str | None = None
    deltas: list[float] = field(default_factory=list)
    seed: int | None = None
    bootstrap: dict[str, Any] | None = None
    pg_builds: int | None = None
    min_recall: dict[str, Any] | None = None  # --min-recall: the floor and the points left out

    @property
    def resamples(self) -> int:
        """Bootstrap resamples behind the intervals (0: no intervals)."""
        return int((self.bootstrap or {}).get("resamples") or 0)

    @property
    def delta_keys(self) -> list[str]:
        return [f"{d:g}" for d in self.deltas]


@dataclass
class RobustnessResult(JsonRecord):
    """``{"meta", "points"}`` and the optional analyses (dicts, rendered by their own tables)."""

    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": RobustnessMeta, "points": RobustnessPoint}

    meta: RobustnessMeta = field(default_factory=RobustnessMeta)
    points: list[RobustnessPoint] = field(default_factory=list)
    matched_recall: dict[str, Any] | None = None
    adaptive: list[dict[str, Any]] | None = None
    hardness: dict[str, Any] | None = None
    selection: dict[str, Any] | None = None
    run_record: dict[str, Any] | None = None

    @property
    def deltas(self) -> list[str]:
        """The δ keys of Robustness-δ@K, as the points carry them."""
        return list(self.points[0].robustness) if self.points else []
