"""Rendering of ``ragdiag evaluate`` results: a rich table, CSV, and a PNG of RA-nWG@K beside PROC@K."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ragdiag.errors import DataError
from ragdiag.extras import require
from ragdiag.measures.registry import EVALUATE, is_standard, label
from ragdiag.report.plot_text import at_dpi, plain_text_plot
from ragdiag.results.evaluate import Comparison, EvaluateResult, LabelHeterogeneity, MetricValue, StageShare

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _value(entry: MetricValue | StageShare) -> str:
    if entry.value is None:
        return "NA"
    text = f"{entry.value:.3f}"
    if entry.ci:
        text += f" [{entry.ci[0]:.3f}, {entry.ci[1]:.3f}]"
    return text


def _diff(entry: Comparison) -> str:
    if entry.diff is None:
        return "NA"
    text = f"{entry.diff:+.3f}"
    if entry.ci:
        text += f" [{entry.ci[0]:+.3f}, {entry.ci[1]:+.3f}]"
    return text


def heterogeneity_line(h: LabelHeterogeneity) -> str:
    """Paper 001 §3.5's summary of how unevenly useful passages spread over queries, in its words."""
    return (f"label heterogeneity over {h.queries} queries — median per-query counts: grade 5 "
            f"{h.grade5.median:g} (mean {h.grade5.mean:.1f}), grade 4 {h.grade4.median:g} "
            f"(mean {h.grade4.mean:.1f}), grade 4+5 {h.grade45.median:g} (mean {h.grade45.mean:.1f}); "
            f"median pool prevalence of grade 4+5 {100 * h.prevalence45.median:.1f}%; "
            f"{h.queries_without_grade5} queries without a grade-5 passage")


FEW_QUERIES = 5  # below this many queries an interval or a decision is flagged, not trusted


def few_queries_warning(n: int) -> str:
    """The warning printed with intervals and decisions that rest on fewer than 5 queries."""
    return (f"warning: only {n} judged quer{'y' if n == 1 else 'ies'}: intervals and decisions on fewer than "
            f"{FEW_QUERIES} queries are not reliable (a bootstrap over {n} values cannot show the spread); add queries")


def header_lines(result: EvaluateResult) -> list[str]:
    """What the table is, in one line (and the small-sample warning): the conventions follow the table
    (:func:`note_lines`), so the numbers come first."""
    p, meta = result.params, result.meta
    if meta is None:
        raise DataError("evaluate result: field 'meta' is missing: the header needs its inputs and conventions")
    lines = [f"ragdiag evaluate · qrels {meta.qrels} · {meta.n_queries} judged queries · K {list(p.k)} · pool depth "
             f"{p.pool_depth} · {p.bootstrap} bootstrap replicates (seed {p.seed}): 95% intervals in brackets, "
             "n = queries where defined"]
    if meta.n_queries < FEW_QUERIES:
        lines.append(few_queries_warning(meta.n_queries))
    return lines


def note_lines(result: EvaluateResult) -> list[str]:
    """The conventions behind the numbers, printed after the table: weights, how the standard metrics
    read the grades, the qrels, the labels' heterogeneity and each run's depth."""
    p, meta = result.params, result.meta
    if meta is None:
        raise DataError("evaluate result: field 'meta' is missing: the notes need its inputs and conventions")
    lines = [f"weights: alpha={p.alpha:g} cap4={p.cap4:g} cap3={p.cap3:g} fallback4={p.fallback4:g} "
             f"fallback3={p.fallback3:g} (ragdiag's default weights) · gold >= {p.gold} · harm <= {p.harm_max}"]
    std = meta.conventions["standard_metrics"]
    if any(is_standard(m) for m in p.metrics):
        lines.append(f"standard metrics via ir_measures: {std['graded_gain']}; {std['binary_relevance']}; ties: {std['ties']}")
    if "qrels" in meta.conventions:
        lines.append(meta.conventions["qrels"])
    if result.label_heterogeneity:
        lines.append(heterogeneity_line(result.label_heterogeneity))
    for run in meta.runs:
        lines.append(f"run {run.run}: {run.path} · depth {run.depth}"
                     + (f" · {run.skipped_queries} unjudged queries skipped" if run.skipped_queries else "")
                     + (f" · shallower than the pool depth: PROC uses its {run.depth} passages" if run.depth < p.pool_depth else ""))
    return lines


def decision_lines(result: EvaluateResult) -> list[str]:
    out = []
    for run in result.runs:
        d = run.decision
        t = d.thresholds
        if d.verdict is None:
            out.append(f"{run.run}: no decision (PROC undefined on every query)")
            continue
        pct = "NA" if d.pct_proc is None else f"{d.pct_proc:.3f}"
        out.append(f"{run.run}: at K = {d.k}, {d.verdict} (PROC {d.proc:.3f}, %PROC {pct}; retrieval-bound if PROC < "
                   f"{t.proc_below_is_retrieval_bound}, ordering-bound if %PROC < {t.pct_proc_below_is_ordering_bound}) — {d.advice}")
    depth = result.params.pool_depth
    for run in result.runs:
        d = run.decision
        others = [v for v in d.by_k if v.k != d.k and v.verdict is not None and v.verdict != d.verdict]
        if d.verdict is not None and others:
            out.append(f"{run.run}: at " + ", ".join(f"K = {v.k} {v.verdict}" for v in others) + f" — each K judges its own "
                       f"top against the same pool (the top {depth}): the decision above is for K = {d.k}, the first --k")
        if d.verdict is not None and d.k >= depth:
            out.append(f"{run.run}: K = {d.k} reaches the pool depth ({depth}): the top K is the whole pool, so PROC "
                       "cannot tell retrieval from ordering; choose a K below --pool-depth")
    return out


def attribution_lines(result: EvaluateResult) -> list[str]:
    out = []
    for run in result.runs:
        att = run.attribution
        if not att:
            continue
        if att.note:
            out.append(f"{run.run}: {att.note}")
        for block in att.by_k:
            parts = [f"{stage.replace('_', ' ')} {_value(s)} ({s.count})" for stage, s in block.shares.items()]
            out.append(f"{run.run} @{block.k} ({block.graded_answers} graded answers): " + "; ".join(parts))
    return out


def json_text(result: EvaluateResult) -> str:
    """The JSON document (what ``--format json`` prints or writes)."""
    return json.dumps(result.to_json(), ensure_ascii=False, indent=1) + "\n"


def render_table(result: EvaluateResult, console: Console) -> None:
    """Header, run × metric × K table, decisions, attribution and pairwise comparisons."""
    for line in header_lines(result):
        console.print(line, highlight=False, markup=False)
    ks = result.params.k
    table = Table(show_lines=False)
    table.add_column("run")
    table.add_column("metric")
    for k in ks:
        table.add_column(f"@{k}", justify="right")
    table.add_column("n", justify="right")
    for run in result.runs:
        by_metric: dict[str, dict[int, MetricValue]] = {}
        for entry in run.metrics:
            by_metric.setdefault(entry.metric, {})[entry.k] = entry
        for i, (metric, cells) in enumerate(by_metric.items()):
            n = sorted({cells[k].n_defined for k in ks})
            table.add_row(run.run if i == 0 else "", label(metric),
                          *[_value(cells[k]) for k in ks], "/".join(str(x) for x in n), end_section=i == len(by_metric) - 1)
    console.print(table)
    console.print("PROC decision:", highlight=False)
    for line in decision_lines(result):
        console.print("  " + line, highlight=False, markup=False)
    lines = attribution_lines(result)
    if lines:
        console.print("stage attribution (share of graded answers, 95% interval, count):", highlight=False)
        for line in lines:
            console.print("  " + line, highlight=False, markup=False)
    if result.comparisons:
        lower = " and ".join(m.label for m in EVALUATE.measures if m.lower_is_better)
        comp = Table(title="paired differences b − a (95% paired bootstrap interval; improved / worsened = share of queries "
                           f"where b is better / worse; lower is better for {lower})")
        for name in ("a", "b", "metric", "k", "diff", "improved", "worsened", "n"):
            comp.add_column(name, justify="right" if name in ("k", "improved", "worsened", "n") else "left")
        def share(x: float | None) -> str:
            return "NA" if x is None else f"{x:.2f}"

        for c in result.comparisons:
            comp.add_row(c.a, c.b, label(c.metric), str(c.k), _diff(c), share(c.improved), share(c.worsened),
                         str(c.n_defined))
        console.print(comp)
    console.print("notes:", highlight=False)
    for line in note_lines(result):
        console.print("  " + line, highlight=False, markup=False)


def table_text(result: EvaluateResult, width: int = 160) -> str:
    """The table rendering as plain text (for ``--out`` with ``--format table``)."""
    buffer = io.StringIO()
    render_table(result, Console(file=buffer, width=width, no_color=True, force_terminal=False))
    return buffer.getvalue()


def csv_text(result: EvaluateResult) -> str:
    """One row per (run, metric, k) and per comparison: kind, run/a, b, metric, k, value, ci_low, ci_high, n_defined, improved, worsened."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["kind", "run", "b", "metric", "k", "value", "ci_low", "ci_high", "n_defined", "improved", "worsened"])
    ci: Sequence[float | None]  # an interval, or two empty cells
    for run in result.runs:
        for e in run.metrics:
            ci = e.ci or [None, None]
            writer.writerow(["metric", run.run, "", e.metric, e.k, e.value, ci[0], ci[1], e.n_defined, "", ""])
    for c in result.comparisons:
        ci = c.ci or [None, None]
        writer.writerow(["diff", c.a, c.b, c.metric, c.k, c.diff, ci[0], ci[1], c.n_defined, c.improved, c.worsened])
    return buffer.getvalue()


@plain_text_plot
def plot(result: EvaluateResult) -> Figure:
    """RA-nWG@K and PROC@K per run, side by side, bars with 95% intervals (matplotlib, Agg)."""
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = result.params.k
    runs = result.runs
    fig, axes = plt.subplots(1, len(ks), figsize=(4.2 * len(ks), 4.6), squeeze=False, sharey=True)
    width = 0.8 / max(len(runs), 1)
    bars = {"ra_nwg": ("#3b6ea5", "realised"), "proc": ("#b8cbe0", "ceiling of the pool")}  # colour, role
    for ax, k in zip(axes[0], ks):
        for i, run in enumerate(runs):
            for j, (metric, (colour, role)) in enumerate(bars.items()):
                entry = run.value(metric, k)
                if entry is None or entry.value is None:
                    continue
                x = i + (j - 0.5) * width * 0.9
                err = None
                if entry.ci:
                    err = [[entry.value - entry.ci[0]], [entry.ci[1] - entry.value]]
                ax.bar(x, entry.value, width * 0.9, yerr=err, capsize=3, color=colour,
                       edgecolor="#333333", linewidth=0.5, label=f"{label(metric)} ({role})" if i == 0 else None)
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([r.run for r in runs], rotation=20, ha="right")
        ax.set_title(f"K = {k}")
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("macro mean over judged queries")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    p = result.params
    fig.suptitle(f"RA-nWG@K vs PROC@K (pool depth {p.pool_depth}; 95% bootstrap intervals, {p.bootstrap} replicates, seed {p.seed})",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return at_dpi(fig, 120)
