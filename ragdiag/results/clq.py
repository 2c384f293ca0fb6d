"""The result of ``ragdiag clq`` as objects: each configuration's cost, latency, quality and
efficiency, the cost–latency–quality frontier, the dominated points, the choices under the SLO and
the budget, and the marginal gains between consecutive K (computed by :mod:`ragdiag.evaluate.clq`).

``ClqResult.from_json(doc).to_json() == doc``, key order included (:mod:`ragdiag.results.base`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class ConfigRow(JsonRecord):
    """One configuration in the result: inputs, efficiency scores and whether it is on the frontier."""

    name: str
    family: str | None
    k: float | None
    cost: float
    latency_p50: float
    latency_p95: float | None
    e2e_p50: float | None
    quality: dict[str, float]
    efficiency_retrieval: float | None
    efficiency_e2e: float | None
    pareto: bool
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class SloChoice(JsonRecord):
    slo_ms: float
    percentile: str
    best: str | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class BudgetChoice(JsonRecord):
    budget: float
    best: str | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class BothChoice(JsonRecord):
    best: str | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class Choices(JsonRecord):
    """The best configuration by the primary quality under the SLO, the budget and both (when given)."""

    primary: str
    slo: SloChoice | None = None
    budget: BudgetChoice | None = None
    slo_and_budget: BothChoice | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"slo": SloChoice, "budget": BudgetChoice,
                                                     "slo_and_budget": BothChoice}

    @property
    def given(self) -> int:
        """How many of the SLO, budget and both choices were asked for."""
        return sum(c is not None for c in (self.slo, self.budget, self.slo_and_budget))


@dataclass
class Marginal(JsonRecord):
    """Δquality / Δlatency between consecutive K of one family."""

    family: str
    from_k: float
    to_k: float
    metric: str
    latency: str
    d_quality: float
    d_latency_ms: float
    per_ms: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class ClqMeta(JsonRecord):
    """What clq was given: the configs file, the quality measures, the SLO and its percentile, the budget."""

    command: str
    configs: str
    quality: list[str]
    slo_ms: float | None
    slo_percentile: str
    budget: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class ClqResult(JsonRecord):
    """The frontier, the dominated points, the choices and the marginal gains; the command adds ``meta`` and the run record."""

    quality: list[str]
    configs: list[ConfigRow]
    frontier: list[str]
    dominated: dict[str, list[str]]
    choices: Choices
    marginal: list[Marginal] = field(default_factory=list)
    meta: ClqMeta | None = None
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"configs": ConfigRow, "choices": Choices, "marginal": Marginal,
                                                     "meta": ClqMeta}
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "quality", "configs", "frontier", "dominated", "choices",
                                                "marginal", "run_record")
    optional: ClassVar[frozenset[str] | None] = frozenset({"meta", "run_record"})
