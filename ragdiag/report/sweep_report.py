"""Rendering of ``ragdiag sweep``: the table of operating points and controls, the recommendation, and
two plots (matplotlib, Agg):

- ``sweep_grade.png``: mean answer grade against mean recall and against Robustness-δ@K (one
  panel per δ), exact and gold as reference lines, each point labelled with its search parameter;
- ``sweep_qps.png``: batch QPS against mean grade, recommended point marked.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragdiag.errors import DataError
from ragdiag.extras import require
from ragdiag.report.fields import gaps, required
from ragdiag.report.plot_text import NamedFigure, at_dpi, plain_text_plot

if TYPE_CHECKING:
    from ragdiag.results.sweep import SweepControl, SweepPoint, SweepResult


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(ci: list[float] | None, digits: int = 2) -> str:
    """An interval as one unbreakable word, e.g. ``[4.20,4.80]``: a narrow table folds it whole."""
    return "–" if ci is None else f"[{ci[0]:.{digits}f},{ci[1]:.{digits}f}]"


def _compact(value: float) -> str:
    """A rate in three significant digits: 649, 1.30k, 1.42M."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def _median_qps(entry: SweepPoint | SweepControl) -> float | None:
    """The batch QPS a sweep stores: the median, a number (robustness keeps a timing object there)."""
    qps = entry.qps_batch
    if isinstance(qps, dict):
        raise DataError.at("sweep result", None, "qps_batch", f"{entry.name}: a number (the median QPS) expected")
    return qps


def _qps(entry: SweepPoint | SweepControl) -> str:
    """Median batch QPS with the spread of its repeats, e.g. ``1.30k (588–1.42M)``."""
    runs = entry.qps_batch_runs or {}
    qps = _median_qps(entry)
    if qps is None:
        return "–"
    if runs.get("repeats", 1) > 1 and runs.get("min") is not None:
        return f"{_compact(qps)} ({_compact(runs['min'])}–{_compact(runs['max'])})"
    return _compact(qps)


def _table(title: str, columns: list[str]):
    """A table whose cells fold rather than being cut: names and intervals stay whole (never "…")."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name in columns:
        table.add_column(name, justify="left" if name == "point" else "right", overflow="fold")
    return table


def _with_ci(value: float | None, ci: list[float] | None, digits: int = 2) -> str:
    """A value and its 95% bootstrap interval over queries, e.g. ``0.91 [0.88, 0.94]``."""
    return _fmt(value, digits) + (f" {_ci(ci, digits)}" if ci else "")


def print_sweep(result: SweepResult, console) -> None:
    """Three narrow tables (retrieval, speed, answers), then the δ calibration, the QPS warning and
    the recommendation. Controls first, then one row per operating point. Without bootstrap resamples
    (``--bootstrap 0``) the intervals are "–"."""
    from ragdiag.report.provenance import record_marked, test_server_line

    meta = result.meta
    llm = required(meta.llm, "sweep result", "meta.llm")
    line = test_server_line([llm["model"]], record_marked(result.run_record))
    if line:
        console.print(line, style="bold red", highlight=False)
    deltas = meta.delta_keys
    timing = meta.qps_timing or {}
    repeats = f", QPS median of {timing['repeats']} repeats (min–max)" if timing.get("repeats") else ""
    boot = f"{meta.bootstrap} bootstrap resamples" if meta.bootstrap else "no intervals (--bootstrap 0)"
    console.print(f"sweep: {meta.dataset}, {meta.n_queries} queries, K={meta.k}, judge model "
                  f"{llm['model']} ({llm['provider']}), seed {meta.seed}, "
                  f"{boot}{repeats}", style="bold", highlight=False)
    recall = _table(f"retrieval vs exact k-NN (recall@{meta.k}, Robustness-δ@{meta.k})",
                    ["point", "recall", *(f"R-{d}" for d in deltas)])
    speed = _table("speed (batch QPS: median (min–max); single-query latency)", ["point", "QPS", "p50 ms", "p99 ms"])
    answers = _table("answers (grade 1–5, 95% intervals)", ["point", "grade", "Δ vs exact", "worse", "sent", "reused"])
    for control in result.controls:
        latency = control.latency_ms or {}
        name = f"[b]{control.name}[/b]"
        if control.recall_mean is not None:
            recall.add_row(name, _fmt(control.recall_mean, 3), *["" for _ in deltas])
        if control.qps_batch is not None:
            speed.add_row(name, _qps(control), _fmt(latency.get("p50"), 3), _fmt(latency.get("p99"), 3))
        answers.add_row(name, f"{_fmt(control.grade_mean)} {_ci(control.grade_ci)}", "", "",
                        str(control.calls_sent), str(control.calls_reused))
    for point in result.points:
        where = f"sweep result: point {point.name}"
        diff = required(point.grade_diff_vs_exact, where, "grade_diff_vs_exact")
        latency = required(point.latency_ms, where, "latency_ms")
        recall.add_row(point.label, _with_ci(point.recall_mean, point.recall_mean_ci, 3),
                       *[_with_ci(point.robustness[d], point.interval(d)) for d in deltas])
        speed.add_row(point.label, _qps(point), _fmt(latency["p50"], 3), _fmt(latency["p99"], 3))
        answers.add_row(point.label, f"{_fmt(point.grade_mean)} {_ci(point.grade_ci)}",
                        f"{_fmt(diff['value'], 3)} {_ci(diff['ci'], 3)}", _fmt(point.worse_share),
                        str(point.calls_sent), str(point.calls_reused))
    from ragdiag.report.fit_table import fitted

    for table in (recall, speed, answers):
        console.print(fitted(table))
    calibration = ", ".join(f"δ={c['delta']:g}: ρ={_fmt(c['spearman'])} {_ci(c['ci'])}" for c in required(result.delta_calibration, "sweep result", "delta_calibration"))
    console.print(f"Spearman of Robustness-δ@K with mean grade across points: {calibration}", highlight=False)
    buckets = ", ".join(f"[{b['lo']:g},{b['hi']:g}{']' if b['lo'] == b['hi'] else ')'}: {_fmt(b['p_grade_ge4'])} (n={b['n']})"
                        for b in required(result.recall_buckets, "sweep result", "recall_buckets"))
    console.print(f"P(grade ≥ 4) by recall: {buckets}", highlight=False)
    if timing.get("warning"):
        console.print(f"warning: {timing['warning']}", style="yellow", highlight=False)
    console.print(recommendation_line(required(result.recommendation, "sweep result", "recommendation")), highlight=False)


def recommendation_line(rec: dict) -> str:
    if rec["point"] is None:
        return f"recommendation: none — {rec['reason']} ({rec['criterion']})"
    diff = rec["grade_diff_vs_exact"]
    speed = f", {rec['speedup_vs_exact']:.2g}× exact" if rec.get("speedup_vs_exact") else ""
    return (f"recommendation: {rec['point']} — {_compact(rec['qps_batch'])} QPS{speed}, recall {rec['recall_mean']:.3f}, "
            f"grade {_fmt(rec['grade_mean'])}, Δ vs exact {_fmt(diff['value'], 3)} {_ci(diff['ci'], 3)} "
            f"({rec['criterion']})")


def _short(point: SweepPoint) -> str:
    return ",".join(f"{k}={v}" for k, v in point.params.items() if k in ("efSearch", "nprobe")) or point.name


def _references(ax, result: SweepResult, horizontal: bool = True,
                controls: tuple[str, ...] = ("exact", "gold", "empty")) -> None:
    for control, style in (("exact", "--"), ("gold", ":"), ("empty", "-.")):
        if control not in controls:
            continue
        entry = result.control(control)
        if entry is None or entry.grade_mean is None:
            continue
        line = ax.axhline if horizontal else ax.axvline
        line(entry.grade_mean, linestyle=style, color="grey", linewidth=1,
             label=f"{control} control ({entry.grade_mean:.2f})")


def _series(result: SweepResult) -> dict[str | None, list[SweepPoint]]:
    groups: dict[str | None, list[SweepPoint]] = {}
    for point in result.points:
        groups.setdefault(point.spec, []).append(point)
    return groups


@plain_text_plot
def plot_sweep(result: SweepResult) -> list[NamedFigure]:
    """The two figures, ``sweep_grade.png`` and ``sweep_qps.png``."""
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = result.meta
    deltas = meta.delta_keys
    panels = [("recall_mean", "mean recall@K vs exact")] + [(d, f"Robustness-{d}@{meta.k}") for d in deltas]
    cols = min(4, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False, sharey=True)
    for ax, (key, title) in zip(axes.flat, panels):
        for spec, points in _series(result).items():
            xs = [p.recall_mean if key == "recall_mean" else p.robustness[key] for p in points]
            ys = [p.grade_mean for p in points]
            ax.plot(xs, ys, marker="o", label=spec)
            for x, y, p in zip(xs, ys, points):
                ax.annotate(_short(p), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
        _references(ax, result)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(title)
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("mean answer grade (1–5)")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Answer grade vs retrieval quality per operating point — {meta.dataset}, "
                 f"{meta.n_queries} queries, K={meta.k}, judge {required(meta.llm, 'sweep result', 'meta.llm')['model']}",
                 fontsize=11)
    fig.tight_layout()
    grade = NamedFigure("sweep_grade.png", at_dpi(fig, 110))

    fig, ax = plt.subplots(figsize=(7, 4.8))
    for spec, points in _series(result).items():
        grades, rates = gaps(p.grade_mean for p in points), gaps(_median_qps(p) for p in points)
        ax.plot(grades, rates, marker="o", label=spec)
        for x, y, p in zip(grades, rates, points):
            ax.annotate(_short(p), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
    exact = required(result.control("exact"), "sweep result", "controls: exact")
    ax.scatter(gaps([exact.grade_mean]), gaps([_median_qps(exact)]), marker="s", color="black", zorder=3,
               label="exact k-NN (flat)")
    rec = required(result.recommendation, "sweep result", "recommendation")
    if rec["point"] is not None:
        ax.scatter([rec["grade_mean"]], [rec["qps_batch"]], s=220, facecolors="none", edgecolors="red", linewidths=2,
                   zorder=4, label=f"recommended: {rec['point']}")
    _references(ax, result, horizontal=False, controls=("exact", "gold"))
    ax.set_yscale("log")
    ax.set_xlabel("mean answer grade (1–5)")
    ax.set_ylabel("batch QPS (log scale)")
    ax.set_title(f"Speed vs answer grade — {meta.dataset}, K={meta.k}", fontsize=11)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return [grade, NamedFigure("sweep_qps.png", at_dpi(fig, 110))]
