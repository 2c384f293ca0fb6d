"""Rendering of adaptive search: per spec, a table of thresholds (share re-searched, cost, Robustness)
beside the fixed setting at equal cost and a random re-search of the same share, and
``adaptive_robustness.png`` (Robustness-δ@K against mean distance computations, one panel per δ)."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text

from ragdiag.extras import require
from ragdiag.report.plot_text import NamedFigure, at_dpi, plain_text_plot


def _f(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def adaptive_tables(studies: list[dict], deltas: list[float]) -> list[Table | Text]:
    if not studies:
        return [Text("adaptive search: no hnsw or ivf spec to adapt")]
    out: list[Table | Text] = []
    keys = [f"{d:g}" for d in deltas]
    for study in studies:
        param = study["parameter"]
        table = Table(title=f"Adaptive {param} {study['first']}→{study['second']} for queries with gap {study['gap']} < τ "
                            f"({study['spec']}); fixed = the fixed {param} curve at equal mean distance computations")
        for name in ("re-searched", "τ", "ndis/query", "µs/query", "recall", *[f"R-{d} adaptive / fixed / random" for d in keys]):
            table.add_column(name, justify="right")
        for row in study["adaptive"]:
            fixed = row["fixed_at_equal_ndis"]
            table.add_row(f"{row['share_researched']:.0%}", _f(row["threshold"], 3), f"{row['ndis_mean']:.0f}",
                          f"{row['us_per_query']:.1f}", _f(row["recall_mean"]),
                          *[f"{_f(row['robustness'][d])} / {_f(fixed['robustness'][d] if fixed else None)} / "
                            f"{_f(row['random_same_share']['robustness'][d])}" for d in keys])
        out.append(table)
        fixed_line = ", ".join(f"{param}={f[param]}: {f['ndis_mean']:.0f} ndis, {f['us_per_query']:.1f} µs, recall "
                               f"{f['recall_mean']:.4f}" for f in study["fixed"])
        out.append(Text(f"fixed {param}: {fixed_line}"))
    return out


@plain_text_plot
def adaptive_figures(studies: list[dict], deltas: list[float]) -> list[NamedFigure]:
    """One figure per study (``adaptive_robustness.png``, then ``adaptive_robustness_2.png`` …):
    Robustness-δ@K against mean distance computations per query."""
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    keys = ["recall"] + [f"{d:g}" for d in deltas]
    for number, study in enumerate(studies):
        cols = min(3, len(keys))
        fig, axes = plt.subplots(math.ceil(len(keys) / cols), cols, figsize=(4.4 * cols, 3.6 * math.ceil(len(keys) / cols)),
                                 squeeze=False)
        for ax, key in zip(axes.flat, keys):
            def y(row, key=key):
                return row["recall_mean"] if key == "recall" else row["robustness"][key]

            ax.plot([f["ndis_mean"] for f in study["fixed"]], [y(f) for f in study["fixed"]], "o-",
                    label=f"fixed {study['parameter']}")
            for f in study["fixed"]:
                ax.annotate(str(f[study["parameter"]]), (f["ndis_mean"], y(f)), textcoords="offset points",
                            xytext=(3, -9), fontsize=6)
            rows = study["adaptive"]
            ax.plot([r["ndis_mean"] for r in rows], [y(r) for r in rows], "s-", label="adaptive (small gap first)")
            ax.plot([r["ndis_mean"] for r in rows], [y(r["random_same_share"]) for r in rows], "^:",
                    label="random queries, same share")
            ax.set_xscale("log")
            ax.set_xlabel("distance computations per query (mean)")
            ax.set_ylabel("average recall" if key == "recall" else f"Robustness-{key}@{study['k']}")
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(keys):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7)
        fig.suptitle(f"Adaptive {study['parameter']} {study['first']}→{study['second']} vs fixed, {study['spec']}", fontsize=9)
        fig.tight_layout()
        name = "adaptive_robustness.png" if number == 0 else f"adaptive_robustness_{number + 1}.png"
        figures.append(NamedFigure(name, at_dpi(fig, 110)))
    return figures
