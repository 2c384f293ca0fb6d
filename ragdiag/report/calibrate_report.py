"""Rendering of ``ragdiag calibrate`` results: plain sentences first, then rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ragdiag.report.trust import calibrate_trust
from ragdiag.results.calibrate import (
    Agreement,
    BudgetPlan,
    CalibrateResult,
    DesignEstimate,
    Estimates,
    Interval,
    Suggested,
)


def _cell(block: Interval | None) -> str:
    if not block or block.estimate is None or None in block.ci:
        return "–"
    return f"{block.estimate:.3f}\n[{block.ci[0]:.3f}, {block.ci[1]:.3f}]"


def confusion_table(agreement: Agreement) -> Table:
    table = Table(title="confusion: judge grade (rounded, rows) × human grade (columns)")
    table.add_column("judge \\ human")
    for grade in range(1, 6):
        table.add_column(str(grade), justify="right")
    for grade, row in enumerate(agreement.confusion.counts, start=1):
        table.add_row(str(grade), *(str(v) for v in row))
    return table


def ppi_gap_note(estimates: Estimates) -> str | None:
    """Why a group's PPI cell is empty (fewer labelled items than PPI needs), or None."""
    from ragdiag.metrics.ppi_estimates import MIN_LABELLED

    short = [f"{row.group} ({row.labelled})" for row in estimates.mean_grade
             if row.ppi is None and row.labelled < MIN_LABELLED]
    if not short:
        return None
    return (f"PPI –: {', '.join(short)} labelled, fewer than the {MIN_LABELLED} PPI needs; label more "
            "(--suggest N) or group less finely (--by)")


def estimate_tables(result: CalibrateResult) -> list[Table]:
    estimates = result.estimates
    level = estimates.level
    means = Table(title=f"mean grade per {estimates.by} ({level} intervals)", show_lines=True)
    for name in ("group", "items", "labelled", "PPI (judge + humans)", "judge only", "humans only"):
        means.add_column(name, justify="left" if name == "group" else "right")
    for row in estimates.mean_grade:
        means.add_row(row.group, str(row.items), str(row.labelled), _cell(row.ppi), _cell(row.judge_only),
                      _cell(row.human_only))
    slopes = Table(title=f"slope of grade on each retrieval measure (OLS, {level} intervals)", show_lines=True)
    for name in ("measure", "PPI (judge + humans)", "judge only", "humans only"):
        slopes.add_column(name, justify="left" if name == "measure" else "right")
    for slope in estimates.slopes:
        slopes.add_row(slope.measure, _cell(slope.ppi), _cell(slope.judge_only), _cell(slope.human_only))
    return [means, slopes]


def plan_table(plan: BudgetPlan, level: str) -> Table:
    """The planned design and the alternatives side by side (``calibrate --plan``)."""
    aim = f"budget {plan.budget:g}" if plan.budget is not None else f"target width {plan.target_width:g}"
    table = Table(title=f"plan for the {plan.estimand}: {aim} (call {plan.price_call:g}, label "
                        f"{plan.price_human:g}); predicted {level} interval width", show_lines=True)
    for name in ("design", "new questions", "repeats", "new labels", "questions", "labels",
                 f"predicted width [{level} bootstrap]", "cost"):
        table.add_column(name, justify="left" if name == "design" else "right")
    for row in plan.designs:
        low, high = row.width_interval
        spread = "" if low is None or high is None else f"\n[{low:.3f}, {high:.3f}]"
        predicted = "–" if row.predicted_width is None else f"{row.predicted_width:.3f}{spread}"
        table.add_row(row.design, str(row.new_questions), str(row.repeats), str(row.new_labels), str(row.questions),
                      str(row.labels), predicted, f"{row.cost:g}")
    return table


def plan_lines(plan: BudgetPlan) -> list[str]:
    """The pilot's variance components in one line, the seed and any note."""
    comp = plan.components
    rep = "unknown" if comp.judge_repeat is None else f"{comp.judge_repeat:.3f}"
    lines = [f"pilot: {plan.pilot['questions']} questions, {plan.pilot['repeats']} repeats, {plan.pilot['labels']} "
             f"labels · variance between questions (judge) {comp.between_question:.3f} · judge repeat {rep} · human "
             f"{comp.human:.3f} · judge–human residual after λ {comp.residual:.3f} · R² {comp.r_squared:.3f} · "
             f"bootstrap {plan.resamples} resamples, seed {plan.seed}"]
    if plan.price_call_source:
        lines.append(f"price of a call {plan.price_call:.6g}: {plan.price_call_source}")
    return lines + ([f"note: {plan.note}"] if plan.note else [])


DESIGN_NAMES = {"uniform": "uniform draw (PPI++)", "stratified": "stratified PPI++", "active": "active (IPW PPI++)"}


def design_table(design: DesignEstimate, level: str) -> Table:
    """Classical, PPI++ and the sheet's design side by side, for the mean grade over all items."""
    how = design.strategy + (f" by {design.strata}" if design.strata else "")
    seed = "" if design.seed is None else f", seed {design.seed}"
    table = Table(title=f"mean grade over all items by the sheet's design: {how}{seed}; {design.labelled} labelled "
                        f"of {design.sheet_rows} drawn ({level} intervals)", show_lines=True)
    for name in ("classical (labels alone, weighted by the design)", "PPI++ (as if a uniform draw)",
                 DESIGN_NAMES.get(design.strategy, design.strategy)):
        table.add_column(name, justify="right")
    table.add_row(_cell(design.classical), _cell(design.ppi), _cell(design.design))
    return table


def design_lines(design: DesignEstimate) -> list[str]:
    """The strata of a stratified sheet, each with its labels, weight, estimate and λ; any note."""
    lines = []
    if design.per_stratum:
        lines.append("strata: " + " · ".join(
            f"{part.stratum}: {part.labelled} labelled / {part.unlabelled} not, W {part.weight:.3f}, "
            f"{part.estimate:.3f}, λ {part.lam:.2f}" for part in design.per_stratum))
    return lines + ([f"note: {design.note}"] if design.note else [])


def suggested_line(suggested: Suggested) -> str:
    """Where the sheet went and how its items were chosen (strategy and seed printed)."""
    if suggested.strategy is None:
        return (f"wrote {suggested.sheet}: {suggested.items} items to label (highest {suggested.signal}); fill in "
                "the grade column and pass it to --human")
    strata = f" by {suggested.strata}" if suggested.strata else ""
    expected = (f" (expected {suggested.expected:g}: each item drawn with its own probability)"
                if suggested.strategy == "active" else "")
    return (f"wrote {suggested.sheet}: {suggested.items} items to label{expected}, drawn {suggested.strategy}{strata}, "
            f"seed {suggested.seed}; the sheet records each item's sampling probability: fill in the grade column "
            "and pass it to --human as is")


def print_calibration(result: CalibrateResult, console: Console) -> None:
    meta = result.meta
    console.print(f"ragdiag calibrate · {meta.graded} · {meta.items} graded items, {meta.labelled} with a "
                  f"human grade · judge grade: {meta.judge_grade}", style="bold")
    sentences = calibrate_trust(result.to_json())  # report/trust.py reads the JSON document
    if sentences:
        console.print("How far to trust this", style="bold")
        for line in sentences:
            console.print(f"  {line}")
    agreement = result.agreement
    if agreement:
        rho = "–" if agreement.spearman is None else f"{agreement.spearman:.3f}"
        kappa = "–" if agreement.kappa_quadratic is None else f"{agreement.kappa_quadratic:.3f}"
        console.print(f"agreement on {agreement.items} items: weighted κ (quadratic) {kappa} · Spearman {rho} · "
                      f"exact {100 * agreement.exact:.0f}% · within ±1 {100 * agreement.within_one:.0f}% · "
                      f"judge − human {agreement.mean_bias:+.3f}")
        console.print(confusion_table(agreement))
    for table in estimate_tables(result):
        console.print(table)
    if result.design:
        console.print(design_table(result.design, result.estimates.level))
        for line in design_lines(result.design):
            console.print(line, style="yellow" if line.startswith("note:") else None, highlight=False)
    gap = ppi_gap_note(result.estimates)
    if gap:
        console.print(gap, style="dim")
    suggested = result.suggested
    if suggested:
        console.print(suggested_line(suggested), highlight=False)
        if suggested.note:
            console.print(f"note: {suggested.note}", style="yellow")
    if result.plan:
        console.print(plan_table(result.plan, result.estimates.level))
        for line in plan_lines(result.plan):
            console.print(line, style="yellow" if line.startswith("note:") else None, highlight=False)
