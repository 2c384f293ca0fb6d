"""PNG plots of a robustness result (matplotlib, Agg), after Wang et al. (arXiv 2507.00379):

- ``recall_distribution.png`` — recall histogram of each operating point (their Figure 1);
- ``robustness_vs_recall.png`` — Robustness-δ@K against average recall, one panel per δ (Figures 6–8);
- ``qps_vs_robustness.png`` — batch QPS against Robustness-δ@K, one panel per δ (Figure 10).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragdiag.report.fields import gaps, required
from ragdiag.report.plot_text import NamedFigure, at_dpi, plain_text_plot

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ragdiag.results.robustness import RobustnessPoint, RobustnessResult
    from ragdiag.results.sweep import SweepResult


def _label(point: RobustnessPoint) -> str:
    return f"{point.index} {point.params_text}".strip()


@plain_text_plot
def _panels(n: int) -> tuple[Figure, list[Axes]]:
    import matplotlib.pyplot as plt

    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _by_index(points: Sequence[RobustnessPoint]) -> dict[str | None, list[RobustnessPoint]]:
    groups: dict[str | None, list[RobustnessPoint]] = {}
    for point in points:
        groups.setdefault(point.spec, []).append(point)
    return groups


def operating_labels(group: list[RobustnessPoint]) -> list[str]:
    """The label of each operating point of one index: the search parameters that vary within the
    group (e.g. ``efSearch=64``, ``nprobe=8``), else all its parameters, else its spec."""
    keys = [k for k in dict.fromkeys(k for p in group for k in p.params)
            if len({str(p.params.get(k)) for p in group}) > 1]
    if not keys:
        keys = list(group[0].params)
    return [",".join(f"{k}={p.params.get(k)}" for k in keys) or p.spec or "" for p in group]  # no spec: no label


def _curves(ax: Axes, groups: dict[str | None, list[RobustnessPoint]], x_of: Callable[[RobustnessPoint], float | None],
            y_of: Callable[[RobustnessPoint], float | None]) -> None:
    """One line per index, every operating point marked and labelled with its parameter value."""
    for spec, group in groups.items():
        xs, ys = gaps(x_of(p) for p in group), gaps(y_of(p) for p in group)
        ax.plot(xs, ys, "o-", label=f"{group[0].index} ({spec})" if spec != group[0].index else spec)
        for i, (x, y, text) in enumerate(zip(xs, ys, operating_labels(group))):  # alternate sides: plateaus
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 4 if i % 2 == 0 else -10), fontsize=6)


def _robustness_at(delta: str) -> Callable[[RobustnessPoint], float | None]:
    """A point's Robustness-δ@K at ``delta`` (a key of ``robustness``)."""
    return lambda p: p.robustness[delta]


@plain_text_plot
def robustness_figures(result: RobustnessResult | SweepResult) -> list[NamedFigure]:
    """The plots that apply (QPS only for index points), each named by its file; a sweep's points
    carry the same recall fields (the HTML report draws them too)."""
    import matplotlib

    matplotlib.use("Agg")

    points, k = result.points, result.meta.k
    deltas = list(points[0].robustness) if points else []
    source = result.meta.get("ground_truth") or ""
    written = []

    fig, axes = _panels(len(points))
    for ax, point in zip(axes, points):
        hist = required(point.recall_histogram, f"robustness result: point {point.name}", "recall_histogram")
        ax.bar(hist["bins"], hist["counts"], width=0.8 / required(k, "robustness result", "meta.k"))
        ax.set_title(_label(point), fontsize=8)
        ax.set_xlabel(f"recall@{k}")
        ax.set_ylabel("queries")
    fig.suptitle(f"Recall distribution per operating point (mean vs tail), K={k}")
    fig.tight_layout()
    written.append(NamedFigure("recall_distribution.png", at_dpi(fig, 110)))

    groups = _by_index(points)
    fig, axes = _panels(len(deltas))
    for ax, delta in zip(axes, deltas):
        _curves(ax, groups, lambda p: p.recall_mean, _robustness_at(delta))
        ax.set_title(f"δ = {delta}")
        ax.set_xlabel(f"average recall@{k}")
        ax.set_ylabel(f"Robustness-{delta}@{k}")
    if deltas:
        axes[0].legend(fontsize=7)
    fig.suptitle(f"Robustness-δ@{k} vs average recall@{k}, per operating point" + (f" (truth: {source})" if source else ""))
    fig.tight_layout()
    written.append(NamedFigure("robustness_vs_recall.png", at_dpi(fig, 110)))

    timed = [p for p in points if p.qps_median]
    if timed:
        fig, axes = _panels(len(deltas))
        for ax, delta in zip(axes, deltas):
            _curves(ax, _by_index(timed), _robustness_at(delta), lambda p: p.qps_median)
            ax.set_yscale("log")
            ax.set_title(f"δ = {delta}")
            ax.set_xlabel(f"Robustness-{delta}@{k}")
            ax.set_ylabel("QPS (batch, median)")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"Throughput vs Robustness-δ@{k}, per operating point")
        fig.tight_layout()
        written.append(NamedFigure("qps_vs_robustness.png", at_dpi(fig, 110)))
    return written
