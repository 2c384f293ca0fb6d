"""Rendering of ``ragdiag correlate`` results: rich tables, JSON, CSV and a heatmap PNG."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragdiag.errors import DataError
from ragdiag.measures.registry import needs_sibling
from ragdiag.metrics.analysis import TIE_TOLERANCE
from ragdiag.report.coverage_text import verdict_basis
from ragdiag.report.plot_text import at_dpi, plain_text_plot
from ragdiag.report.reference_gate_lines import gate_line, withheld_lines
from ragdiag.report.trust import corrected_text, correlate_trust, survival_clause
from ragdiag.results.correlate import CorrelateResult, KindEntry, Verdict

if TYPE_CHECKING:  # rich is imported where a table is made: JSON and CSV output do without it
    from matplotlib.figure import Figure
    from rich.console import Console
    from rich.table import Table


def _cell(entry: KindEntry | None) -> str:
    if not entry or entry.value is None:
        return "–"
    text = f"{entry.value:.3f}"
    if entry.alpha is not None:
        text += f" (α {entry.alpha:.3g})"
    if entry.ci:
        text += f"\n[{entry.ci[0]:.3f}, {entry.ci[1]:.3f}]"
    if corrected_text(entry):
        text += f"\n{corrected_text(entry)}"
    return text


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def title_line(report: CorrelateResult) -> str:
    meta = report.meta
    grades = "SIMULATED GRADES — " if meta.simulated_grades else ""
    line = f"{grades}ragdiag correlate · {meta.source} · segments {meta.segments}"
    if meta.min_samples is not None:
        line += f" (min {meta.min_samples})"
    if meta.alpha_grid:
        line += f" · α grid {meta.alpha_grid} ({meta.alpha_grid_size} values)"
    return line


def shown_kinds(report: CorrelateResult) -> list[str]:
    """The correlation kinds the tables show: those asked for with --corr, else the first (Spearman)."""
    return report.shown_kinds()


SEGMENT_LEGENDS = {
    "ratio": "segment codes: EMBEDDER^SUBSET^KtoN^r, e.g. L6^M^KtoN^1.5 = embedder L6, subset M, "
             "K/Np = 1.5 (r < 1 narrow: fewer slots than positives; r ≥ 1 wide)",
    "nw": "segment codes: EMBEDDER^SUBSET^side, e.g. L6^M^0 = embedder L6, subset M, narrow (Np > K); "
          "^1 = wide (Np ≤ K)",
    "pooled": "segment codes: EMBEDDER^SUBSET, e.g. L6^M = every row of embedder L6 and subset M together",
}


def segment_legend(report: CorrelateResult) -> str | None:
    return SEGMENT_LEGENDS.get(report.meta.segments)


def dropped_line(report: CorrelateResult) -> str | None:
    """How many segments were dropped for having fewer than --min-samples rows, with their sizes."""
    dropped = report.segments_dropped
    if dropped is None:
        return None
    total = len(dropped) if report.segments_total is None else report.segments_total
    if not dropped:
        return f"segments: all {total} kept (each has ≥ {report.meta.min_samples} rows)"
    sizes = ", ".join(f"{d.segment} ({d.rows})" for d in sorted(dropped, key=lambda d: -d.rows)[:8])
    more = f", … {len(dropped) - 8} more" if len(dropped) > 8 else ""
    return (f"segments: {len(dropped)} of {total} dropped for fewer than {report.meta.min_samples} rows "
            f"(rows): {sizes}{more}")


def e_note(report: CorrelateResult) -> str | None:
    """Why E (a measure reading the x·K sibling) has no value: its sibling ranking (e.g. K' = 2·K) is missing."""
    meta = report.meta
    sibling = [m for m in meta.measures if needs_sibling(m)]
    if not sibling or report.rows_without_sibling in (None, 0):
        return None
    missing = report.rows_without_sibling
    xk = 2 if meta.xk is None else meta.xk
    names = ", ".join(sibling)
    if all(_left_out(report, m) for m in sibling):
        return (f"{names}: no value — none of the {meta.rows} rows has its {xk:g}·K ranking (same query, embedder, "
                f"Nc, Np at K' = round({xk:g}·K)) in this data, and {names} needs it to estimate Np; column left out")
    return (f"{names}: {missing} of {meta.rows} rows lack their {xk:g}·K ranking and are left out of {names} "
            "(– where a segment has too few rows with it)")


def _left_out(report: CorrelateResult, measure: str) -> bool:
    """A measure reading the x·K sibling with no result: no row has the sibling."""
    return needs_sibling(measure) and not any(r.measure == measure for r in report.results)


def results_tables(report: CorrelateResult, kinds: list[str] | None = None) -> list[Table]:
    """One table per correlation kind: segments × measures, cells = max correlation (α)."""
    from rich.table import Table

    meta = report.meta
    measures = [m for m in meta.measures if not _left_out(report, m)]
    tables = []
    segments = list(dict.fromkeys(r.segment for r in report.results))
    by_key = {(r.segment, r.measure): r for r in report.results}
    over = " (α at the max)" if meta.alpha_grid else ""
    for kind in kinds or meta.kinds:
        table = Table(title=f"{'max ' if over else ''}{kind} correlation with the grade{over}", show_lines=bool(meta.bootstrap))
        table.add_column("segment", overflow="fold")
        table.add_column("n", justify="right", overflow="fold")
        for measure in measures:
            table.add_column(measure, justify="right", overflow="fold")
        for segment in segments:
            rows = [by_key.get((segment, m)) for m in measures]
            n = max((r.n for r in rows if r), default=0)
            table.add_row(segment, str(n), *(_cell(r.kinds.get(kind)) if r else "–" for r in rows))
        tables.append(table)
    return tables


def comparison_table(report: CorrelateResult) -> Table:
    from rich.table import Table

    if report.meta.compare is None or report.comparisons is None:
        raise DataError("correlate result: the comparison table needs both 'meta.compare' and 'comparisons'")
    first, second = report.meta.compare
    table = Table(title=f"paired difference: max({first}) − max({second}) per segment")
    table.add_column("segment", overflow="fold")
    kinds = shown_kinds(report)
    for kind in kinds:
        table.add_column(kind, justify="right", overflow="fold")
    for row in report.comparisons:
        cells = []
        for kind in kinds:
            entry = row.kinds[kind]
            text = _signed(entry.difference)
            if entry.ci:
                text += f" [{entry.ci[0]:+.3f}, {entry.ci[1]:+.3f}]"
            cells.append(text)
        table.add_row(row.segment, *cells)
    return table


def system_table(report: CorrelateResult) -> Table:
    from rich.table import Table

    system = report.system
    if system is None:
        raise DataError("correlate result: field 'system' is missing: no system-level table to show")
    table = Table(title="system level: per (E, subset, K) statistic vs mean grade, across configurations "
                        f"({len(system.groups)} configurations)")
    table.add_column("statistic", overflow="fold")
    for kind in ("spearman", "pearson", "kendall_b", "kendall_c"):
        table.add_column(kind, justify="right", overflow="fold")
    for row in system.correlations:
        table.add_row(row.statistic, *(_signed(getattr(row, k)) for k in ("spearman", "pearson", "kendall_b", "kendall_c")))
    return table


def verdict_table(report: CorrelateResult) -> Table:
    from rich.table import Table

    boot = report.meta.bootstrap
    kinds = ", ".join(dict.fromkeys(v.kind for v in report.verdicts))
    table = Table(title=f"Verdict: which measure predicts the grade best (mean {kinds} of per-segment maxima, "
                        "over the segments where every measure is defined)")
    for name in ("subset", "side", "segments", "best", "mean", "runner-up", "lead"):
        table.add_column(name, justify="right" if name in ("segments", "mean", "lead") else "left", overflow="fold")
    table.add_column("lead holds" if boot else "lead holds (needs --bootstrap)", justify="right", overflow="fold")
    for v in report.verdicts:
        holds = "–" if v.lead_holds is None else f"{100 * v.lead_holds:.0f}% of {boot} resamples"
        best = " = ".join(tied_names(v)) + " (tie)" if is_tie(v) else v.best
        runner_up = "–" if is_tie(v) else v.runner_up or "–"  # a tie has no runner-up
        table.add_row(v.subset, v.side, str(v.segments), best, f"{v.best_mean:.3f}",
                      runner_up, _lead(v.lead), holds)
    return table


TIE = TIE_TOLERANCE


def is_tie(verdict: Verdict) -> bool:
    """A lead below 0.0005 (shown as +0.000) is a tie, not a win."""
    return verdict.lead is not None and abs(verdict.lead) < TIE


def tied_names(verdict: Verdict) -> list[str]:
    """The measures of a tie: ``tied``, or the best and the runner-up when the result lists none."""
    if verdict.tied:
        return verdict.tied
    if verdict.runner_up is None:
        raise DataError(f"correlate result: verdict for '{verdict.subset}': a tie without a 'runner_up'")
    return [verdict.best, verdict.runner_up]


TINY_SAMPLE = 10  # rows: below this a Spearman ρ's 95% interval is wider than ±0.6 (1.96/√(n−3) at ρ = 0)


def verdict_rows(report: CorrelateResult, verdict: Verdict) -> int | None:
    """The most rows any segment behind ``verdict`` has (the whole file's rows when none is found; None
    when the result names neither, as a result file of an older version may)."""
    sizes = [r.n for r in report.results if r.side == verdict.side and r.segment.split("^")[1:2] == [verdict.subset]]
    if sizes:
        return max(sizes)
    return report.meta.rows if report.meta.has("rows") else None


def tiny_sample_clause(rows: int | None) -> str:
    """The warning a verdict on fewer than TINY_SAMPLE rows carries ('' otherwise, or when unknown)."""
    if rows is None or rows >= TINY_SAMPLE:
        return ""
    return (f"warning: only {rows} row{'s' if rows != 1 else ''} behind this verdict — a correlation on fewer than "
            f"{TINY_SAMPLE} rows is not reliable (its 95% interval spans more than ±0.6); read it as an anecdote")


def verdict_sentences(report: CorrelateResult) -> list[str]:
    """One plain sentence per verdict, e.g. 'M, narrow: T predicts the grade best (spearman 0.482),
    +0.006 ahead of F, lead holds in 73% of 200 resamples'."""
    boot = report.meta.bootstrap
    group_col = report.meta.group_col
    lines = []
    for v in report.verdicts:
        where = v.subset if v.side in ("pooled", "all") else f"{v.subset}, {v.side}"
        if group_col:
            where = f"{group_col} = {v.subset}"
        if v.runner_up is None:
            tiny = tiny_sample_clause(verdict_rows(report, v))
            lines.append(f"{where}: only {v.best} is defined ({v.kind} {v.best_mean:.3f})" + (f"; {tiny}" if tiny else ""))
            continue
        if is_tie(v):
            tied = v.tied or [v.best, v.runner_up]
            names = ", ".join(tied[:-1]) + f" and {tied[-1]}"
            text = (f"{where}: tie — {names} predict the grade equally well "
                    f"({v.kind} {v.best_mean:.3f}, within {TIE:g} of each other)")
        else:
            text = (f"{where}: {v.best} predicts the grade best ({v.kind} {v.best_mean:.3f}), "
                    f"{v.lead:+.3f} ahead of {v.runner_up}")
        if v.lead_holds is not None and not is_tie(v):
            text += f"; the lead holds in {100 * v.lead_holds:.0f}% of {boot} resamples"
        if survival_clause(v) and not is_tie(v):
            text += f"; {survival_clause(v)}"
        if tiny_sample_clause(verdict_rows(report, v)):
            text += f"; {tiny_sample_clause(verdict_rows(report, v))}"
        lines.append(text)
    return lines


def _lead(value: float | None) -> str:
    """The lead over the runner-up; below 0.0005 it is shown as a tie."""
    if value is not None and abs(value) < TIE:
        return f"{value:+.3f} (tie)"
    return _signed(value)


def print_report(report: CorrelateResult | dict, console: Console, withheld: str | None = None,
                 sidecars: Sequence[Any] = ()) -> None:
    """Where the numbers come from, the verdict in plain words and one line of advice, the legend
    of every measure shown, then the detail tables and notes; the verdict table last.

    ``withheld``: why no verdict holds (a failed ``--min-coverage`` gate): the verdict, its advice
    and the verdict table are replaced by that line; the correlations are still shown.

    ``sidecars``: the manifests beside the graded file, read by the caller
    (:func:`ragdiag.commands.provenance.sidecar_manifests`): the judge they name may be a test server.

    ``report`` may still be the JSON dict (``pipeline`` and ``corpus-pipeline`` print their
    correlation this way until they hold a :class:`CorrelateResult`)."""
    from ragdiag.report.correlate_guide import advice_line, provenance_lines
    from ragdiag.report.fit_table import fitted  # tables at the console's width, no number or name split

    if isinstance(report, dict):
        report = CorrelateResult.from_json(report)

    for line in provenance_lines(report, sidecars):
        console.print(line, style="bold red", highlight=False)
    for line in filter(None, [gate_line(report), *withheld_lines(report)]):
        console.print(line, style="yellow", soft_wrap=True, highlight=False)
    basis = verdict_basis(report)
    if basis is not None:
        console.print(basis[0], style="bold yellow" if basis[1] else "dim", highlight=False)
    if withheld:
        console.print(f"Verdict withheld: {withheld}; no verdict on these grades holds", style="bold red",
                      highlight=False)
    else:
        _print_verdict(report, console)
        advice = advice_line(report)
        if advice:
            console.print(advice, style="bold", highlight=False)
    trust = correlate_trust(report)
    if trust:
        console.print("How far to trust this", style="bold")
        for line in trust:
            console.print(f"  {line}", highlight=False)
    _print_legend(report, console)
    meta = report.meta
    console.print()
    console.print(title_line(report).removeprefix("SIMULATED GRADES — "), style="bold", highlight=False)
    info = f"seed {meta.seed} · bootstrap {meta.bootstrap or 'off'}"
    if meta.ties:
        info += f" · ties: {meta.ties}"
    if str(meta.grade_classes or "as given").startswith("rounded"):
        info += f" · grades {meta.grade_classes}"
    console.print(f"{info} · rows {meta.rows} (skipped, no grade: {meta.skipped_missing_grade})", highlight=False)
    kinds = shown_kinds(report)
    for table in results_tables(report, kinds[:1]):
        console.print(fitted(table))
    for note in (segment_legend(report), dropped_line(report), e_note(report)):
        if note:
            console.print(note, style="dim" if note is not e_note(report) else "yellow", highlight=False)
    if len(kinds) > 1:
        console.print("Details", style="bold")
        for table in results_tables(report, kinds[1:]):
            console.print(fitted(table))
    elif len(meta.kinds) > 1:
        console.print(f"(also computed: {', '.join(meta.kinds[1:])} — in --format json/csv; "
                      "--corr shows them here)", style="dim")
    if report.comparisons:
        console.print(fitted(comparison_table(report)))
    if report.system:
        console.print(fitted(system_table(report)))
    if report.verdicts and not withheld:
        console.print(fitted(verdict_table(report)))


def _print_legend(report: CorrelateResult, console: Console) -> None:
    """A legend line for every measure shown (wrapped lines stay in their column)."""
    from rich.table import Table

    from ragdiag.report.correlate_guide import SYMBOLS, legend

    lines = legend(report)
    if not lines:
        return
    console.print(f"Measures ({SYMBOLS}):", style="dim", highlight=False)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(style="dim")
    for name, text in lines:
        grid.add_row(f"  {name}", text)
    console.print(grid, highlight=False)


def _print_verdict(report: CorrelateResult, console: Console) -> None:
    """The verdict block: one plain sentence per subset and side."""
    if report.verdicts:
        console.print("Verdict", style="bold")
        for line in verdict_sentences(report):
            console.print(f"  {line}", highlight=False)
    elif report.results and not report.verdicts_withheld:
        console.print("Verdict: none — no subset has a segment where every measure is defined.", style="yellow")


def to_json(report: CorrelateResult) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=False, allow_nan=False)


def to_csv(report: CorrelateResult) -> str:
    """One line per (segment, measure, kind): value, α and interval."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    corrected = "judge_reliability" in report.present  # judge-noise correction: four more columns
    writer.writerow(["segment", "measure", "n", "side", "kind", "value", "alpha", "ci_low", "ci_high"]
                    + (["corrected", "reliability", "corrected_ci_low", "corrected_ci_high"] if corrected else []))
    ci: Sequence[float | None]  # an interval, or two empty cells
    cci: Sequence[float | None]
    for row in report.results:
        for kind in report.meta.kinds:
            entry = row.kinds[kind]
            ci = entry.ci or [None, None]
            extra = []
            if corrected:
                block = entry.corrected
                cci = (block.ci if block else None) or [None, None]
                extra = [_blank(block and block.value), _blank(block and block.reliability), _blank(cci[0]), _blank(cci[1])]
            writer.writerow([row.segment, row.measure, row.n, row.side, kind,
                             _blank(entry.value), _blank(entry.alpha), _blank(ci[0]), _blank(ci[1]), *extra])
    return buffer.getvalue()


def _blank(value: Any) -> Any:
    return "" if value is None else value


def render_text(report: CorrelateResult, fmt: str, width: int = 160, sidecars: Sequence[Any] = ()) -> str:
    """The result as ``fmt`` (json, csv, or the terminal's table; ``sidecars`` as in :func:`print_report`)."""
    if fmt == "json":
        return to_json(report) + "\n"
    if fmt == "csv":
        return to_csv(report)
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, record=True)
    print_report(report, console, sidecars=sidecars)
    return console.export_text()


@plain_text_plot
def heatmap(report: CorrelateResult) -> Figure:
    """Heatmap: segments × measures, cells = max correlation of the first kind (paper's figures),
    with the bootstrap interval under each value when computed and undefined cells hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch

    meta = report.meta
    kind = shown_kinds(report)[0]
    measures = [m for m in meta.measures if not _left_out(report, m)]
    segments = list(dict.fromkeys(r.segment for r in report.results))
    grid = np.full((len(segments), len(measures)), np.nan)
    cis: dict[tuple[int, int], list[float]] = {}
    present = np.zeros(grid.shape, dtype=bool)
    for r in report.results:
        if r.measure in measures:
            present[segments.index(r.segment), measures.index(r.measure)] = True
        if r.measure in measures and r.kinds[kind].value is not None:
            i, j = segments.index(r.segment), measures.index(r.measure)
            grid[i, j] = r.kinds[kind].value
            ci = r.kinds[kind].ci
            if ci:
                cis[(i, j)] = ci
    row_h = 0.5 if cis else 0.34
    height = 2.8 + row_h * max(len(segments), 1)
    fig, ax = plt.subplots(figsize=(3.2 + 1.4 * len(measures), height))
    ax.set_facecolor("#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(measures)), measures)
    ax.set_yticks(range(len(segments)), segments, fontsize=7)
    ax.set_xlabel("retrieval measure")
    ax.set_ylabel(f"segment ({meta.segments})")
    finite = grid[np.isfinite(grid)]
    middle = float(np.mean([finite.min(), finite.max()])) if finite.size else 0.0
    for i in range(len(segments)):
        for j in range(len(measures)):
            if np.isfinite(grid[i, j]):
                text = f"{grid[i, j]:.2f}"
                if (i, j) in cis:
                    text += f"\n[{cis[(i, j)][0]:.2f}, {cis[(i, j)][1]:.2f}]"
                color = "black" if grid[i, j] > middle else "white"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
            else:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#888888",
                                           hatch="//" if present[i, j] else ".."))
    fig.colorbar(image, ax=ax, label=f"max {kind} over α" if meta.alpha_grid else kind)
    handles = [Patch(facecolor="#d9d9d9", edgecolor="#888888", hatch="//", label="undefined (constant measure or grade)")]
    if not present.all():
        handles.append(Patch(facecolor="#d9d9d9", edgecolor="#888888", hatch="..",
                             label="not computed: too few rows (E: its x·K ranking missing)"))
    if cis:
        handles.append(Patch(facecolor="none", edgecolor="none", label="[a, b] = 95% bootstrap interval"))
    fig.legend(handles=handles, loc="lower center", fontsize=7, frameon=False, ncol=len(handles))
    title = f"{'max ' if meta.alpha_grid else ''}{kind} correlation with the grade, per segment and measure"
    if meta.simulated_grades:
        title += "\n(SIMULATED GRADES: bundled sample)"
    ax.set_title(title, fontsize=9)
    fig.tight_layout(rect=(0, min(0.5 / height, 0.15), 1, 1))
    return at_dpi(fig, 120)
