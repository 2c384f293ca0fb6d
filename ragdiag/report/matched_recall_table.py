"""Rich tables of metrics at matched average recall: values per index family, then their deviation
from the mean over the families in range (paper 000 Fig. 3)."""

from __future__ import annotations

from rich.table import Table

from ragdiag.measures.registry import MATCHED_RECALL

_COLUMNS = tuple((m.name, m.label) for m in MATCHED_RECALL.measures)  # the measure registry's table labels


def _header(key: str, k: int | None) -> str:
    """``MAP@10`` for a measure at a cut-off, ``p5 recall`` for a percentile of the recalls."""
    measure = MATCHED_RECALL[key]
    return f"{measure.label}@{k}" if "cutoff" in measure.param_names else measure.plot_label


def matched_recall_tables(matched: dict, k: int | None) -> list[Table]:
    """[values at the interpolated point (with Robustness intervals), deviations from the mean]."""
    deltas = [f"{d:g}" for d in matched["deltas"]]
    values = Table(title=f"At matched average recall@{k} = {matched['target_recall']:g} (interpolated; vs exact k-NN; "
                         f"MRR/hit: exact 1-NN; 95% CI: {matched['bootstrap']} resamples)")
    deviation = Table(title=f"Deviation from the mean over the {matched['families_in_range']} families in range")
    for table in (values, deviation):
        table.add_column("family", overflow="fold")
        if table is values:
            table.add_column("between (weight of the 2nd)", min_width=24)
        for key, _ in _COLUMNS:
            table.add_column(_header(key, k), justify="right")
        for d in deltas:
            table.add_column(f"R-{d}", justify="right")
    for family in matched["families"]:
        if not family["in_range"]:
            low, high = family["measured_recall"]
            values.add_row(family["family"], f"out of range: measured {low:.4f}–{high:.4f}, not extrapolated")
            continue
        ci = family["robustness_ci"]
        values.add_row(family["family"], f"{family['between'][0]} → {family['between'][1]} ({family['weight']:.2f})",
                       *[f"{family[key]:.4f}" for key, _ in _COLUMNS],
                       *[f"{family['robustness'][d]:.4f}" + (f" [{ci[d][0]:.3f}, {ci[d][1]:.3f}]" if ci.get(d) else "")
                         for d in deltas])
        dev = family["deviation"]
        deviation.add_row(family["family"], *[f"{dev[key]:+.4f}" for key, _ in _COLUMNS],
                          *[f"{dev['robustness'][d]:+.4f}" for d in deltas])
    return [values, deviation] if matched["families_in_range"] > 1 else [values]
