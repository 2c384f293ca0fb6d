"""Tables (rich), JSON documents and PNG plots (matplotlib, Agg) for the embedding probes."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

from rich.console import Console
from rich.table import Table

_PROBE_KEYS = ("texts", "embedding_calls")


def _fmt(value: float | None, digits: int = 3, pct: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:+.1f}%" if pct else f"{value:.{digits}f}"


def _pm(mean: float | None, sd: float | None, digits: int = 3) -> str:
    return f"{_fmt(mean, digits)} ± {_fmt(sd, digits)}"


def documents(results: list[dict], meta: dict) -> dict | list[dict]:
    """The JSON output: one object per (language, embedder), a list when there are several."""
    docs = []
    for res in results:
        own_meta = {**meta, "data_files_sha256": {**meta.get("data_files_sha256", {}), **res["data_files"]}}
        own_meta.update({key: res[key] for key in _PROBE_KEYS if key in res})
        docs.append({"meta": own_meta, **{k: v for k, v in res.items() if k not in (*_PROBE_KEYS, "data_files")}})
    return docs[0] if len(docs) == 1 else docs


def dumps(doc: dict | list[dict]) -> str:
    """Indented JSON with NaN written as null."""
    return json.dumps(_clean_nans(doc), ensure_ascii=False, indent=2, allow_nan=False)


def _clean_nans(obj):
    """Replace float NaN by None recursively (JSON has no NaN)."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean_nans(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean_nans(v) for v in obj]
    return obj


def names_tables(results: list[dict], seed: int) -> list[Table]:
    """Per language: the paper's Table 4.1 (% change, one column per embedder), then per-embedder details."""
    tables = []
    for lang in dict.fromkeys(r["lang"] for r in results):
        group = [r for r in results if r["lang"] == lang]
        summary = Table(title=f"Δ_name impact vs base ({lang.upper()}), seed {seed}")
        summary.add_column("Condition", overflow="fold")
        for res in group:
            summary.add_column(res["embedder"], justify="right", overflow="fold")
        summary.add_row("base Δ_name", *[_pm(r["base"]["delta_name"], r["base"]["delta_name_sd"]) for r in group])
        summary.add_row("base Δ_topic", *[_pm(r["base"]["delta_topic"], r["base"]["delta_topic_sd"]) for r in group])
        summary.add_row("name/topic ratio", *[_fmt(r["base"]["name_topic_ratio"]) for r in group])
        for i, abl in enumerate(group[0]["ablations"]):
            summary.add_row(abl["name"], *[_fmt(r["ablations"][i]["pct_change"], pct=True) for r in group])
        tables.append(summary)
        for res in group:
            detail = Table(title=f"{lang.upper()} · {res['embedder']}: absolute margins (mean ± between-run SD)")
            for col in ("Condition", "Δ_name", "abs change", "% change", "Δ_topic", "excluded"):
                detail.add_column(col, justify="left" if col == "Condition" else "right", overflow="fold")
            base = res["base"]
            detail.add_row("base", _pm(base["delta_name"], base["delta_name_sd"]), "", "",
                           _pm(base["delta_topic"], base["delta_topic_sd"]), "")
            for abl in res["ablations"]:
                detail.add_row(
                    abl["name"],
                    _pm(abl["delta_name"], abl["delta_name_sd"]),
                    f"{abl['abs_change']:+.4f}",
                    f"{_fmt(abl['pct_change'], pct=True)} ± {_fmt(abl['pct_change_sd'], 1)}",
                    _pm(abl["delta_topic"], abl["delta_topic_sd"]),
                    str(abl["excluded"]),
                )
            tables.append(detail)
    return tables


def noise_tables(results: list[dict], seed: int) -> list[Table]:
    """Per (language, embedder): per-level cosines, drops and (with a corpus) retrieval impact."""
    tables = []
    for res in results:
        rows = res["levels"]
        table = Table(title=f"Conversational noise ({res['lang'].upper()}) · {res['embedder']}, seed {seed}")
        cols = ["Level", "cos → clean", "cos → reference", "drop vs level 0"]
        with_corpus = "recall_at_k" in rows[0]
        if with_corpus:
            k = rows[0]["k"]
            cols += [f"recall@{k} vs clean", f"overlap@{k}", "Kendall τ"]
        with_rewrite = "recovery_pct" in rows[0]
        if with_rewrite:
            cols += ["rewritten: cos → reference", "rewritten: drop", "recovery"]
            if with_corpus:
                cols += [f"rewritten: recall@{k}"]
        for col in cols:
            table.add_column(col, justify="left" if col == "Level" else "right", overflow="fold")
        for row in rows:
            cells = [
                f"{row['level']} — {row['name']}",
                _pm(row["cosine_to_clean"], row["cosine_to_clean_sd"]),
                _pm(row["cosine_to_reference"], row["cosine_to_reference_sd"]),
                _fmt(row["drop_pct"], 1) + ("%" if row["drop_pct"] is not None else ""),
            ]
            if with_corpus:
                cells += [_fmt(row["recall_at_k"]), _fmt(row["overlap_at_k"]), _fmt(row["kendall_tau"])]
            if with_rewrite:
                drop = row["rewritten_drop_pct"]
                recovery = _fmt(row["recovery_pct"], 1) + ("%" if row["recovery_pct"] is not None else "")
                if row.get("recovery_flag"):
                    recovery += " ⚠ absurd"
                cells += [_fmt(row["rewritten_cosine_to_reference"]), _fmt(drop, 1) + ("%" if drop is not None else ""),
                          recovery]
                if with_corpus:
                    cells += [_fmt(row["rewritten_recall_at_k"])]
            table.add_row(*cells)
        tables.append(table)
        if "qrels_impact" in rows[0]:
            tables += qrels_impact_tables(res)
    return tables


def _interval(entry: dict) -> str:
    if entry["value"] is None:
        return "–"
    return f"{entry['value']:+.3f}" + (f" [{entry['ci'][0]:+.3f}, {entry['ci'][1]:+.3f}]" if entry.get("ci") else "")


def qrels_impact_tables(res: dict) -> list[Table]:
    """With --qrels: per level the change against the qrels (noisy − clean, mean over variants then
    over judged queries, paired bootstrap interval), then the queries the noisiest level hurts most."""
    rows = res["levels"]
    first = rows[0]["qrels_impact"]
    k = first["k"]
    table = Table(title=f"Against the qrels ({res['lang'].upper()}) · {first['changed_queries']} judged queries · "
                        f"noisy − clean @{k} [95% paired bootstrap]")
    for col in ("Level", f"Δ N-Recall4+@{k}", f"Δ RA-nWG@{k}", f"Δ recall@{k}"):
        table.add_column(col, justify="left" if col == "Level" else "right")
    for row in rows:
        d = row["qrels_impact"]["difference"]
        table.add_row(f"{row['level']} — {row['name']}", _interval(d["nrecall4"]), _interval(d["ra_nwg"]),
                      _interval(d["recall"]))
    losers = rows[-1]["qrels_impact"]["worst"]
    if not losers:
        return [table]
    worst = Table(title=f"Queries that lose RA-nWG@{k} at level {rows[-1]['level']}, most first (first noisy variant shown)")
    for col in ("query", "noisy variant", "RA-nWG before → after", "recall before → after"):
        worst.add_column(col, overflow="fold")
    for q in losers:
        worst.add_row(q["query_id"], q["changed"], f"{_fmt(q['ra_nwg_before'])} → {_fmt(q['ra_nwg_after'])}",
                      f"{_fmt(q['recall_before'])} → {_fmt(q['recall_after'])}")
    return [table, worst]


def recovery_flags(results: list[dict]) -> list[str]:
    """One line per flagged rewrite recovery (see ``noise_rewrite.recovery_flag``)."""
    return [f"recovery [{res['lang']} · {res['embedder']} · level {row['level']}]: {row['recovery_flag']}"
            for res in results for row in res.get("levels", []) if row.get("recovery_flag")]


def counter_lines(results: list[dict]) -> list[str]:
    """One line per result: how many embedding calls it made (0 on a fully cached rerun)."""
    lines = []
    for res in results:
        calls, texts = res["embedding_calls"], res["texts"]
        lines.append(
            f"embedding calls [{res['lang']} · {res['embedder']}]: {calls['model_calls']} model calls, "
            f"{calls['embedded']} texts embedded, {calls['cache_hits']} cache hits "
            f"({texts['unique']} unique texts of {texts['total']})"
        )
    return lines


def render_tables(tables: list[Table], width: int = 140) -> str:
    """Tables as plain text (for --out with --format table)."""
    console = Console(width=width, record=True, file=io.StringIO())
    for table in tables:
        console.print(table)
    return console.export_text()


def names_plot(results: list[dict], path: Path) -> None:
    """Grouped bars of % change of Δ_name per ablation (error bars: SD over runs), one panel per
    language, one bar per embedder; a 0% bar is drawn as a visible tick and labelled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = list(dict.fromkeys(r["lang"] for r in results))
    fig, axes = plt.subplots(1, len(langs), figsize=(7.5 * len(langs), 5.4), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        group = [r for r in results if r["lang"] == lang]
        names = [a["name"] for a in group[0]["ablations"]]
        width = 0.8 / len(group)
        for j, res in enumerate(group):
            ys = [i + j * width for i in range(len(names))]
            values = [a["pct_change"] if a["pct_change"] is not None else 0.0 for a in res["ablations"]]
            errors = [a.get("pct_change_sd") or 0.0 for a in res["ablations"]]
            bars = ax.barh(ys, values, height=width, xerr=errors, capsize=2, error_kw={"elinewidth": 0.8},
                           label=f"{res['embedder']} (error bar: SD over runs)")
            color = bars.patches[0].get_facecolor() if bars.patches else None
            for y, value, abl in zip(ys, values, res["ablations"]):
                if abl["pct_change"] is None:
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
    _save(fig, path)


def noise_plot(results: list[dict], path: Path) -> None:
    """Cosine to the reference (solid) and to the clean query (dashed) per level with ±1 SD bands,
    per language and embedder; with a corpus, a second panel of recall@K vs clean and top-K overlap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_corpus = any("recall_at_k" in r["levels"][0] for r in results)
    fig, axes = plt.subplots(1, 2 if with_corpus else 1, figsize=(13 if with_corpus else 7, 5), squeeze=False)
    ax = axes[0][0]
    for res in results:
        rows = res["levels"]
        levels = [r["level"] for r in rows]
        label = f"{res['lang'].upper()} · {res['embedder']}"
        line = _band(ax, levels, rows, "cosine_to_clean", "--", "o", f"{label} → clean query")
        if rows[0]["cosine_to_reference"] is not None:
            _band(ax, levels, rows, "cosine_to_reference", "-", "s", f"{label} → reference", line.get_color())
    ax.set_xlabel("noise level")
    ax.set_ylabel("mean cosine (band: ±1 SD over queries and variants)")
    ax.set_xticks(sorted({r["level"] for res in results for r in res["levels"]}))
    ax.set_title("Conversational noise: cosine per level")
    ax.legend(fontsize=8)
    if with_corpus:
        ax2 = axes[0][1]
        for res in results:
            rows = [r for r in res["levels"] if "recall_at_k" in r]
            if not rows:
                continue
            levels = [r["level"] for r in rows]
            label = f"{res['lang'].upper()} · {res['embedder']}"
            line = ax2.plot(levels, [r["recall_at_k"] for r in rows], "-", marker="o",
                            label=f"{label}: recall@{rows[0]['k']} vs clean")[0]
            ax2.plot(levels, [r["overlap_at_k"] for r in rows], ":", marker="^", color=line.get_color(),
                     label=f"{label}: overlap@{rows[0]['k']}")
        ax2.set_ylim(0, 1.05)
        ax2.set_xlabel("noise level")
        ax2.set_ylabel("share of the clean query's top K")
        ax2.set_xticks(sorted({r["level"] for res in results for r in res["levels"]}))
        ax2.set_title("Retrieval impact on the corpus")
        ax2.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def _band(ax, levels, rows, key, style, marker, label, color=None):
    """A mean line with a ±1 SD band (``<key>_sd``) where the SD is known."""
    means = [r[key] for r in rows]
    line = ax.plot(levels, means, style, marker=marker, label=label, color=color)[0]
    sds = [r.get(f"{key}_sd") for r in rows]
    if all(sd is not None for sd in sds):
        ax.fill_between(levels, [m - sd for m, sd in zip(means, sds)], [m + sd for m, sd in zip(means, sds)],
                        color=line.get_color(), alpha=0.15, linewidth=0)
    return line


def _save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    from ragdiag.io.writer import atomic_path

    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
