"""Rich tables of metrics at matched average recall: values per index family, then their deviation
from the mean over the families in range (paper 000 Fig. 3)."""

from __future__ import annotations

from rich.table import Table

_COLUMNS = (("map", "MAP"), ("ndcg", "nDCG"), ("mrr", "MRR"), ("hit_rate", "hit"), ("p5", "p5"), ("p10", "p10"),
            ("p50", "p50"))


def matched_recall_tables(matched: dict, k: int) -> list[Table]:
    """[values at the interpolated point (with Robustness intervals), deviations from the mean]."""
    deltas = [f"{d:g}" for d in matched["deltas"]]
    values = Table(title=f"At matched average recall@{k} = {matched['target_recall']:g} (interpolated; vs exact k-NN; "
                         f"MRR/hit: exact 1-NN; 95% CI: {matched['bootstrap']} resamples)")
    deviation = Table(title=f"Deviation from the mean over the {matched['families_in_range']} families in range")
    for table in (values, deviation):
        table.add_column("family", overflow="fold")
        if table is values:
            table.add_column("between (weight of the 2nd)", min_width=24)
        for _, name in _COLUMNS:
            table.add_column(f"{name}@{k}" if name in ("MAP", "nDCG", "MRR", "hit") else f"{name} recall", justify="right")
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
