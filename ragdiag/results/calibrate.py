"""The result of ``ragdiag calibrate`` as objects: agreement, PPI / judge-only / human-only
estimates of the mean grade per group and of the slopes, the suggested labelling sheet.

``to_json()`` gives exactly the JSON ``calibrate --out`` writes (same keys, same order);
``from_json()`` reads such a file back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass
class Interval(JsonRecord):
    """A point estimate and its (1 − α) interval."""

    estimate: float | None
    ci: list[float | None]
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class MeanGrade(JsonRecord):
    """Mean grade of one group: PPI (judge + humans), humans only, judge only (None when not estimable)."""

    group: str
    items: int
    labelled: int
    ppi: Interval | None
    human_only: Interval | None
    judge_only: Interval | None
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"ppi": Interval, "human_only": Interval, "judge_only": Interval}


@dataclass
class Slope(JsonRecord):
    """OLS slope of the grade on one retrieval measure (P, R or nDCG), three ways."""

    measure: str
    ppi: Interval | None
    human_only: Interval | None
    judge_only: Interval | None
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"ppi": Interval, "human_only": Interval, "judge_only": Interval}


@dataclass
class Estimates(JsonRecord):
    by: str
    alpha: float
    mean_grade: list[MeanGrade]
    slopes: list[Slope]
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"mean_grade": MeanGrade, "slopes": Slope}


    @property
    def level(self) -> str:
        """The interval level as printed, e.g. ``90%``."""
        return f"{100 * (1 - self.alpha):.0f}%"


@dataclass
class Confusion(JsonRecord):
    rows: str
    columns: str
    counts: list[list[int]]
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class Agreement(JsonRecord):
    """Judge–human agreement on the labelled items (κ and ρ None when undefined)."""

    items: int
    kappa_quadratic: float | None
    spearman: float | None
    exact: float
    within_one: float
    mean_bias: float
    confusion: Confusion
    optional: ClassVar[frozenset[str] | None] = frozenset()
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"confusion": Confusion}


@dataclass
class Suggested(JsonRecord):
    """The labelling sheet written by --suggest: where, how many items, by which uncertainty signal."""

    sheet: str
    items: int
    signal: str
    uncertainty: list[float]
    note: str | None = None
    strategy: str | None = None
    strata: str | None = None
    seed: int | None = None
    expected: float | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"note", "strategy", "strata", "seed", "expected"})


@dataclass
class PlannedDesign(JsonRecord):
    """One design of ``--plan``: what it adds to the pilot, the totals, its predicted (1 − α) width with a
    bootstrap interval over the pilot's items, and its cost (None where the budget buys no such design)."""

    design: str
    new_questions: int
    repeats: int
    new_labels: int
    questions: int
    labels: int
    predicted_width: float | None
    width_interval: list[float | None]
    cost: float
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class PlanComponents(JsonRecord):
    """The pilot's variance components: σ²_J, σ²_rep (None without repeats), σ²_Y, Cov(Y, Ŷ), the
    residual Var(Y − λŶ) after PPI++'s λ and R² between judge and human at the pilot's repeats."""

    between_question: float
    judge_repeat: float | None
    human: float
    judge_human_covariance: float
    residual: float
    r_squared: float
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class BudgetPlan(JsonRecord):
    """``calibrate --plan``: how to spend a budget (or reach a width) on questions, repeats and labels."""

    estimand: str
    price_call: float
    price_human: float
    budget: float | None
    target_width: float | None
    pilot: dict[str, int]
    components: PlanComponents
    designs: list[PlannedDesign]
    resamples: int
    seed: int
    note: str | None = None
    price_call_source: str | None = None  # where the price of a call comes from, when not --price-call
    optional: ClassVar[frozenset[str] | None] = frozenset({"note", "price_call_source"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"components": PlanComponents, "designs": PlannedDesign}


@dataclass
class DesignStratum(JsonRecord):
    """One stratum of a stratified sheet: labelled and unlabelled items, its weight W_h (share of the
    pool), its PPI++ mean and λ_h."""

    stratum: str
    labelled: int
    unlabelled: int
    weight: float
    estimate: float
    lam: float
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class DesignEstimate(JsonRecord):
    """The mean grade over all items under the design the human sheet records (``--suggest N
    --strategy``): the labels alone weighted by the design (classical), PPI++ as if the labels were a
    uniform draw, and the design's own estimator (stratified PPI++ or active IPW PPI++), side by side."""

    strategy: str
    strata: str | None
    seed: int | None
    sheet_rows: int
    labelled: int
    classical: Interval
    ppi: Interval | None
    design: Interval
    per_stratum: list[DesignStratum] | None = None
    note: str | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset({"per_stratum", "note"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"classical": Interval, "ppi": Interval, "design": Interval,
                                                     "per_stratum": DesignStratum}


@dataclass
class CalibrateMeta(JsonRecord):
    command: str
    graded: str
    human: str | None
    by: str
    alpha: float
    items: int
    labelled: int
    reference_gate: dict[str, Any]
    judge_grade: str
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class CalibrateResult(JsonRecord):
    meta: CalibrateMeta
    agreement: Agreement | None
    estimates: Estimates
    suggested: Suggested | None
    plan: BudgetPlan | None = None
    design: DesignEstimate | None = None
    run_record: dict[str, Any] = field(default_factory=dict)
    optional: ClassVar[frozenset[str] | None] = frozenset({"plan", "design"})
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"meta": CalibrateMeta, "agreement": Agreement,
                                                     "estimates": Estimates, "suggested": Suggested,
                                                     "plan": BudgetPlan, "design": DesignEstimate}


