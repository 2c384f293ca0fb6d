"""Rendering of ``ragdiag dynamic-k``: one row per policy (fixed K_low, each θ, fixed K_high), CSV,
and a plot of quality against mean candidates per query."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ragdiag.measures.registry import DYNAMIC_K, label_at
from ragdiag.report.plot_text import at_dpi, plain_text_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ragdiag.results.dynamic_k import DynamicKResult, PolicyRow
    from ragdiag.results.evaluate import Estimate


def _value(entry: Estimate) -> str:
    return "–" if entry.value is None else f"{entry.value:.3f}"


def _value_signed(entry: Estimate) -> str:
    return "–" if entry.value is None else f"{entry.value:+.3f}"


def _difference(entry: Estimate) -> str:
    """+0.012 (+0.003…+0.021): the paired difference and its 95% interval."""
    if entry.value is None:
        return "–"
    text = f"{entry.value:+.3f}"
    if entry.ci:
        text += f" ({entry.ci[0]:+.3f}…{entry.ci[1]:+.3f})"
    return text


def _reaches(entry: Estimate) -> bool:
    """The difference to fixed K_high is not below 0 (its interval reaches 0, or the value without one)."""
    return entry.ci[1] >= 0 if entry.ci else (entry.value or 0.0) >= 0


HEADLINE, CEILING = DYNAMIC_K[0], DYNAMIC_K[-1]  # ra_nwg (realised quality), proc (the pool's ceiling)


def _at_cutoffs(names: list[str], measure: str) -> list[str]:
    """The ``measure@K`` among ``names``, in their order."""
    return [n for n in names if n.partition("@")[0] == measure]


def decidable(names: list[str]) -> bool:
    """Whether a policy's metrics hold what the decision lines read: the headline and the ceiling at some K."""
    return bool(_at_cutoffs(names, HEADLINE)) and bool(_at_cutoffs(names, CEILING))


def headline(result: DynamicKResult) -> str:
    """The metric the summary and the plot lead with: RA-nWG at the largest cut-off."""
    return _at_cutoffs(result.metric_names, HEADLINE)[-1]


def proc_metric(result: DynamicKResult) -> str:
    """The PROC the summary and the plot show: PROC at the first cut-off."""
    return _at_cutoffs(result.metric_names, CEILING)[0]


def recommended(result: DynamicKResult, metric: str) -> PolicyRow | None:
    """The cheapest policy whose ``metric`` is not below fixed K_high (its paired interval reaches 0):
    fixed K_low when it already does, else the dynamic policy with the fewest mean candidates; None
    when no policy below K_high's mean K reaches it."""
    fixed_low, fixed_high = result.policies[0], result.policies[-1]
    if _reaches(fixed_low.vs_high[metric]):
        return fixed_low
    found = None
    for row in result.policies[1:-1]:
        if _reaches(row.vs_high[metric]) and (found is None or row.mean_candidates < found.mean_candidates):
            found = row
    return None if found is None or found.mean_candidates >= fixed_high.mean_candidates else found


def _cheapest_match(result: DynamicKResult, metric: str) -> str:
    """The cheapest dynamic policy whose ``metric`` is not below fixed K_high (interval reaching 0)."""
    fixed_low, fixed_high = result.policies[0], result.policies[-1]
    found = recommended(result, metric)
    head = (f"{label_at(metric)}: fixed K_low {_value(fixed_low.metrics[metric])}, fixed K_high "
            f"{_value(fixed_high.metrics[metric])}")
    low_gap = fixed_low.vs_high[metric]
    if found is fixed_low:
        return head + f"; fixed K_low already reaches K_high's value ({_difference(low_gap)}): escalating buys nothing"
    if found is None:
        return head + "; no dynamic policy reaches K_high's value at a lower mean K"
    return (head + f"; dynamic {found.label} reaches it (difference to K_high {_difference(found.vs_high[metric])}) "
            f"escalating {100 * found.share_escalated:.0f}% of queries, mean K {found.mean_candidates:.1f}")


def summary_lines(result: DynamicKResult) -> list[str]:
    p, sig = result.params, result.signal
    lines = [f"ragdiag dynamic-k · {result.queries} judged queries · K_low {p.k_low} / K_high {p.k_high} · "
             f"signal: {sig.name} (escalate when {sig.escalate_when} θ; median {sig.median:.4g}) · "
             f"bootstrap {p.bootstrap} seed {p.seed}"]
    lines += [_cheapest_match(result, headline(result)), _cheapest_match(result, proc_metric(result))]
    return lines


def render_table(result: DynamicKResult, console: Console) -> None:
    for line in summary_lines(result):
        console.print(line, highlight=False)
    names = result.metric_names
    lead = headline(result)
    priced = result.params.price_per_mtok > 0
    table = Table(title=f"per policy (θ: dynamic, escalating when the signal is {result.signal.escalate_when} θ): "
                        f"means over queries; Δ = paired difference of {label_at(lead)} (95% bootstrap interval "
                        f"in JSON/CSV for every Δ)")
    table.add_column("policy", overflow="fold", min_width=12)
    for title in ("esc.", "mean K", *(("cost/1k",) if priced else ())):
        table.add_column(title, justify="right", no_wrap=True)
    for n in names:
        table.add_column(label_at(n), justify="right", no_wrap=True)
    table.add_column("Δ vs K_low", justify="right", no_wrap=True, min_width=6)
    table.add_column("Δ vs K_high", justify="right", no_wrap=True)
    for row in result.policies:
        table.add_row(row.label, f"{100 * row.share_escalated:.0f}%", f"{row.mean_candidates:.1f}",
                      *((f"{row.cost_per_1k:.2f}",) if priced else ()), *(_value(row.metrics[n]) for n in names),
                      _value_signed(row.vs_low[lead]), _difference(row.vs_high[lead]))
    from ragdiag.report.fit_table import fitted

    console.print(fitted(table))


def table_text(result: DynamicKResult, width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    render_table(result, console)
    return console.export_text()


def json_text(result: DynamicKResult) -> str:
    """The JSON document (what ``--format json`` prints or writes)."""
    return json.dumps(result.to_json(), indent=2, allow_nan=False) + "\n"


def csv_text(result: DynamicKResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = result.metric_names
    writer.writerow(["policy", "threshold", "share_escalated", "mean_candidates", "cost_per_1k",
                     *names, *(f"{n}_vs_low" for n in names), *(f"{n}_vs_high" for n in names)])
    for row in result.policies:
        writer.writerow([row.label, row.threshold, row.share_escalated, row.mean_candidates,
                         row.cost_per_1k, *(row.metrics[n].value for n in names),
                         *(row.vs_low[n].value for n in names), *(row.vs_high[n].value for n in names)])
    return buffer.getvalue()


@plain_text_plot
def plot(result: DynamicKResult) -> Figure:
    """RA-nWG (largest cut-off) and PROC (first cut-off), each with its interval band, against mean
    candidates per query: the dynamic sweep as a line, fixed K_low and K_high as squares."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.policies
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    dynamic = sorted(rows[1:-1], key=lambda r: r.mean_candidates)
    for ax, metric in zip(axes, (headline(result), proc_metric(result))):
        xs = [r.mean_candidates for r in dynamic]
        entries = [r.metrics[metric] for r in dynamic]
        ax.plot(xs, [e.value for e in entries], "-o", color="tab:blue", label="dynamic K (θ swept)", zorder=3)
        intervals = [e.ci for e in entries if e.ci]
        if len(intervals) == len(entries):
            ax.fill_between(xs, [ci[0] for ci in intervals], [ci[1] for ci in intervals], color="tab:blue",
                            alpha=0.15, label="95% bootstrap interval")
        for row, color in ((rows[0], "tab:orange"), (rows[-1], "tab:red")):
            ax.scatter([row.mean_candidates], [row.metrics[metric].value], marker="s", s=80, color=color,
                       zorder=4, label=row.label)
        ax.set_xlabel("mean candidates per query (cost ∝ this)")
        ax.set_ylabel(label_at(metric))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Dynamic K: quality against candidates sent; signal: {result.signal.name} "
                 f"(escalate when {result.signal.escalate_when} θ)", fontsize=9)
    return at_dpi(fig, 120)
