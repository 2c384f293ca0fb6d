"""The typed results of ``ragdiag testset certify`` (``--out certificate.json``) and of ``ragdiag
testset`` (its ``manifest.json``).

Certificate keys: ``meta`` (inputs, metric, top, bootstrap, seed, queries per label set, whether the
resampling was paired), ``systems`` (each run's score under A and B and its rank), ``tau``,
``tau_ap``, ``top`` (τ among the top systems of B), each a point value with its bootstrap interval,
``largest_swap`` (null when no pair flips), ``gap`` (BM25 minus dense under A and B; null without
``--bm25-run`` and ``--dense-run``), ``verdict`` (words) and the run record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass(kw_only=True)
class SystemScore(JsonRecord):
    run: str
    score_a: float
    score_b: float
    rank_a: int
    rank_b: int


@dataclass(kw_only=True)
class Agreement(JsonRecord):
    """A rank correlation and its percentile bootstrap interval (null where undefined)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class TopAgreement(JsonRecord):
    """τ among the ``k`` best systems of label set B (``runs``, best first)."""

    k: int
    runs: list[str]
    value: float | None
    ci_low: float | None
    ci_high: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class Swap(JsonRecord):
    """Two systems A and B order oppositely; the deltas are score(run_1) − score(run_2)."""

    run_1: str
    run_2: str
    delta_a: float
    delta_b: float


@dataclass(kw_only=True)
class LexicalGap(JsonRecord):
    """Score of the BM25 run minus score of the dense run, under A and under B, with intervals."""

    bm25: str
    dense: str
    a: float
    a_ci_low: float | None
    a_ci_high: float | None
    b: float
    b_ci_low: float | None
    b_ci_high: float | None
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class CertifyResult(JsonRecord):
    meta: dict[str, Any] = field(default_factory=dict)
    systems: list[SystemScore] = field(default_factory=list)
    tau: Agreement | None = None
    tau_ap: Agreement | None = None
    top: TopAgreement | None = None
    largest_swap: Swap | None = None
    gap: LexicalGap | None = None
    verdict: str = ""
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"systems": SystemScore, "tau": Agreement, "tau_ap": Agreement,
                                                     "top": TopAgreement, "largest_swap": Swap, "gap": LexicalGap}
    optional: ClassVar[frozenset[str] | None] = frozenset({"run_record"})


@dataclass(kw_only=True)
class TestsetManifest(JsonRecord):
    """``manifest.json`` of ``ragdiag testset``: ``meta`` (model, server, seed, sampling and filter
    settings), ``prompts`` (name → name@vN), ``counts`` (sampled, usable replies, kept), ``unusable``
    (replies that were not JSON or named no question, with examples), ``filters`` (per filter:
    examined, flagged, examples), ``calls`` (the plan printed before any call, the new calls of each
    phase, the client's counters and cost), ``files``, ``certificate`` (with ``--human-qrels``: the
    synthetic qrels certified against the human ones, else left out) and the run record."""

    __test__ = False  # not a pytest class, whatever its name
    meta: dict[str, Any] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    unusable: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    certificate: CertifyResult | None = None
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"certificate": CertifyResult}
    optional: ClassVar[frozenset[str] | None] = frozenset({"certificate", "run_record"})
