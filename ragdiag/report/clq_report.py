"""Rendering of ``ragdiag clq``: a table of configurations, the frontier and choices in words, CSV,
and a frontier plot (quality against latency, cost as colour)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ragdiag.evaluate.clq import efficiency_missing
from ragdiag.measures.registry import label_at
from ragdiag.report.plot_text import at_dpi, plain_text_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ragdiag.results.clq import ClqResult


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def summary_lines(result: ClqResult, show: Callable[[str], str] = str) -> list[str]:
    """The decision first: frontier, SLO/budget choices, then what dominates the rest. ``show`` names a
    quality measure (the terminal: as written, ``ra_nwg@10``; the HTML report: its registry label)."""
    lines = [f"Pareto frontier (cost ↓, latency p50 ↓, {', '.join(map(show, result.quality))} ↑): "
             + ", ".join(result.frontier)]
    choices, primary = result.choices, show(result.choices.primary)
    if choices.slo is not None:
        slo = choices.slo
        lines.append(f"SLO {slo.percentile} ≤ {slo.slo_ms:g} ms: best {primary} is "
                     + (slo.best or "none — no configuration meets the SLO"))
    if choices.budget is not None:
        lines.append(f"budget ≤ {choices.budget.budget:g} per 1,000 queries: best {primary} is "
                     + (choices.budget.best or "none — every configuration costs more"))
    if choices.slo_and_budget is not None:
        lines.append("both: " + (choices.slo_and_budget.best or "none meets both"))
    for name, by in result.dominated.items():
        lines.append(f"dominated: {name} (by {', '.join(by)})")
    for m in result.marginal:
        rate = "–" if m.per_ms is None else f"{m.per_ms:+.2e}"
        lines.append(f"marginal {show(m.metric)} per ms ({m.latency} latency), {m.family} K {m.from_k:g} → "
                     f"{m.to_k:g}: {m.d_quality:+.3f} over {m.d_latency_ms:+.1f} ms = {rate}/ms")
    lines.append("eff. = efficiency = 1000 · mean(N-Recall4+@10, N-Recall4+@30, RA-nWG@10, RA-nWG@30) / latency ms "
                 "(paper 001 §3.3 and Table A.1, a screening tie-breaker only); e2e uses e2e_p50_ms")
    lacking = {c.name: efficiency_missing(c.quality) for c in result.configs}
    for name, missing in lacking.items():
        if missing:
            lines.append(f"eff. –: {name} has no {', '.join(missing)} (the score needs all four columns)")
    return lines


def render_table(result: ClqResult, console: Console) -> None:
    lines = summary_lines(result)
    head = 1 + result.choices.given
    for line in lines[:head]:
        console.print(line, highlight=False)
    table = Table(title="configurations (★ = on the Pareto frontier)")
    optional = [(title, key) for title, key in (("p95 ms", "latency_p95"), ("eff. e2e", "efficiency_e2e"))
                if any(getattr(c, key) is not None for c in result.configs)]
    table.add_column("config", overflow="fold", min_width=12)
    for column in ("cost/1k", "p50 ms", *result.quality, "eff.", *(title for title, _ in optional)):
        table.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    for c in result.configs:
        table.add_row(("★ " if c.pareto else "  ") + c.name, _num(c.cost, 2), _num(c.latency_p50, 1),
                      *(_num(c.quality[q]) for q in result.quality), _num(c.efficiency_retrieval),
                      *(_num(getattr(c, key), 1 if key == "latency_p95" else 3) for _, key in optional))
    console.print(table)
    for line in lines[head:]:
        console.print(line, highlight=False)


def table_text(result: ClqResult, width: int = 120) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    render_table(result, console)
    return console.export_text()


def json_text(result: ClqResult) -> str:
    """The JSON document (what ``--format json`` prints or writes)."""
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def csv_text(result: ClqResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["name", "pareto", "cost_per_1k", "latency_p50_ms", "latency_p95_ms", "e2e_p50_ms",
                     *result.quality, "efficiency_retrieval", "efficiency_e2e", "dominated_by"])
    for c in result.configs:
        writer.writerow([c.name, c.pareto, c.cost, c.latency_p50, c.latency_p95, c.e2e_p50,
                         *(c.quality[q] for q in result.quality), c.efficiency_retrieval, c.efficiency_e2e,
                         ";".join(result.dominated.get(c.name, []))])
    return buffer.getvalue()


def _label_offsets(xs: Sequence[float], ys: Sequence[float]) -> list[tuple[int, int]]:
    """Text offsets (points) for the point labels: right of the point, moved up or down when an
    earlier label sits close by (within 6% of the x range on a log scale, 3% of the y range)."""
    import math

    span_x = math.log(max(xs) / max(min(xs), 1e-9)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0
    placed: list[tuple[float, float, int]] = []
    offsets = []
    for x, y in zip(xs, ys):
        near = [dy for px, py, dy in placed if abs(math.log(max(x, 1e-9) / max(px, 1e-9))) < 0.06 * span_x
                and abs(y - py) < 0.03 * span_y]
        dy = next(d for d in (0, 9, -9, 18, -18, 27) if d not in near)
        placed.append((x, y, dy))
        offsets.append((9, dy))
    return offsets


@plain_text_plot
def plot(result: ClqResult) -> Figure:
    """Primary quality against p50 latency; colour = cost; frontier points ringed and joined; SLO line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    primary = result.quality[0]
    configs = result.configs
    fig, ax = plt.subplots(figsize=(8, 5.2), layout="constrained")
    xs = [c.latency_p50 for c in configs]
    ys = [c.quality[primary] for c in configs]
    points = ax.scatter(xs, ys, c=[c.cost for c in configs], cmap="viridis", s=60, zorder=3)
    fig.colorbar(points, ax=ax, label="cost per 1,000 queries")
    front = sorted((c for c in configs if c.pareto), key=lambda c: c.latency_p50)
    ax.scatter([c.latency_p50 for c in front], [c.quality[primary] for c in front], s=160,
               facecolors="none", edgecolors="crimson", linewidths=1.5, zorder=4, label="Pareto frontier")
    for c, offset in zip(configs, _label_offsets(xs, ys)):
        ax.annotate(c.name, (c.latency_p50, c.quality[primary]), textcoords="offset points",
                    xytext=offset, fontsize=7, va="center")
    slo = result.choices.slo
    if slo:
        ax.axvline(slo.slo_ms, color="grey", linestyle="--", label=f"SLO {slo.percentile} {slo.slo_ms:g} ms")
    if max(xs) > 5 * max(min(xs), 1e-9):
        from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
        plain = ScalarFormatter()
        plain.set_scientific(False)
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("retrieval latency p50 (ms" + (", log scale)" if ax.get_xscale() == "log" else ")"))
    ax.set_ylabel(label_at(primary))
    ax.set_title(f"Cost–latency–quality: {label_at(primary)} against latency, colour = cost\n"
                 f"ringed: not dominated on cost, latency and {', '.join(map(label_at, result.quality))}",
                 fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    return at_dpi(fig, 120)
