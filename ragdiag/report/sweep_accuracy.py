"""Accuracy per recall bucket relative to exact k-NN (``sweep.json`` key ``relative_accuracy``; paper 000
§5.3, docs/methods.md#sweep-accuracy-relative-to-exact-k-nn): the terminal table and
``sweep_accuracy.png`` (relative accuracy with its interval and the paper's three readings beside
it; absolute accuracy with exact k-NN and the controls as reference lines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdiag.extras import require
from ragdiag.report.fields import required
from ragdiag.report.plot_text import NamedFigure, at_dpi, plain_text_plot

if TYPE_CHECKING:
    from ragdiag.results.sweep import SweepResult


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _with_ci(value: float | None, ci: list[float] | None) -> str:
    return _fmt(value) + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def bucket_label(bucket: dict) -> str:
    return "1 (all found)" if bucket["lo"] == bucket["hi"] == 1.0 else f"[{bucket['lo']:g}, {bucket['hi']:g})"


def _paper_reading(bucket: dict, paper: list[dict]) -> str:
    return next((f"{p['reading']} (recall {p['recall']:g})" for p in paper
                 if bucket["lo"] <= p["recall"] < bucket["hi"]), "")


def controls_line(result: SweepResult) -> str:
    """``accuracy (grade ≥ t): exact 0.82, gold 0.91, empty 0.01`` — the controls' share of correct answers."""
    threshold = required(result.relative_accuracy, "sweep result", "relative_accuracy")["threshold"]
    parts = [f"{c.name} {_fmt(c.accuracy)}" for c in result.controls]
    return f"accuracy (share of grades ≥ {threshold:g}), controls: " + ", ".join(parts)


def print_relative_accuracy(result: SweepResult, console) -> None:
    """The controls' accuracy, then one row per non-empty recall bucket (pairs of ANN point × query)."""
    from rich.table import Table

    rel, meta = required(result.relative_accuracy, "sweep result", "relative_accuracy"), result.meta
    console.print(controls_line(result))
    intervals = "95% bootstrap intervals over queries" if meta.bootstrap else "no intervals (--bootstrap 0)"
    table = Table(title=f"accuracy by per-query recall@{meta.k}, relative to exact k-NN on the same queries "
                        f"(grade ≥ {rel['threshold']:g}; {rel['n_points']} ANN points; graded against "
                        f"{meta.graded_against}; {intervals})")
    for name in ("recall", "pairs", "queries", "accuracy [95% CI]", "exact, same queries", "relative to exact [95% CI]",
                 "paper 000 §5.3"):
        table.add_column(name, justify="left" if name in ("recall", "paper 000 §5.3") else "right")
    for bucket in rel["buckets"]:
        if not bucket["n_pairs"]:
            continue
        table.add_row(bucket_label(bucket), str(bucket["n_pairs"]), str(bucket["n_queries"]),
                      _with_ci(bucket["accuracy"], bucket["accuracy_ci"]), _fmt(bucket["exact_accuracy"]),
                      _with_ci(bucket["relative_to_exact"], bucket["relative_ci"]),
                      _paper_reading(bucket, rel["paper_000"]))
    from ragdiag.report.fit_table import fitted

    console.print(fitted(table))


@plain_text_plot
def plot_relative_accuracy(result: SweepResult) -> NamedFigure:
    """The figure ``sweep_accuracy.png``."""
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rel, meta = required(result.relative_accuracy, "sweep result", "relative_accuracy"), result.meta
    buckets = [b for b in rel["buckets"] if b["n_pairs"]]
    xs = [b["lo"] for b in buckets]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, value, ci in ((left, "relative_to_exact", "relative_ci"), (right, "accuracy", "accuracy_ci")):
        pts = [(x, b[value], b[ci]) for x, b in zip(xs, buckets) if b[value] is not None]
        ys = [y for _, y, _ in pts]
        err = [[y - (c[0] if c else y) for _, y, c in pts], [(c[1] if c else y) - y for _, y, c in pts]]
        ax.errorbar([x for x, _, _ in pts], ys, yerr=err, marker="o", capsize=3, color="tab:blue",
                    label="ANN points, per-query recall bucket (95% CI)")
        for x, b in zip(xs, buckets):
            if b[value] is not None:
                ax.annotate(f"n={b['n_pairs']}", (x, b[value]), textcoords="offset points", xytext=(4, -12), fontsize=7)
        ax.set_xlabel(f"per-query recall@{meta.k} vs exact k-NN (bucket lower edge; 1 = all found)")
        ax.set_xlim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    left.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="exact k-NN (= 1)")
    paper = rel["paper_000"]
    left.scatter([p["recall"] for p in paper], [p["relative"] for p in paper], marker="x", s=60, color="tab:red",
                 zorder=3, label="paper 000 §5.3 (MS MARCO, Gemini-2.0-Flash)")
    left.set_ylabel("accuracy / exact k-NN accuracy on the same queries")
    left.set_title("relative to exact k-NN", fontsize=10)
    for control, style in (("exact", "--"), ("gold", ":"), ("empty", "-.")):
        entry = result.control(control)
        if entry is not None and entry.accuracy is not None:
            right.axhline(entry.accuracy, color="grey", linestyle=style, linewidth=1,
                          label=f"{control} control ({entry.accuracy:.2f})")
    right.set_ylabel(f"accuracy = share of grades ≥ {rel['threshold']:g}")
    right.set_ylim(-0.03, 1.05)
    right.set_title("absolute", fontsize=10)
    for ax in (left, right):
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Answer accuracy by per-query recall — {meta.dataset}, {meta.n_queries} queries, "
                 f"K={meta.k}, judge {required(meta.llm, 'sweep result', 'meta.llm')['model']}, graded against {meta.graded_against}", fontsize=10)
    fig.tight_layout()
    return NamedFigure("sweep_accuracy.png", at_dpi(fig, 110))
