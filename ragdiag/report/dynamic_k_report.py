"""Rendering of ``ragdiag dynamic-k``: one row per policy (fixed K_low, each θ, fixed K_high), CSV,
and a plot of quality against mean candidates per query."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

LABELS = {"ra_nwg": "RA-nWG", "nrecall4": "N-Recall4+", "proc": "PROC"}


def metric_label(name: str) -> str:
    metric, k = name.split("@")
    return f"{LABELS.get(metric, metric)}@{k}"


def _value(entry: dict[str, Any]) -> str:
    return "–" if entry["value"] is None else f"{entry['value']:.3f}"


def _value_signed(entry: dict[str, Any]) -> str:
    return "–" if entry["value"] is None else f"{entry['value']:+.3f}"


def _difference(entry: dict[str, Any]) -> str:
    """+0.012 (+0.003…+0.021): the paired difference and its 95% interval."""
    if entry["value"] is None:
        return "–"
    text = f"{entry['value']:+.3f}"
    if entry.get("ci"):
        text += f" ({entry['ci'][0]:+.3f}…{entry['ci'][1]:+.3f})"
    return text


def headline(doc: dict[str, Any]) -> str:
    """The metric the summary and the plot lead with: RA-nWG at the largest cut-off."""
    return [n for n in doc["policies"][0]["metrics"] if n.startswith("ra_nwg@")][-1]


def _cheapest_match(doc: dict[str, Any], metric: str) -> str:
    """The cheapest dynamic policy whose ``metric`` is not below fixed K_high (interval reaching 0)."""
    fixed_low, fixed_high = doc["policies"][0], doc["policies"][-1]
    found = None
    for row in doc["policies"][1:-1]:
        vs_high = row["vs_high"][metric]
        matches = vs_high["ci"][1] >= 0 if vs_high["ci"] else (vs_high["value"] or 0.0) >= 0
        if matches and (found is None or row["mean_candidates"] < found["mean_candidates"]):
            found = row
    head = (f"{metric_label(metric)}: fixed K_low {_value(fixed_low['metrics'][metric])}, fixed K_high "
            f"{_value(fixed_high['metrics'][metric])}")
    low_gap = fixed_low["vs_high"][metric]
    if (low_gap["ci"][1] >= 0 if low_gap["ci"] else (low_gap["value"] or 0.0) >= 0):
        return head + f"; fixed K_low already reaches K_high's value ({_difference(low_gap)}): escalating buys nothing"
    if found is None or found["mean_candidates"] >= fixed_high["mean_candidates"]:
        return head + "; no dynamic policy reaches K_high's value at a lower mean K"
    return (head + f"; dynamic {found['label']} reaches it (difference to K_high {_difference(found['vs_high'][metric])}) "
            f"escalating {100 * found['share_escalated']:.0f}% of queries, mean K {found['mean_candidates']:.1f}")


def summary_lines(doc: dict[str, Any]) -> list[str]:
    p, sig = doc["params"], doc["signal"]
    lines = [f"ragdiag dynamic-k · {doc['queries']} judged queries · K_low {p['k_low']} / K_high {p['k_high']} · "
             f"signal: {sig['name']} (escalate when {sig['escalate_when']} θ; median {sig['median']:.4g}) · "
             f"bootstrap {p['bootstrap']} seed {p['seed']}"]
    proc = [n for n in doc["policies"][0]["metrics"] if n.startswith("proc@")][0]
    lines += [_cheapest_match(doc, headline(doc)), _cheapest_match(doc, proc)]
    return lines


def render_table(doc: dict[str, Any], console: Console) -> None:
    for line in summary_lines(doc):
        console.print(line, highlight=False)
    names = list(doc["policies"][0]["metrics"])
    lead = headline(doc)
    priced = doc["params"]["price_per_mtok"] > 0
    table = Table(title=f"per policy (θ: dynamic, escalating when the signal is {doc['signal']['escalate_when']} θ): "
                        f"means over queries; Δ = paired difference of {metric_label(lead)} (95% bootstrap interval "
                        f"in JSON/CSV for every Δ)")
    table.add_column("policy", overflow="fold", min_width=12)
    for title in ("esc.", "mean K", *(("cost/1k",) if priced else ())):
        table.add_column(title, justify="right", no_wrap=True)
    for n in names:
        table.add_column(metric_label(n), justify="right", no_wrap=True)
    table.add_column("Δ vs K_low", justify="right", no_wrap=True, min_width=6)
    table.add_column("Δ vs K_high", justify="right", no_wrap=True)
    for row in doc["policies"]:
        table.add_row(row["label"], f"{100 * row['share_escalated']:.0f}%", f"{row['mean_candidates']:.1f}",
                      *((f"{row['cost_per_1k']:.2f}",) if priced else ()), *(_value(row["metrics"][n]) for n in names),
                      _value_signed(row["vs_low"][lead]), _difference(row["vs_high"][lead]))
    console.print(table)


def table_text(doc: dict[str, Any], width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    render_table(doc, console)
    return console.export_text()


def csv_text(doc: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = list(doc["policies"][0]["metrics"])
    writer.writerow(["policy", "threshold", "share_escalated", "mean_candidates", "cost_per_1k",
                     *names, *(f"{n}_vs_low" for n in names), *(f"{n}_vs_high" for n in names)])
    for row in doc["policies"]:
        writer.writerow([row["label"], row["threshold"], row["share_escalated"], row["mean_candidates"],
                         row["cost_per_1k"], *(row["metrics"][n]["value"] for n in names),
                         *(row["vs_low"][n]["value"] for n in names), *(row["vs_high"][n]["value"] for n in names)])
    return buffer.getvalue()


def write_plot(doc: dict[str, Any], path: Path) -> None:
    """RA-nWG (largest cut-off) and PROC (first cut-off), each with its interval band, against mean
    candidates per query: the dynamic sweep as a line, fixed K_low and K_high as squares."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ragdiag.io.writer import atomic_path

    rows = doc["policies"]
    proc = [n for n in rows[0]["metrics"] if n.startswith("proc@")][0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    dynamic = sorted(rows[1:-1], key=lambda r: r["mean_candidates"])
    for ax, metric in zip(axes, (headline(doc), proc)):
        xs = [r["mean_candidates"] for r in dynamic]
        entries = [r["metrics"][metric] for r in dynamic]
        ax.plot(xs, [e["value"] for e in entries], "-o", color="tab:blue", label="dynamic K (θ swept)", zorder=3)
        if all(e["ci"] for e in entries):
            ax.fill_between(xs, [e["ci"][0] for e in entries], [e["ci"][1] for e in entries], color="tab:blue",
                            alpha=0.15, label="95% bootstrap interval")
        for row, color in ((rows[0], "tab:orange"), (rows[-1], "tab:red")):
            ax.scatter([row["mean_candidates"]], [row["metrics"][metric]["value"]], marker="s", s=80, color=color,
                       zorder=4, label=row["label"])
        ax.set_xlabel("mean candidates per query (cost ∝ this)")
        ax.set_ylabel(metric_label(metric))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Dynamic K: quality against candidates sent; signal: {doc['signal']['name']} "
                 f"(escalate when {doc['signal']['escalate_when']} θ)", fontsize=9)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
