"""Rendering of ``ragdiag calibrate`` results: plain sentences first, then rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ragdiag.report.trust import calibrate_trust
from ragdiag.results.calibrate import Agreement, CalibrateResult, Estimates, Interval


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
    gap = ppi_gap_note(result.estimates)
    if gap:
        console.print(gap, style="dim")
    suggested = result.suggested
    if suggested:
        console.print(f"wrote {suggested.sheet}: {suggested.items} items to label (highest "
                      f"{suggested.signal}); fill in the grade column and pass it to --human")
        if suggested.note:
            console.print(f"note: {suggested.note}", style="yellow")
