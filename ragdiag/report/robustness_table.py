"""Rich table of a robustness result: one row per operating point."""

from __future__ import annotations

from rich.table import Table


def robustness_table(result: dict) -> Table:
    meta, points = result["meta"], result["points"]
    k = meta["k"]
    deltas = [f"{d:g}" for d in meta["deltas"]]
    table = Table(title=f"Robustness-δ@{k} ({meta['metric']}, recall: {meta['recall']}, seed {meta['seed']})")
    for name in ("index", "params", f"recall@{k}", *[f"R-{d}" for d in deltas], "zero", "QPS", "p50 ms", "p99 ms",
                 "build s", "MiB"):
        table.add_column(name, justify="left" if name in ("index", "params") else "right")
    for p in points:
        params = p.get("label") or ",".join(f"{a}={b}" for a, b in p["params"].items())
        timed = p["qps_batch"] is not None
        table.add_row(
            p["index"], params, f"{p['recall_mean']:.4f}", *[f"{p['robustness'][d]:.4f}" for d in deltas],
            str(p["zero_recall_queries"]),
            f"{p['qps_batch']['median']:.0f}" if timed else "-",
            f"{p['latency_ms']['p50']:.3f}" if timed else "-",
            f"{p['latency_ms']['p99']:.3f}" if timed else "-",
            f"{p['build_s']:.2f}" if timed else "-",
            f"{p['index_bytes'] / 2**20:.1f}" if timed else "-",
        )
    return table
