"""Rendering of ``ragdiag correlate`` results: rich tables, JSON, CSV and a heatmap PNG."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table


def _cell(entry: dict | None) -> str:
    if not entry or entry.get("value") is None:
        return "–"
    text = f"{entry['value']:.3f}"
    if entry.get("alpha") is not None:
        text += f" (α {entry['alpha']:.3g})"
    if entry.get("ci"):
        text += f"\n[{entry['ci'][0]:.3f}, {entry['ci'][1]:.3f}]"
    return text


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def title_line(report: dict) -> str:
    meta = report["meta"]
    grades = "SIMULATED GRADES — " if meta.get("simulated_grades") else ""
    return (f"{grades}ragdiag correlate · {meta['source']} · segments {meta['segments']} (min {meta['min_samples']}) · "
            f"α grid {meta['alpha_grid']} ({meta['alpha_grid_size']} values)")


def results_tables(report: dict) -> list[Table]:
    """One table per correlation kind: segments × measures, cells = max correlation (α)."""
    meta = report["meta"]
    measures = meta["measures"]
    tables = []
    segments = list(dict.fromkeys(r["segment"] for r in report["results"]))
    by_key = {(r["segment"], r["measure"]): r for r in report["results"]}
    for kind in meta["kinds"]:
        table = Table(title=f"max {kind} correlation with the grade (α at the max)", show_lines=bool(meta.get("bootstrap")))
        table.add_column("segment")
        table.add_column("n", justify="right")
        for measure in measures:
            table.add_column(measure, justify="right")
        for segment in segments:
            rows = [by_key.get((segment, m)) for m in measures]
            n = max((r["n"] for r in rows if r), default=0)
            table.add_row(segment, str(n), *(_cell(r[kind]) if r else "–" for r in rows))
        tables.append(table)
    return tables


def comparison_table(report: dict) -> Table:
    first, second = report["meta"]["compare"]
    table = Table(title=f"paired difference: max({first}) − max({second}) per segment")
    table.add_column("segment")
    kinds = report["meta"]["kinds"]
    for kind in kinds:
        table.add_column(kind, justify="right")
    for row in report["comparisons"]:
        cells = []
        for kind in kinds:
            entry = row[kind]
            text = _signed(entry["difference"])
            if entry.get("ci"):
                text += f" [{entry['ci'][0]:+.3f}, {entry['ci'][1]:+.3f}]"
            cells.append(text)
        table.add_row(row["segment"], *cells)
    return table


def system_table(report: dict) -> Table:
    system = report["system"]
    table = Table(title="system level: per (E, subset, K) statistic vs mean grade, across configurations "
                        f"({len(system['groups'])} configurations)")
    table.add_column("statistic")
    for kind in ("spearman", "pearson", "kendall_b", "kendall_c"):
        table.add_column(kind, justify="right")
    for row in system["correlations"]:
        table.add_row(row["statistic"], *(_signed(row[k]) for k in ("spearman", "pearson", "kendall_b", "kendall_c")))
    return table


def verdict_table(report: dict) -> Table:
    boot = report["meta"].get("bootstrap")
    table = Table(title="Which measure predicts the grade best (mean of per-segment maxima, "
                        "over the segments where every measure is defined)")
    for name in ("subset", "side", "segments", "best", "mean", "runner-up", "lead"):
        table.add_column(name, justify="right" if name in ("mean", "lead") else "left")
    table.add_column("lead holds" if boot else "lead holds (needs --bootstrap)", justify="right")
    for v in report["verdicts"]:
        holds = "–" if v["lead_holds"] is None else f"{100 * v['lead_holds']:.0f}% of {boot} resamples"
        table.add_row(v["subset"], v["side"], str(v["segments"]), v["best"], f"{v['best_mean']:.3f} ({v['kind']})",
                      v["runner_up"] or "–", _lead(v["lead"]), holds)
    return table


def _lead(value: float | None) -> str:
    """The lead over the runner-up; below 0.0005 it is shown as a tie."""
    if value is not None and abs(value) < 5e-4:
        return f"{value:+.3f} (tie)"
    return _signed(value)


def print_report(report: dict, console: Console) -> None:
    console.print(title_line(report), style="bold")
    meta = report["meta"]
    console.print(f"seed {meta['seed']} · bootstrap {meta['bootstrap'] or 'off'} · ties: {meta['ties']} · "
                  f"rows {meta['rows']} (skipped, no grade: {meta['skipped_missing_grade']})")
    if not report["results"]:
        console.print(f"No segment has at least {meta['min_samples']} rows: lower --min-samples.", style="yellow")
    for table in results_tables(report):
        console.print(table)
    if report.get("comparisons"):
        console.print(comparison_table(report))
    if report.get("system"):
        console.print(system_table(report))
    if report["verdicts"]:
        console.print(verdict_table(report))


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=False, allow_nan=False)


def to_csv(report: dict) -> str:
    """One line per (segment, measure, kind): value, α and interval."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["segment", "measure", "n", "side", "kind", "value", "alpha", "ci_low", "ci_high"])
    for row in report["results"]:
        for kind in report["meta"]["kinds"]:
            entry = row[kind]
            ci = entry.get("ci") or [None, None]
            writer.writerow([row["segment"], row["measure"], row["n"], row["side"], kind,
                             _blank(entry["value"]), _blank(entry["alpha"]), _blank(ci[0]), _blank(ci[1])])
    return buffer.getvalue()


def _blank(value: Any) -> Any:
    return "" if value is None else value


def render_text(report: dict, fmt: str, width: int = 160) -> str:
    if fmt == "json":
        return to_json(report) + "\n"
    if fmt == "csv":
        return to_csv(report)
    console = Console(file=io.StringIO(), width=width, record=True)
    print_report(report, console)
    return console.export_text()


def write_heatmap(report: dict, path: Path) -> None:
    """Heatmap PNG: segments × measures, cells = max correlation of the first kind (paper's figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    meta = report["meta"]
    kind, measures = meta["kinds"][0], meta["measures"]
    segments = list(dict.fromkeys(r["segment"] for r in report["results"]))
    grid = np.full((len(segments), len(measures)), np.nan)
    for r in report["results"]:
        if r[kind]["value"] is not None:
            grid[segments.index(r["segment"]), measures.index(r["measure"])] = r[kind]["value"]
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(measures), 1.2 + 0.32 * max(len(segments), 1)))
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(measures)), measures)
    ax.set_yticks(range(len(segments)), segments, fontsize=7)
    for i in range(len(segments)):
        for j in range(len(measures)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7, color="white")
    fig.colorbar(image, ax=ax, label=f"max {kind} over α")
    title = f"max {kind} correlation with the grade"
    if meta.get("simulated_grades"):
        title += "\n(SIMULATED GRADES: bundled sample)"
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
