"""Tables (rich) and PNG plots (matplotlib, Agg) of the embedding probes' result objects
(:mod:`ragdiag.results.probes`)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console
from rich.table import Table

from ragdiag.errors import DataError
from ragdiag.report.fields import required
from ragdiag.report.plot_text import at_dpi, plain_text_plot
from ragdiag.results.probes import NamesResult, NoiseLevel, NoiseResult, ProbeResult, ProbeRun

if TYPE_CHECKING:
    from matplotlib.figure import Figure

R = TypeVar("R", NamesResult, NoiseResult)


def _fmt(value: float | None, digits: int = 3, pct: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:+.1f}%" if pct else f"{value:.{digits}f}"


def _pm(mean: float | None, sd: float | None, digits: int = 3) -> str:
    return f"{_fmt(mean, digits)} ± {_fmt(sd, digits)}"


def _all_of(kind: type[R], results: list[ProbeResult]) -> list[R]:
    """``results``, every one a ``kind`` (a run is either a names run or a noise run)."""
    same = [r for r in results if isinstance(r, kind)]
    if len(same) != len(results):
        raise DataError("probe result: 'results' mixes names and noise results")
    return same


def tables(probe: ProbeRun) -> list[Table]:
    """The tables of a names or a noise run (the seed is the run's)."""
    results = probe.results
    if not results:
        return []
    seed = results[0].meta.seed
    if isinstance(results[0], NoiseResult):
        return noise_tables(_all_of(NoiseResult, results), seed)
    return names_tables(_all_of(NamesResult, results), seed)


def plot(probe: ProbeRun) -> Figure:
    """The --plot of a names or a noise run."""
    if isinstance(probe.results[0], NoiseResult):
        return noise_plot(_all_of(NoiseResult, probe.results))
    return names_plot(_all_of(NamesResult, probe.results))


def names_tables(results: list[NamesResult], seed: int) -> list[Table]:
    """Per language: the paper's Table 4.1 (% change, one column per embedder), then per-embedder details."""
    tables = []
    for lang in dict.fromkeys(r.lang for r in results):
        group = [r for r in results if r.lang == lang]
        summary = Table(title=f"Δ_name impact vs base ({lang.upper()}), seed {seed}")
        summary.add_column("Condition", overflow="fold")
        for res in group:
            summary.add_column(res.embedder, justify="right", overflow="fold")
        summary.add_row("base Δ_name", *[_pm(r.base.delta_name, r.base.delta_name_sd) for r in group])
        summary.add_row("base Δ_topic", *[_pm(r.base.delta_topic, r.base.delta_topic_sd) for r in group])
        summary.add_row("name/topic ratio", *[_fmt(r.base.name_topic_ratio) for r in group])
        for i, abl in enumerate(group[0].ablations):
            summary.add_row(abl.name, *[_fmt(r.ablations[i].pct_change, pct=True) for r in group])
        tables.append(summary)
        for res in group:
            detail = Table(title=f"{lang.upper()} · {res.embedder}: absolute margins (mean ± between-run SD)")
            for col in ("Condition", "Δ_name", "abs change", "% change", "Δ_topic", "excluded"):
                detail.add_column(col, justify="left" if col == "Condition" else "right", overflow="fold")
            base = res.base
            detail.add_row("base", _pm(base.delta_name, base.delta_name_sd), "", "",
                           _pm(base.delta_topic, base.delta_topic_sd), "")
            for abl in res.ablations:
                detail.add_row(
                    abl.name,
                    _pm(abl.delta_name, abl.delta_name_sd),
                    f"{abl.abs_change:+.4f}",
                    f"{_fmt(abl.pct_change, pct=True)} ± {_fmt(abl.pct_change_sd, 1)}",
                    _pm(abl.delta_topic, abl.delta_topic_sd),
                    str(abl.excluded),
                )
            tables.append(detail)
    return tables


def noise_tables(results: list[NoiseResult], seed: int) -> list[Table]:
    """Per (language, embedder): per-level cosines, drops and (with a corpus) retrieval impact."""
    tables = []
    for res in results:
        rows = res.levels
        table = Table(title=f"Conversational noise ({res.lang.upper()}) · {res.embedder}, seed {seed}")
        cols = ["Level", "cos → clean", "cos → reference", "drop vs level 0"]
        with_corpus = rows[0].retrieval is not None
        if with_corpus:
            k = rows[0].k
            cols += [f"recall@{k} vs clean", f"overlap@{k}", "Kendall τ"]
        with_rewrite = rows[0].rewritten is not None
        if with_rewrite:
            cols += ["rewritten: cos → reference", "rewritten: drop", "recovery"]
            if with_corpus:
                cols += [f"rewritten: recall@{k}"]
        for col in cols:
            table.add_column(col, justify="left" if col == "Level" else "right", overflow="fold")
        for row in rows:
            where = f"probe result: {res.lang} · {res.embedder}: level {row.level}"
            cells = [
                f"{row.level} — {row.name}",
                _pm(row.cosine_to_clean, row.cosine_to_clean_sd),
                _pm(row.cosine_to_reference, row.cosine_to_reference_sd),
                _fmt(row.drop_pct, 1) + ("%" if row.drop_pct is not None else ""),
            ]
            if with_corpus:
                retrieval = required(row.retrieval, where, "retrieval")
                cells += [_fmt(retrieval.recall_at_k), _fmt(retrieval.overlap_at_k), _fmt(retrieval.kendall_tau)]
            if with_rewrite:
                rw = required(row.rewritten, where, "rewritten")
                recovery = _fmt(rw.recovery_pct, 1) + ("%" if rw.recovery_pct is not None else "")
                if rw.recovery_flag:
                    recovery += " ⚠ absurd"
                cells += [_fmt(rw.cosine_to_reference), _fmt(rw.drop_pct, 1) + ("%" if rw.drop_pct is not None else ""),
                          recovery]
                if with_corpus:
                    cells += [_fmt(required(rw.retrieval, where, "rewritten.retrieval").recall_at_k)]
            table.add_row(*cells)
        tables.append(table)
        if rows[0].qrels_impact is not None:
            tables += qrels_impact_tables(res)
    return tables


def _interval(entry) -> str:
    if entry.value is None:
        return "–"
    return f"{entry.value:+.3f}" + (f" [{entry.ci[0]:+.3f}, {entry.ci[1]:+.3f}]" if entry.ci else "")


def qrels_impact_tables(res: NoiseResult) -> list[Table]:
    """With --qrels: per level the change against the qrels (noisy − clean, mean over variants then
    over judged queries, paired bootstrap interval), then the queries the noisiest level hurts most."""
    rows = res.levels
    where = f"probe result: {res.lang} · {res.embedder}"
    first = required(rows[0].qrels_impact, f"{where}: level {rows[0].level}", "qrels_impact")
    k = first.k
    table = Table(title=f"Against the qrels ({res.lang.upper()}) · {first.changed_queries} judged queries · "
                        f"noisy − clean @{k} [95% paired bootstrap]")
    for col in ("Level", f"Δ N-Recall4+@{k}", f"Δ RA-nWG@{k}", f"Δ recall@{k}"):
        table.add_column(col, justify="left" if col == "Level" else "right")
    for row in rows:
        d = required(row.qrels_impact, f"{where}: level {row.level}", "qrels_impact").difference
        table.add_row(f"{row.level} — {row.name}", _interval(d["nrecall4"]), _interval(d["ra_nwg"]),
                      _interval(d["recall"]))
    losers = required(rows[-1].qrels_impact, f"{where}: level {rows[-1].level}", "qrels_impact").worst
    if not losers:
        return [table]
    worst = Table(title=f"Queries that lose RA-nWG@{k} at level {rows[-1].level}, most first (first noisy variant shown)")
    for col in ("query", "noisy variant", "RA-nWG before → after", "recall before → after"):
        worst.add_column(col, overflow="fold")
    for q in losers:
        worst.add_row(q.query_id, q.changed, f"{_fmt(q.ra_nwg_before)} → {_fmt(q.ra_nwg_after)}",
                      f"{_fmt(q.recall_before)} → {_fmt(q.recall_after)}")
    return [table, worst]


def _flag(row: NoiseLevel) -> str | None:
    return row.rewritten.recovery_flag if row.rewritten is not None else None


def recovery_flags(results: list[NamesResult | NoiseResult]) -> list[str]:
    """One line per flagged rewrite recovery (see ``noise_rewrite.recovery_flag``)."""
    return [f"recovery [{res.lang} · {res.embedder} · level {row.level}]: {_flag(row)}"
            for res in results if isinstance(res, NoiseResult) for row in res.levels if _flag(row)]


def counter_lines(results: list[NamesResult | NoiseResult]) -> list[str]:
    """One line per result: how many embedding calls it made (0 on a fully cached rerun)."""
    lines = []
    for res in results:
        calls, texts = res.meta.embedding_calls, res.meta.texts
        lines.append(
            f"embedding calls [{res.lang} · {res.embedder}]: {calls.model_calls} model calls, "
            f"{calls.embedded} texts embedded, {calls.cache_hits} cache hits "
            f"({texts.unique} unique texts of {texts.total})"
        )
    return lines


def render_tables(tables: list[Table], width: int = 140) -> str:
    """Tables as plain text (for --out with --format table)."""
    console = Console(width=width, record=True, file=io.StringIO())
    for table in tables:
        console.print(table)
    return console.export_text()


@plain_text_plot
def names_plot(results: list[NamesResult]) -> Figure:
    """Grouped bars of % change of Δ_name per ablation (error bars: SD over runs), one panel per
    language, one bar per embedder; a 0% bar is drawn as a visible tick and labelled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = list(dict.fromkeys(r.lang for r in results))
    fig, axes = plt.subplots(1, len(langs), figsize=(7.5 * len(langs), 5.4), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        group = [r for r in results if r.lang == lang]
        names = [a.name for a in group[0].ablations]
        width = 0.8 / len(group)
        for j, res in enumerate(group):
            ys = [i + j * width for i in range(len(names))]
            values = [a.pct_change if a.pct_change is not None else 0.0 for a in res.ablations]
            errors = [a.pct_change_sd or 0.0 for a in res.ablations]
            bars = ax.barh(ys, values, height=width, xerr=errors, capsize=2, error_kw={"elinewidth": 0.8},
                           label=f"{res.embedder} (error bar: SD over runs)")
            color = bars.patches[0].get_facecolor() if bars.patches else None
            for y, value, abl in zip(ys, values, res.ablations):
                if abl.pct_change is None:
                    ax.annotate("n/a", (0, y), xytext=(3, -3), textcoords="offset points", fontsize=7)
                elif abs(value) < 0.05:
                    ax.plot([0], [y], marker="|", markersize=12, markeredgewidth=2.5, color=color)
                    ax.annotate("0%", (0, y), xytext=(5, -3), textcoords="offset points", fontsize=7)
        ax.set_yticks([i + 0.4 - width / 2 for i in range(len(names))], names)
        ax.invert_yaxis()
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel("% change of Δ_name vs base (negative: the embedder loses the name)")
        ax.set_title(f"Δ-margin name probe ({lang.upper()}): % change per ablation")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return at_dpi(fig, 120)


@plain_text_plot
def noise_plot(results: list[NoiseResult]) -> Figure:
    """Cosine to the reference (solid) and to the clean query (dashed) per level with ±1 SD bands,
    per language and embedder; with a corpus, a second panel of recall@K vs clean and top-K overlap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_corpus = any(r.levels[0].retrieval is not None for r in results)
    fig, axes = plt.subplots(1, 2 if with_corpus else 1, figsize=(13 if with_corpus else 7, 5), squeeze=False)
    ax = axes[0][0]
    for res in results:
        rows = res.levels
        levels = [r.level for r in rows]
        label = f"{res.lang.upper()} · {res.embedder}"
        line = _band(ax, levels, rows, "cosine_to_clean", "--", "o", f"{label} → clean query")
        if rows[0].cosine_to_reference is not None:
            _band(ax, levels, rows, "cosine_to_reference", "-", "s", f"{label} → reference", line.get_color())
    ax.set_xlabel("noise level")
    ax.set_ylabel("mean cosine (band: ±1 SD over queries and variants)")
    ax.set_xticks(sorted({r.level for res in results for r in res.levels}))
    ax.set_title("Conversational noise: cosine per level")
    ax.legend(fontsize=8)
    if with_corpus:
        ax2 = axes[0][1]
        for res in results:
            measured = [(r, r.retrieval) for r in res.levels if r.retrieval is not None]
            if not measured:
                continue
            levels = [r.level for r, _ in measured]
            label = f"{res.lang.upper()} · {res.embedder}"
            k = measured[0][0].k
            line = ax2.plot(levels, [impact.recall_at_k for _, impact in measured], "-", marker="o",
                            label=f"{label}: recall@{k} vs clean")[0]
            ax2.plot(levels, [impact.overlap_at_k for _, impact in measured], ":", marker="^", color=line.get_color(),
                     label=f"{label}: overlap@{k}")
        ax2.set_ylim(0, 1.05)
        ax2.set_xlabel("noise level")
        ax2.set_ylabel("share of the clean query's top K")
        ax2.set_xticks(sorted({r.level for res in results for r in res.levels}))
        ax2.set_title("Retrieval impact on the corpus")
        ax2.legend(fontsize=8)
    fig.tight_layout()
    return at_dpi(fig, 120)


def _band(ax, levels, rows: list[NoiseLevel], key, style, marker, label, color=None):
    """A mean line with a ±1 SD band (``<key>_sd``) where the SD is known."""
    means = [getattr(r, key) for r in rows]
    line = ax.plot(levels, means, style, marker=marker, label=label, color=color)[0]
    sds = [getattr(r, f"{key}_sd") for r in rows]
    if all(sd is not None for sd in sds):
        ax.fill_between(levels, [m - sd for m, sd in zip(means, sds)], [m + sd for m, sd in zip(means, sds)],
                        color=line.get_color(), alpha=0.15, linewidth=0)
    return line

