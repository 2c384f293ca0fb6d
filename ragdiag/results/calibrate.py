"""The result of ``ragdiag calibrate`` as objects: agreement, PPI / judge-only / human-only
estimates of the mean grade per group and of the slopes, the suggested labelling sheet.

``to_json()`` gives exactly the JSON ``calibrate --out`` writes (same keys, same order);
``from_json()`` reads such a file back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Interval:
    """A point estimate and its (1 − α) interval."""

    estimate: float | None
    ci: list[float | None]


def _interval(doc: dict[str, Any] | None) -> Interval | None:
    return Interval(**doc) if doc else None


@dataclass
class MeanGrade:
    """Mean grade of one group: PPI (judge + humans), humans only, judge only (None when not estimable)."""

    group: str
    items: int
    labelled: int
    ppi: Interval | None
    human_only: Interval | None
    judge_only: Interval | None

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> MeanGrade:
        return cls(doc["group"], doc["items"], doc["labelled"], _interval(doc.get("ppi")),
                   _interval(doc.get("human_only")), _interval(doc.get("judge_only")))


@dataclass
class Slope:
    """OLS slope of the grade on one retrieval measure (P, R or nDCG), three ways."""

    measure: str
    ppi: Interval | None
    human_only: Interval | None
    judge_only: Interval | None

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Slope:
        return cls(doc["measure"], _interval(doc.get("ppi")), _interval(doc.get("human_only")),
                   _interval(doc.get("judge_only")))


@dataclass
class Estimates:
    by: str
    alpha: float
    mean_grade: list[MeanGrade]
    slopes: list[Slope]

    @property
    def level(self) -> str:
        """The interval level as printed, e.g. ``90%``."""
        return f"{100 * (1 - self.alpha):.0f}%"

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Estimates:
        return cls(doc["by"], doc["alpha"], [MeanGrade.from_json(m) for m in doc["mean_grade"]],
                   [Slope.from_json(s) for s in doc["slopes"]])


@dataclass
class Confusion:
    rows: str
    columns: str
    counts: list[list[int]]


@dataclass
class Agreement:
    """Judge–human agreement on the labelled items (κ and ρ None when undefined)."""

    items: int
    kappa_quadratic: float | None
    spearman: float | None
    exact: float
    within_one: float
    mean_bias: float
    confusion: Confusion

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Agreement:
        return cls(**{**doc, "confusion": Confusion(**doc["confusion"])})


@dataclass
class Suggested:
    """The labelling sheet written by --suggest: where, how many items, by which uncertainty signal."""

    sheet: str
    items: int
    signal: str
    uncertainty: list[float]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        if self.note is None:
            del doc["note"]
        return doc


@dataclass
class CalibrateMeta:
    command: str
    graded: str
    human: str | None
    by: str
    alpha: float
    items: int
    labelled: int
    reference_gate: dict[str, Any]
    judge_grade: str


@dataclass
class CalibrateResult:
    meta: CalibrateMeta
    agreement: Agreement | None
    estimates: Estimates
    suggested: Suggested | None
    run_record: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"meta": asdict(self.meta), "agreement": asdict(self.agreement) if self.agreement else None,
                "estimates": asdict(self.estimates), "suggested": self.suggested.to_json() if self.suggested else None,
                "run_record": self.run_record}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> CalibrateResult:
        agreement, suggested = doc.get("agreement"), doc.get("suggested")
        return cls(CalibrateMeta(**doc["meta"]), Agreement.from_json(agreement) if agreement else None,
                   Estimates.from_json(doc["estimates"]), Suggested(**suggested) if suggested else None,
                   doc.get("run_record") or {})
