"""PNG plots of metrics at matched average recall (matplotlib, Agg), after paper 000:

- ``matched_recall_deviation.png`` — each metric of each index family at the target recall, as
  deviation from the mean over families (their Figure 3);
- ``robustness_vs_delta_matched.png`` — Robustness-δ@K against δ at the target recall (Figure 9).
"""

from __future__ import annotations

from typing import Any

from ragdiag.extras import require
from ragdiag.measures.registry import MATCHED_RECALL
from ragdiag.report.plot_text import NamedFigure, at_dpi, plain_text_plot

_NAMES = {m.name: m.plot_label for m in MATCHED_RECALL.measures}  # the measure registry's plot labels


@plain_text_plot
def matched_figures(matched: dict[str, Any], k: int) -> list[NamedFigure]:
    """The two plots for the families in range, each named by its file; none when no family is."""
    families = [f for f in matched["families"] if f["in_range"]]
    if not families:
        return []
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    target = matched["target_recall"]
    keys = list(_NAMES) + [f"R-{d}" for d in families[0]["robustness"]]
    width = 0.8 / len(families)
    fig, ax = plt.subplots(figsize=(max(7.0, 0.9 * len(keys)), 4.2))
    for j, family in enumerate(families):
        dev = family["deviation"]
        values = [dev[key] for key in _NAMES] + [dev["robustness"][d] for d in family["robustness"]]
        ax.bar(np.arange(len(keys)) + (j - (len(families) - 1) / 2) * width, values, width, label=family["family"])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(keys)), [_NAMES.get(key, key + f"@{k}") for key in keys], rotation=30, ha="right",
                  fontsize=8)
    ax.set_ylabel("deviation from the mean over families")
    ax.set_title(f"Metrics@{k} at matched average recall {target:g} (vs exact k-NN), deviation from the family mean",
                 fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    figures = [NamedFigure("matched_recall_deviation.png", at_dpi(fig, 110))]

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for family in families:
        curve = family["robustness_curve"]
        ax.plot([float(d) for d in curve], list(curve.values()), "o-", markersize=3, label=family["family"])
    ax.set_xlabel(f"δ (share of the {k} true neighbours required)")
    ax.set_ylabel(f"Robustness-δ@{k}")
    ax.set_title(f"Robustness-δ@{k} against δ at equal average recall {target:g}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    figures.append(NamedFigure("robustness_vs_delta_matched.png", at_dpi(fig, 110)))
    return figures
