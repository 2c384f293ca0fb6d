"""The result of ``ragdiag dynamic-k`` as objects: the parameters, the uncertainty signal, and per
policy (fixed K_low, each threshold θ, fixed K_high) the metric means and their paired differences to
fixed K (computed by :mod:`ragdiag.evaluate.dynamic_k`).

``DynamicKResult.from_json(doc).to_json() == doc``, key order included (:mod:`ragdiag.results.base`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord
from ragdiag.results.evaluate import Estimate


@dataclass
class DynamicKParams(JsonRecord):
    """K_low, K_high, the cut-offs, when to escalate, the θ steps, the cost model, bootstrap and seed."""

    k_low: int = 50
    k_high: int = 100
    ks: tuple[int, ...] = (10, 30)
    escalate_when: str = "below"  # escalate when the signal is below θ (margins) or above θ (drops)
    steps: int = 11  # thresholds: the signal's quantiles 0, 1/(steps−1), …, 1
    tokens_per_candidate: float = 500.0
    price_per_mtok: float = 0.0
    bootstrap: int = 1000
    seed: int = 0
    optional: ClassVar[frozenset[str] | None] = frozenset()

    def __post_init__(self) -> None:
        self.ks = tuple(self.ks)


@dataclass
class PolicyRow(JsonRecord):
    """One policy: fixed K_low, a threshold θ, or fixed K_high; metric means and paired differences."""

    threshold: float | None
    label: str
    share_escalated: float
    mean_candidates: float
    cost_per_1k: float
    metrics: dict[str, Estimate]
    vs_low: dict[str, Estimate]
    vs_high: dict[str, Estimate]
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"metrics": Estimate, "vs_low": Estimate, "vs_high": Estimate}
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class SignalInfo(JsonRecord):
    """The uncertainty signal: its name, when it escalates, on how many queries it is defined, median, min, max."""

    name: str
    escalate_when: str
    defined: int
    median: float
    min: float
    max: float
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class DynamicKMeta(JsonRecord):
    """What dynamic-k was given: the qrels and the two runs."""

    command: str
    qrels: str
    qrels_binary: bool
    run_low: str
    run_high: str
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class DynamicKResult(JsonRecord):
    """The sweep (``policies``: fixed K_low, each θ, fixed K_high); the command adds ``meta`` and the run record."""

    params: DynamicKParams
    queries: int
    signal: SignalInfo
    policies: list[PolicyRow]
    meta: DynamicKMeta | None = None
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"params": DynamicKParams, "signal": SignalInfo,
                                                     "policies": PolicyRow, "meta": DynamicKMeta}
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "params", "queries", "signal", "policies", "run_record")
    optional: ClassVar[frozenset[str] | None] = frozenset({"meta", "run_record"})

    @property
    def metric_names(self) -> list[str]:
        return list(self.policies[0].metrics)
