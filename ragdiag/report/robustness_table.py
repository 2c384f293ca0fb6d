"""Rich table of a robustness result: one row per operating point, then the optional analyses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from ragdiag.report.fields import required

if TYPE_CHECKING:
    from rich.console import Console

    from ragdiag.results.robustness import RobustnessResult


def with_ci(value: float, ci: list[float] | None) -> str:
    """``0.9226 [0.917, 0.928]``: the value and its 95% bootstrap interval (when there is one)."""
    return f"{value:.4f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def robustness_table(result: RobustnessResult) -> Table:
    """Timing columns only when some point was timed (index points; a run has no timing). Text
    columns fold instead of being cut with "…", so a narrow terminal wraps the table. Without
    bootstrap resamples (``--bootstrap 0``) the title says there are no intervals."""
    meta, points = result.meta, result.points
    k = meta.k
    deltas = meta.delta_keys
    timed_any = any(p.timed for p in points)
    builds = f", pg-* specs: mean ± SD over {meta.pg_builds} builds" if meta.pg_builds else ""
    if meta.bootstrap is None:
        ci_note = ""
    elif meta.resamples:
        ci_note = f", [95% CI: {meta.resamples} bootstrap resamples of queries]"
    else:
        ci_note = ", 95% CI: — (--bootstrap 0)"
    # a judged run has no similarity metric: the table is named by the run(s) it measures
    what = ", ".join(p.label or required(p.index, "robustness result: point", "index") for p in points) if meta.mode == "labelled" else meta.metric
    table = Table(title=f"Robustness-δ@{k} ({what}, recall: {meta.recall}, seed {meta.seed}{builds}{ci_note})")
    timing = ("QPS", "p50 ms", "p99 ms", "build s", "MiB") if timed_any else ()
    for name in ("index", "params", f"recall@{k}", *[f"R-{d}" for d in deltas], "zero", *timing):
        text = name in ("index", "params")
        table.add_column(name, justify="left" if text else "right", overflow="fold")
    for p in points:
        where = f"robustness result: point {p.name}"
        spread = p.builds
        if spread and spread["n"] > 1:  # pgvector rebuilt: mean ± SD over the builds
            cells = [p.index, p.label or p.params_text, _pm(spread["recall_mean"], 4),
                     *[_pm(spread["robustness"][d], 4) for d in deltas], _pm(spread["zero_recall_queries"], 1)]
        else:
            cells = [p.index, p.label or p.params_text, with_ci(required(p.recall_mean, where, "recall_mean"), p.recall_mean_ci),
                     *[with_ci(p.robustness[d], p.interval(d)) for d in deltas], str(p.zero_recall_queries)]
        if timed_any and p.timed:
            latency = required(p.latency_ms, where, "latency_ms")
            cells += [f"{p.qps_median:.0f}", f"{latency['p50']:.3f}", f"{latency['p99']:.3f}",
                      f"{p.build_s:.2f}", f"{required(p.index_bytes, where, 'index_bytes') / 2**20:.1f}"]
        elif timed_any:
            cells += ["-"] * 5
        table.add_row(*cells)
    return table


def _pm(stats: dict, digits: int) -> str:
    return f"{stats['mean']:.{digits}f} ± {stats['sd']:.{digits}f}"


def table_text(result: RobustnessResult, width: int = 160) -> str:
    """The table as plain text (``--out x.txt``)."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(robustness_table(result))
    return console.export_text()


def unjudged_lines(result: RobustnessResult) -> list[str]:
    """One line per judged run that ranked queries the qrels have no relevant passage for (left out)."""
    lines = []
    for run in result.meta.extra.get("runs") or []:
        count, named = run.get("queries_without_qrels") or 0, run.get("queries_without_qrels_ids") or []
        if count:
            more = f" and {count - len(named)} more" if count > len(named) else ""
            lines.append(f"{run['label']}: {count} ranked quer{'y' if count == 1 else 'ies'} without qrels (no relevant "
                         f"passage) left out: {', '.join(named[:10])}{more if len(named) <= 10 else f' and {count - 10} more'}")
    return lines


def print_robustness(result: RobustnessResult, console: Console) -> None:
    """The table, the points --min-recall left out, and the tables of the optional analyses, each
    folded to the console's width (:mod:`ragdiag.report.fit_table`)."""
    from ragdiag.report.fit_table import fitted

    console.print(fitted(robustness_table(result), keys=2))
    for line in unjudged_lines(result):
        console.print(line, markup=False, style="yellow")
    floor = result.meta.min_recall
    if floor is not None:
        dropped = ", ".join(f"{d['index']} {','.join(f'{a}={b}' for a, b in d['params'].items())} ({d['recall_mean']:.4f})"
                            for d in floor["dropped_points"]) or "none"
        console.print(f"--min-recall {floor['floor']:g}: left out {len(floor['dropped_points'])} point(s): {dropped}",
                      markup=False)
    if result.matched_recall is not None:
        from ragdiag.report.matched_recall_table import matched_recall_tables

        for table in matched_recall_tables(result.matched_recall, result.meta.k):
            console.print(fitted(table))
    if result.hardness is not None:
        from ragdiag.report.hardness_table import hardness_tables

        for table in hardness_tables(result.hardness):
            console.print(fitted(table))
    if result.adaptive is not None:
        from ragdiag.report.adaptive_report import adaptive_tables

        for item in adaptive_tables(result.adaptive, result.meta.deltas):
            console.print(fitted(item))
    if result.selection is not None:
        from ragdiag.report.selection_table import selection_table

        for item in selection_table(result.selection):
            console.print(fitted(item))
