"""Paper 003's figure kinds as PNGs: grade-distribution heatmaps (Figures 2–4) and heatmaps of the
difference between two measures' max correlations per embedder and K/Np (Figures 7–18, e.g.
T versus T′ in Figures 10–12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdiag.errors import RagdiagError
from ragdiag.metrics.grade_distribution import GRADES
from ragdiag.report.plot_text import at_dpi, plain_text_plot
from ragdiag.results.correlate import CorrelateResult, Difference, GradeDistribution

if TYPE_CHECKING:
    from types import ModuleType

    from matplotlib.figure import Figure

_RATIO_TAG = "^KtoN^"


def _pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@plain_text_plot
def grade_heatmaps(dist: GradeDistribution, note: str | None = None) -> Figure:
    """One panel per embedder and subset: grades 1–5 (rows) × bins (columns), cells = share of the
    bin's rows with that grade (each column sums to 1), the bin's row count under each column."""
    import numpy as np

    plt = _pyplot()
    panels = dist.panels
    widest = max(len(p.bins) for p in panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(6.5, 2.4 + 0.5 * widest), 1.0 + 2.6 * len(panels)),
                             squeeze=False, layout="constrained")
    label = "K / Np (rounded to 0.1)" if dist.by == "ratio" else "K"
    for ax, panel in zip(axes[:, 0], panels):
        shares = np.asarray(panel.shares)[::-1]  # grade 5 on top
        image = ax.imshow(shares, cmap="magma", vmin=0, vmax=1, aspect="auto")
        totals = np.asarray(panel.counts).sum(axis=0)
        ax.set_xticks(range(len(panel.bins)), [f"{b:g}\nn={t}" for b, t in zip(panel.bins, totals)], fontsize=7)
        ax.set_yticks(range(len(GRADES)), [str(g) for g in GRADES[::-1]])
        ax.set_ylabel("grade")
        ax.set_xlabel(label)
        ax.set_title(f"embedder {panel.embedder}, subset {panel.subset}", fontsize=9)
        for i in range(shares.shape[0]):
            for j in range(shares.shape[1]):
                ax.text(j, i, f"{shares[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="black" if shares[i, j] > 0.5 else "white")
        fig.colorbar(image, ax=ax, label="share of the column's rows")
    title = f"Grade distribution per {label} (each column sums to 1; bins with ≥ {dist.min_samples} rows)"
    if note:
        title += f"\n{note}"
    fig.suptitle(title, fontsize=9)
    return at_dpi(fig, 120)


def comparison_grid(report: CorrelateResult, kind: str) -> dict[str, tuple[list[float], list[str],
                                                                          list[list[Difference | None]]]]:
    """Per subset: ratios (rows), embedders (columns) and the comparison entry of each cell."""
    grids: dict[str, dict[tuple[float, str], Difference]] = {}
    for row in report.comparisons or []:
        if _RATIO_TAG not in row.segment:
            raise RagdiagError("--compare-plot needs ratio segments (--segments ratio)")
        head, ratio = row.segment.split(_RATIO_TAG)
        embedder, subset = head.split("^", 1)
        grids.setdefault(subset, {})[(float(ratio), embedder)] = row.kinds[kind]
    out = {}
    for subset, cells in sorted(grids.items()):
        ratios = sorted({r for r, _ in cells})
        embedders = sorted({e for _, e in cells})
        out[subset] = (ratios, embedders, [[cells.get((r, e)) for e in embedders] for r in ratios])
    return out


@plain_text_plot
def comparison_heatmap(report: CorrelateResult, kind: str) -> Figure:
    """Difference max corr(first) − max corr(second) per K/Np (rows) and embedder (columns), one
    panel per subset, a diverging scale centred on 0, the bootstrap interval under each value."""
    import numpy as np

    pair = report.meta.compare
    grids = comparison_grid(report, kind)
    if not pair or not grids:
        raise RagdiagError("--compare-plot needs --compare A,B with at least one segment where both are defined")
    plt = _pyplot()
    tallest = max(len(r) for r, _, _ in grids.values())
    width = max(6.5, 3.0 + 2.0 * sum(len(e) for _, e, _ in grids.values()))
    fig, axes = plt.subplots(1, len(grids), figsize=(width, 1.6 + 0.42 * tallest), squeeze=False,
                             layout="constrained")
    values = [c.difference for _, _, rows in grids.values() for row in rows for c in row
              if c and c.difference is not None]
    bound = max([abs(v) for v in values] + [1e-3])
    for ax, (subset, (ratios, embedders, cells)) in zip(axes[0], grids.items()):
        grid = np.array([[np.nan if c is None or c.difference is None else c.difference for c in row]
                         for row in cells])
        ax.set_facecolor("#d9d9d9")
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
        ax.set_xticks(range(len(embedders)), embedders)
        ax.set_yticks(range(len(ratios)), [f"{r:g}" for r in ratios], fontsize=7)
        ax.set_xlabel("embedder")
        ax.set_ylabel("K / Np")
        ax.set_title(f"subset {subset}", fontsize=9)
        for i, row in enumerate(cells):
            for j, cell in enumerate(row):
                if cell and cell.difference is not None:
                    text = f"{cell.difference:+.3f}"
                    if cell.ci:
                        text += f"\n[{cell.ci[0]:+.3f}, {cell.ci[1]:+.3f}]"
                    ax.text(j, i, text, ha="center", va="center", fontsize=7,
                            color="white" if abs(cell.difference) > 0.6 * bound else "black")
    fig.colorbar(image, ax=list(axes[0]), label=f"max {kind}({pair[0]}) − max {kind}({pair[1]})")
    title = (f"{pair[0]} versus {pair[1]}: blue = {pair[0]} correlates better with the grade, red = {pair[1]}; "
             f"grey = undefined (a constant measure or grade)")
    if report.meta.simulated_grades:
        title += "\n(SIMULATED GRADES: bundled sample)"
    fig.suptitle(title, fontsize=9)
    return at_dpi(fig, 120)
