"""Rendering of ``ragdiag compare``: the gate's decision in words first, a table readable at 80
columns, the Markdown summary (``--summary-md``, ``$GITHUB_STEP_SUMMARY``) and the forest plot of Δ
with its interval per metric (the HTML report's figure)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ragdiag.measures.registry import label_at
from ragdiag.report import sequential_report
from ragdiag.report.plot_text import at_dpi, plain_text_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.console import Console, JustifyMethod

from ragdiag.results.compare import CompareResult, MetricComparison, PlanEntry

WORST_SHOWN = 5


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "−")


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _count(value: int | None) -> str:
    return "no finite number" if value is None else f"{value:,}"


def _threshold(mc: MetricComparison, max_drop: float) -> str:
    """The margin on Δ's scale: −m where higher is better, +m where lower is better."""
    return _signed(max_drop if mc.direction == "lower" else -max_drop)


def metric_line(mc: MetricComparison, result: CompareResult, show: Callable[[str], str] = label_at) -> str:
    """One metric's decision in words, then the numbers that carry it."""
    if result.sequential is not None:
        return sequential_report.metric_line(mc, result, show)
    meta = result.meta
    margin = _threshold(mc, meta["max_drop"])
    where = f"{show(mc.metric)}: Δ {_signed(mc.delta)} [{_signed(mc.ci_low)}, {_signed(mc.ci_high)}]"
    worse = "above" if mc.direction == "lower" else "below"
    better = "below" if mc.direction == "lower" else "above"
    if mc.decision == "regression":
        return (f"regression — {where} lies {worse} {margin}; p {mc.p:.3g}, adjusted ({meta['correction']}) "
                f"{mc.p_adjusted:.3g} ≤ α {meta['alpha']:g}")
    if mc.decision == "no regression":
        return f"no regression — {where} lies {better} {margin} (non-inferior at that margin)"
    limit = meta["max_drop"] if mc.direction == "lower" else -meta["max_drop"]
    past = mc.ci_low > limit if mc.direction == "lower" else mc.ci_high < limit
    why = (f"lies {worse} {margin}, but the adjusted ({meta['correction']}) p {mc.p_adjusted:.3g} > α {meta['alpha']:g}"
           if past else f"straddles {margin}")  # the interval is per metric, the test corrected for the family
    return (f"inconclusive — {where} {why}; about {_count(mc.queries_needed)} queries would decide "
            f"it (power {meta['power']:g})")


def plan_line(entry: PlanEntry, alpha: float, show: Callable[[str], str] = label_at, max_drop: float = 0.0) -> str:
    """The planning sentence: queries needed for --mde, and the drop detectable at the current n."""
    beyond = f" ({entry.mde - max_drop:g} beyond the margin)" if max_drop > 0 else ""
    return (f"plan — {show(entry.metric)}: {_count(entry.queries_needed)} queries detect a drop of {entry.mde:g}{beyond} "
            f"with power {entry.power:g} at α {alpha:g} (sd of Δ {entry.sd_diff:.3f}, {entry.sd_source}); with the "
            f"{entry.n:,} queries here the detectable drop is {entry.mde_at_n:.3f}")


def summary_lines(result: CompareResult, show: Callable[[str], str] = label_at) -> list[str]:
    """The gate first, then one line per metric, the plan and the judge-noise split."""
    meta = result.meta
    lines = []
    if result.decision is not None:
        bad = [label for mc in result.metrics if mc.decision == "regression" for label in [show(mc.metric)]]
        open_ = [show(mc.metric) for mc in result.metrics if mc.decision == "inconclusive"]
        if result.decision == "fail":
            why = (f"regression in {', '.join(bad)}" if bad else "") + ("; " if bad and open_ and meta["strict"] else "") \
                + (f"inconclusive under --strict: {', '.join(open_)}" if open_ and meta["strict"] else "")
            lines.append(f"GATE FAIL (exit 1): {why}")
        else:
            lines.append("GATE PASS: no metric regressed" + (f" ({len(open_)} inconclusive)" if open_ else ""))
        lines += [metric_line(mc, result, show) for mc in result.metrics]
    if result.sequential is not None:
        lines.append(sequential_report.stop_line(result.sequential))
    for entry in result.plan or []:
        lines.append(plan_line(entry, meta["alpha"], show, meta["max_drop"]))
    for split in result.judge or []:
        lines.append(f"judge noise — {show(split.metric)}: σ²_judge {split.sigma2_judge:.3f} "
                     f"[{split.sigma2_judge_ci[0]:.3f}, {split.sigma2_judge_ci[1]:.3f}] per grade, k = {split.k:g}: "
                     f"{100 * split.judge_share:.0f}% of the variance; {split.advice} buys more precision per call "
                     f"(a repeat on every query: {split.repeat_calls:,.0f} calls; a query: {split.query_calls:,.0f} calls)")
    return lines


def settings_line(result: CompareResult) -> str:
    if result.sequential is not None:
        return sequential_report.settings_line(result)
    meta = result.meta
    dropped = meta.get("dropped") or {}
    skipped = sum(dropped.values())
    return (f"{meta['queries']:,} paired queries ({meta['input_kind']})" + (f", {skipped} dropped (--allow-missing)"
                                                                        if skipped else "")
            + f"; test {meta['test']}, correction {meta['correction']}, α {meta['alpha']:g}, "
              f"intervals {100 * meta['interval_level']:g}%, max drop {meta['max_drop']:g}, seed {meta['seed']}")


def render(result: CompareResult, console: Console) -> None:
    """The terminal: decision lines, the table (fits 80 columns), the most regressed queries."""
    from rich.table import Table

    lines = summary_lines(result)
    count = 1 + len(result.metrics) if result.decision is not None else 0
    for line in lines[:count]:
        console.print(line, highlight=False, markup=False)
    if result.metrics:
        from rich import box

        table = Table(title=settings_line(result), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                      padding=(0, 1))
        columns: tuple[tuple[str, JustifyMethod], ...] = (
            ("decision", "left"), ("metric", "left"), ("n", "right"), ("base", "right"), ("new", "right"),
            ("Δ", "right"), ("interval", "right"), ("p adj", "right"))
        for title, justify in columns:
            table.add_column(title, justify=justify, no_wrap=title != "metric", overflow="fold")
        for mc in result.metrics:
            table.add_row(mc.decision, label_at(mc.metric), f"{mc.n:,}", f"{mc.mean_base:.3f}", f"{mc.mean_new:.3f}",
                          _signed(mc.delta), f"{_signed(mc.ci_low)} {_signed(mc.ci_high)}", _p(mc.p_adjusted))
        console.print(table)
    for line in lines[count:]:
        console.print(line, highlight=False, markup=False)
    if result.worst:
        console.print("most regressed queries (Δ per metric): " + "; ".join(
            f"{w['query_id']} " + " ".join(_signed(v) if v is not None else "–" for v in w["delta"].values())
            for w in result.worst[:WORST_SHOWN]), highlight=False, markup=False)


def markdown(result: CompareResult) -> str:
    """The Markdown summary: the gate in words, the table, the plan and the worst queries."""
    lines = summary_lines(result)
    count = 1 + len(result.metrics) if result.decision is not None else 0
    out = ["## ragdiag compare", ""]
    if count:
        out += [f"**{lines[0]}**", ""] + [f"- {line}" for line in lines[1:count]] + [""]
        out += [f"_{settings_line(result)}_", "", "| decision | metric | n | base | new | Δ | interval | p | p adj | d_z |",
                "|---|---|--:|--:|--:|--:|---|--:|--:|--:|"]
        for mc in result.metrics:
            d_z = "–" if mc.d_z is None else f"{mc.d_z:+.2f}".replace("-", "−")
            out.append(f"| {mc.decision} | {label_at(mc.metric)} | {mc.n:,} | {mc.mean_base:.4f} | {mc.mean_new:.4f} | "
                       f"{_signed(mc.delta)} | [{_signed(mc.ci_low)}, {_signed(mc.ci_high)}] | {mc.p:.3g} | "
                       f"{mc.p_adjusted:.3g} | {d_z} |")
        out.append("")
    out += [f"- {line}" for line in lines[count:]]
    if result.worst:
        out += ["", "Most regressed queries: " + ", ".join(f"`{w['query_id']}`" for w in result.worst[:WORST_SHOWN])]
    return "\n".join(out).rstrip() + "\n"


@plain_text_plot
def plot(result: CompareResult) -> Figure:
    """Forest plot: Δ per metric with its interval, the margin as a dashed line, colour = decision."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"regression": "#c0392b", "no regression": "#27ae60", "inconclusive": "#e67e22"}
    metrics = result.metrics
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.55 * len(metrics)), layout="constrained")
    ys = list(range(len(metrics)))[::-1]
    for y, mc in zip(ys, metrics):
        colour = colours[mc.decision]
        ax.plot([mc.ci_low, mc.ci_high], [y, y], color=colour, linewidth=2.5, solid_capstyle="butt")
        ax.plot([mc.delta], [y], "o", color=colour, markersize=7)
        margin = result.meta["max_drop"] * (1 if mc.direction == "lower" else -1)
        ax.plot([margin, margin], [y - 0.35, y + 0.35], color="grey", linestyle="--", linewidth=1)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(ys, [f"{label_at(mc.metric)}\n{mc.decision}" for mc in metrics], fontsize=8)
    ax.set_xlabel(f"Δ = new − base, {100 * result.meta['interval_level']:g}% interval; dashed: the margin "
                  f"(max drop {result.meta['max_drop']:g})")
    ax.set_title(f"compare: gate {(result.decision or '—').upper()}", fontsize=10)
    ax.set_ylim(-0.7, len(metrics) - 0.3)
    return at_dpi(fig, 110)
