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
        summary.add_column("Condition")
        for res in group:
            summary.add_column(res["embedder"], justify="right")
        summary.add_row("base Δ_name", *[_pm(r["base"]["delta_name"], r["base"]["delta_name_sd"]) for r in group])
        summary.add_row("base Δ_topic", *[_pm(r["base"]["delta_topic"], r["base"]["delta_topic_sd"]) for r in group])
        summary.add_row("name/topic ratio", *[_fmt(r["base"]["name_topic_ratio"]) for r in group])
        for i, abl in enumerate(group[0]["ablations"]):
            summary.add_row(abl["name"], *[_fmt(r["ablations"][i]["pct_change"], pct=True) for r in group])
        tables.append(summary)
        for res in group:
            detail = Table(title=f"{lang.upper()} · {res['embedder']}: absolute margins (mean ± between-run SD)")
            for col in ("Condition", "Δ_name", "abs change", "% change", "Δ_topic", "excluded"):
                detail.add_column(col, justify="left" if col == "Condition" else "right")
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
            table.add_column(col, justify="left" if col == "Level" else "right")
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
                cells += [_fmt(row["rewritten_cosine_to_reference"]), _fmt(drop, 1) + ("%" if drop is not None else ""),
                          _fmt(row["recovery_pct"], 1) + ("%" if row["recovery_pct"] is not None else "")]
                if with_corpus:
                    cells += [_fmt(row["rewritten_recall_at_k"])]
            table.add_row(*cells)
        tables.append(table)
    return tables


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
    """Grouped bars of % change of Δ_name per ablation, one panel per language, one bar per embedder."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = list(dict.fromkeys(r["lang"] for r in results))
    fig, axes = plt.subplots(1, len(langs), figsize=(7 * len(langs), 5), squeeze=False)
    for ax, lang in zip(axes[0], langs):
        group = [r for r in results if r["lang"] == lang]
        names = [a["name"] for a in group[0]["ablations"]]
        width = 0.8 / len(group)
        for j, res in enumerate(group):
            values = [a["pct_change"] if a["pct_change"] is not None else 0.0 for a in res["ablations"]]
            ax.barh([i + j * width for i in range(len(names))], values, height=width, label=res["embedder"])
        ax.set_yticks([i + 0.4 - width / 2 for i in range(len(names))], names)
        ax.invert_yaxis()
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel("% change of Δ_name vs base")
        ax.set_title(f"Δ-margin name probe ({lang.upper()})")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def noise_plot(results: list[dict], path: Path) -> None:
    """Cosine to the reference (solid) and to the clean query (dashed) per level, per language and embedder."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for res in results:
        levels = [r["level"] for r in res["levels"]]
        label = f"{res['lang'].upper()} · {res['embedder']}"
        line = ax.plot(levels, [r["cosine_to_clean"] for r in res["levels"]], "--", marker="o", label=f"{label} → clean")
        if res["levels"][0]["cosine_to_reference"] is not None:
            ax.plot(levels, [r["cosine_to_reference"] for r in res["levels"]], "-", marker="s",
                    color=line[0].get_color(), label=f"{label} → reference")
    ax.set_xlabel("noise level")
    ax.set_ylabel("mean cosine")
    ax.set_xticks(sorted({r["level"] for res in results for r in res["levels"]}))
    ax.set_title("Conversational-noise probe")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
