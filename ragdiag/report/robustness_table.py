"""Rich table of a robustness result: one row per operating point."""

from __future__ import annotations

from rich.table import Table


def with_ci(value: float, ci: list[float] | None) -> str:
    """``0.9226 [0.917, 0.928]``: the value and its 95% bootstrap interval (when there is one)."""
    return f"{value:.4f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def robustness_table(result: dict) -> Table:
    meta, points = result["meta"], result["points"]
    k = meta["k"]
    deltas = [f"{d:g}" for d in meta["deltas"]]
    boot = meta.get("bootstrap")
    ci_note = f", [95% CI: {boot['resamples']} bootstrap resamples of queries]" if boot else ""
    table = Table(title=f"Robustness-δ@{k} ({meta['metric']}, recall: {meta['recall']}, seed {meta['seed']}{ci_note})")
    for name in ("index", "params", f"recall@{k}", *[f"R-{d}" for d in deltas], "zero", "QPS", "p50 ms", "p99 ms",
                 "build s", "MiB"):
        table.add_column(name, justify="left" if name in ("index", "params") else "right",
                         overflow="fold" if name == "params" else "ellipsis")
    for p in points:
        params = p.get("label") or ",".join(f"{a}={b}" for a, b in p["params"].items())
        timed = p["qps_batch"] is not None
        table.add_row(
            p["index"], params, with_ci(p["recall_mean"], p.get("recall_mean_ci")),
            *[with_ci(p["robustness"][d], p.get("robustness_ci", {}).get(d)) for d in deltas],
            str(p["zero_recall_queries"]),
            f"{p['qps_batch']['median']:.0f}" if timed else "-",
            f"{p['latency_ms']['p50']:.3f}" if timed else "-",
            f"{p['latency_ms']['p99']:.3f}" if timed else "-",
            f"{p['build_s']:.2f}" if timed else "-",
            f"{p['index_bytes'] / 2**20:.1f}" if timed else "-",
        )
    return table
