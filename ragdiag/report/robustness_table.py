"""Rich table of a robustness result: one row per operating point."""

from __future__ import annotations

from rich.table import Table


def with_ci(value: float, ci: list[float] | None) -> str:
    """``0.9226 [0.917, 0.928]``: the value and its 95% bootstrap interval (when there is one)."""
    return f"{value:.4f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def robustness_table(result: dict) -> Table:
    """Timing columns only when some point was timed (index points; a run has no timing). Text
    columns fold instead of being cut with "…", so a narrow terminal wraps the table."""
    meta, points = result["meta"], result["points"]
    k = meta["k"]
    deltas = [f"{d:g}" for d in meta["deltas"]]
    timed_any = any(p["qps_batch"] is not None for p in points)
    builds = f", pg-* specs: mean ± SD over {meta['pg_builds']} builds" if meta.get("pg_builds") else ""
    boot = meta.get("bootstrap")
    ci_note = f", [95% CI: {boot['resamples']} bootstrap resamples of queries]" if boot else ""
    table = Table(title=f"Robustness-δ@{k} ({meta['metric']}, recall: {meta['recall']}, seed {meta['seed']}{builds}"
                        f"{ci_note})")
    timing = ("QPS", "p50 ms", "p99 ms", "build s", "MiB") if timed_any else ()
    labels = [p.get("label") or ",".join(f"{a}={b}" for a, b in p["params"].items()) for p in points]
    for name in ("index", "params", f"recall@{k}", *[f"R-{d}" for d in deltas], "zero", *timing):
        text = name in ("index", "params")
        table.add_column(name, justify="left" if text else "right", overflow="fold")
    for p, params in zip(points, labels):
        timed = p["qps_batch"] is not None
        spread = p.get("builds")
        if spread and spread["n"] > 1:  # pgvector rebuilt: mean ± SD over the builds
            cells = [p["index"], params, _pm(spread["recall_mean"], 4),
                     *[_pm(spread["robustness"][d], 4) for d in deltas], _pm(spread["zero_recall_queries"], 1)]
        else:
            cells = [p["index"], params, with_ci(p["recall_mean"], p.get("recall_mean_ci")),
                     *[with_ci(p["robustness"][d], p.get("robustness_ci", {}).get(d)) for d in deltas],
                     str(p["zero_recall_queries"])]
        if timed_any:
            cells += [f"{p['qps_batch']['median']:.0f}" if timed else "-",
                      f"{p['latency_ms']['p50']:.3f}" if timed else "-",
                      f"{p['latency_ms']['p99']:.3f}" if timed else "-",
                      f"{p['build_s']:.2f}" if timed else "-",
                      f"{p['index_bytes'] / 2**20:.1f}" if timed else "-"]
        table.add_row(*cells)
    return table


def _pm(stats: dict, digits: int) -> str:
    return f"{stats['mean']:.{digits}f} ± {stats['sd']:.{digits}f}"


def table_text(result: dict, width: int = 160) -> str:
    """The table as plain text (``--out x.txt``)."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(robustness_table(result))
    return console.export_text()
