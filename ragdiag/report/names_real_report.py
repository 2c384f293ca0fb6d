"""Rendering of ``probe names`` on real queries: one row per ablation (mean changes with paired
bootstrap intervals), then the queries that lose the most RA-nWG."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ragdiag.measures.registry import QUERY_IMPACT

if TYPE_CHECKING:
    from ragdiag.probes.query_impact import MetricChange
    from ragdiag.results.probes import NamesRealResult

LABELS = {m.name: m.label for m in QUERY_IMPACT.measures}  # the metrics of probes.query_impact


def _difference(entry: MetricChange) -> str:
    if entry.value is None:
        return "–"
    text = f"{entry.value:+.3f}"
    if entry.ci:
        text += f" [{entry.ci[0]:+.3f}, {entry.ci[1]:+.3f}]"
    return text


def render(result: NamesRealResult, console: Console) -> None:
    meta = result.meta
    console.print(f"ragdiag probe names on real queries · {meta.queries} · corpus {meta.corpus} · qrels "
                  f"{meta.qrels} · embedder {result.embedder} · K {meta.k} · bootstrap {meta.bootstrap} "
                  f"seed {meta.seed}", highlight=False)
    for note in result.notes:
        console.print(note, highlight=False)
    if not result.detected:
        console.print("no names detected: nothing to ablate (add names with --names FILE)", highlight=False)
        return
    table = Table(title=f"change after the ablation, @{meta.k} (ablated − original, mean over the queries with a "
                        f"name; [95% paired bootstrap interval])")
    table.add_column("ablation")
    table.add_column("queries", justify="right")
    metrics = list(result.impacts[0].difference) if result.impacts else list(LABELS)  # in the order computed
    for m in metrics:
        table.add_column(f"Δ {LABELS.get(m, m)}", justify="right")
    for impact in result.impacts:
        table.add_row(impact.name, str(impact.changed_queries), *(_difference(impact.difference[m]) for m in metrics))
    console.print(table)
    for impact in result.impacts:
        if not impact.worst:
            console.print(f"{impact.name}: no query loses RA-nWG@{meta.k}", highlight=False)
            continue
        worst = Table(title=f"{impact.name}: the queries that lose RA-nWG@{meta.k}, most first")
        for column in ("query", "original", "ablated", "RA-nWG before → after", "recall before → after"):
            worst.add_column(column, overflow="fold")
        for row in impact.worst:
            worst.add_row(row.query_id, row.original, row.changed, f"{_num(row.ra_nwg_before)} → {_num(row.ra_nwg_after)}",
                          f"{_num(row.recall_before)} → {_num(row.recall_after)}")
        console.print(worst)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def text(result: NamesRealResult, width: int = 160) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    render(result, console)
    return console.export_text()
