"""Rich tables of query hardness: Spearman ρ of relative contrast and LID with per-query recall at each
operating point, then the zero-recall queries with their features."""

from __future__ import annotations

from rich.table import Table

SHOWN_ZERO = 20


def _rho(cell: dict) -> str:
    if cell["spearman"] is None:
        return "–"
    return f"{cell['spearman']:+.3f} (p {cell['p_value']:.1e})"


def hardness_tables(hardness: dict) -> list[Table]:
    feats = hardness["features"]
    rc, lid = feats["relative_contrast"], feats["lid"]
    corr = Table(title=f"Query hardness vs recall (Spearman ρ): relative contrast median {rc.get('median', 0):.3f} "
                       f"(p5 {rc.get('p5', 0):.3f}, p95 {rc.get('p95', 0):.3f}), LID (k={hardness['lid_k']}) median "
                       f"{lid.get('median', 0):.1f} (p5 {lid.get('p5', 0):.1f}, p95 {lid.get('p95', 0):.1f})")
    for name in ("point", "ρ(RC, recall)", "ρ(LID, recall)"):
        corr.add_column(name, justify="left" if name == "point" else "right")
    for row in hardness["correlations"]:
        corr.add_row(row["label"], _rho(row["relative_contrast"]), _rho(row["lid"]))
    zero = hardness["zero_recall_queries"]
    ranked = sorted(zero, key=lambda z: -len(z["points"]))[:SHOWN_ZERO]
    listing = Table(title=f"Queries with recall 0 at some point: {len(zero)}"
                          + (f" (the {len(ranked)} failing at most points shown; all in the JSON)" if len(zero) > len(ranked) else ""))
    for name in ("query", "RC", "LID", "zero at"):
        listing.add_column(name, justify="left" if name == "zero at" else "right")
    for z in ranked:
        listing.add_row(str(z["query"]), "–" if z["relative_contrast"] is None else f"{z['relative_contrast']:.3f}",
                        "–" if z["lid"] is None else f"{z['lid']:.1f}",
                        f"{len(z['points'])} point(s): {', '.join(z['points'][:3])}" + (" …" if len(z["points"]) > 3 else ""))
    return [corr, listing] if zero else [corr]
