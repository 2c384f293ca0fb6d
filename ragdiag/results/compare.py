"""The typed result of ``ragdiag compare`` (``--out compare.json``), read back by ``ragdiag report``.

Keys (issue 31): ``metrics`` (one object per metric: ``metric``, ``n``, ``mean_base``, ``mean_new``,
``delta`` = new − base, ``ci_low``/``ci_high`` its 1 − 2α interval, ``p`` the chosen test's one-sided
p-value of H0: no drop beyond ``--max-drop``, ``p_adjusted``, ``d_z``, ``decision``,
``queries_needed``), ``decision`` (the gate: ``"fail"``/``"pass"``; null for a plan on one run),
``plan`` (with ``--plan``), ``budget_plan`` (with ``--plan --budget`` or ``--target-width``: the spend over
questions, judge repeats and human labels, a calibrate ``BudgetPlan``), ``judge`` (with repeated grades), ``worst`` (the most regressed queries).
``meta`` names the two sides (``base_name``, ``new_name``: ``--base-name`` / ``--new-name`` or the
file names) and ``plan_alpha``, the level the plan and ``queries_needed`` size a regression at; with a
budget plan, ``human`` and ``price_call_source`` (``--price-call``, or the judge model's known price).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord
from ragdiag.results.calibrate import BudgetPlan


@dataclass(kw_only=True)
class MetricComparison(JsonRecord):
    metric: str
    n: int
    mean_base: float
    mean_new: float
    delta: float
    ci_low: float
    ci_high: float
    p: float
    p_adjusted: float
    d_z: float | None
    decision: str
    queries_needed: int | None
    direction: str = "higher"
    sd_diff: float | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset()  # a record built in code writes nulls too (queries_needed: null)


@dataclass(kw_only=True)
class PlanEntry(JsonRecord):
    metric: str
    n: int
    sd_diff: float
    sd_source: str  # "paired differences" or "unpaired bound: √2 × sd of one run's scores"
    mde: float
    power: float
    queries_needed: int | None
    mde_at_n: float
    power_at_needed: float | None = None
    optional: ClassVar[frozenset[str] | None] = frozenset()  # a record built in code writes nulls too (queries_needed: null)


@dataclass(kw_only=True)
class JudgeSplit(JsonRecord):
    metric: str
    k: float
    sigma2_judge: float
    sigma2_judge_ci: list[float]
    variance: float
    judge_part: float
    between_part: float
    judge_share: float
    repeat_calls: float
    query_calls: float
    variance_cut_per_call_repeat: float
    variance_cut_per_call_query: float
    advice: str
    sides: int | None = None  # how many sides' judge variances sigma2_judge sums (1: --base alone; 2: base + new)
    sigma2_judge_ci_method: str | None = None  # how sigma2_judge_ci was computed (a χ² interval in earlier files)
    optional: ClassVar[frozenset[str] | None] = frozenset({"sides", "sigma2_judge_ci_method"})


@dataclass(kw_only=True)
class MetricSequence(JsonRecord):
    """``--sequential``: one metric's confidence sequence of Δ = new − base at each look (``n`` queries
    read, the running ``lower`` and ``upper`` bounds; null before the first look), and its decision
    with the look it was reached at (null: not decided)."""

    metric: str
    sequence: str  # "betting" or "asymptotic"
    decision: str
    decided_at: int | None
    e_regression: float  # e-Holm's adjusted e-value against "no drop beyond the margin" (≥ 1/α: regression)
    e_no_regression: float  # … against "a drop beyond the margin" (≥ 1/α: no regression)
    n: list[int]
    lower: list[float | None]
    upper: list[float | None]
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class SequentialRun(JsonRecord):
    """``--sequential``: how the queries were replayed and where the replay stopped."""

    sequence: str
    order: str
    look_every: int
    available: int
    max_queries: int
    stopped_at: int
    bounds: list[float] | None
    burn_in: int
    metrics: list[MetricSequence]
    calls: dict[str, Any] | None = None  # the judged loop: calls paid, and saved against the fixed plan
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"metrics": MetricSequence}
    optional: ClassVar[frozenset[str] | None] = frozenset({"calls"})


@dataclass(kw_only=True)
class CompareResult(JsonRecord):
    meta: dict[str, Any] = field(default_factory=dict)
    decision: str | None = None
    metrics: list[MetricComparison] = field(default_factory=list)
    plan: list[PlanEntry] | None = None
    budget_plan: BudgetPlan | None = None  # --plan with --budget / --target-width
    judge: list[JudgeSplit] | None = None
    sequential: SequentialRun | None = None
    worst: list[dict[str, Any]] = field(default_factory=list)
    run_record: dict[str, Any] | None = None
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"metrics": MetricComparison, "plan": PlanEntry,
                                                     "budget_plan": BudgetPlan, "judge": JudgeSplit,
                                                     "sequential": SequentialRun}
    # a record built in code writes every key (plan: null) but ``sequential`` and ``budget_plan``, which
    # only --sequential and --plan --budget / --target-width write
    optional: ClassVar[frozenset[str] | None] = frozenset({"sequential", "budget_plan"})

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail (a regression, or with ``strict`` an inconclusive metric)."""
        return 1 if self.decision == "fail" else 0
