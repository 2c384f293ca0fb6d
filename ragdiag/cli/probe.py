"""``ragdiag probe names|noise``: the Δ-margin proper-name probe (docs/methods.md#6-name-probe); noise is ``ragdiag noise``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p

app = typer.Typer(help="Embedding probes: proper-name sensitivity (Δ-margins) and conversational noise.",
                  no_args_is_help=True)


def _names_on_real_queries(queries, corpus, qrels, lang, embedder, ablations, k, names, bootstrap, seed, fmt, out, plot,
                           cache_dir, cache) -> None:
    import json

    from rich.console import Console

    from ragdiag.commands.names_real import NamesRealRequest, parse_real_ablations, run
    from ragdiag.errors import RagdiagError
    from ragdiag.io.writer import write_text
    from ragdiag.report import names_real_report

    missing = [flag for flag, value in (("--queries", queries), ("--corpus", corpus), ("--qrels", qrels)) if value is None]
    if missing:
        raise RagdiagError(f"names on your own queries need --queries, --corpus and --qrels together: {missing[0]} is missing")
    if "," in lang or lang not in ("en", "fr"):
        raise RagdiagError(f"--lang '{lang}': with --queries give one language, en or fr (the name lists)")
    if len(embedder) != 1:
        raise RagdiagError("with --queries give one --embedder")
    if plot is not None:
        raise RagdiagError("--plot does not apply with --queries (the result is the table and its JSON)")
    request = NamesRealRequest(queries, corpus, qrels, lang, embedder[0], parse_real_ablations(ablations), k, names,
                               bootstrap, seed, cache_dir, cache.value)
    _, doc = run(request)
    from ragdiag.io.out_format import out_format

    chosen = out_format(out, fmt.value if fmt else None, ("table", "json")) if out is not None else \
        (fmt.value if fmt else "table")
    rendered = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n" if chosen == "json" \
        else names_real_report.text(doc)
    if out is not None:
        write_text(out, rendered, inputs=[queries, corpus, qrels, names])
        typer.echo(f"wrote {out}", err=True)
    elif chosen == "json":
        typer.echo(rendered, nl=False)
    else:
        names_real_report.render(doc, Console())


@app.command("names")
def names(
    lang: p.Lang = "en",
    embedder: p.Embedders = [p.DEFAULT_EMBEDDER],  # noqa: B006 - typer reads the default, never mutates it
    n_queries: Annotated[int, p.int_option("--n-queries", "Queries (bundles) per language.", 1, 100_000)] = 30,
    runs: p.Runs = 15,
    seed: p.Seed = p.DEFAULT_SEED,
    ablations: Annotated[str, p.text_option("--ablations", "all or a comma list of ablation names.")] = "all",
    epsilon: p.Epsilon = 0.01,
    fmt: p.TableFormatOpt = None,
    out: Annotated[Optional[Path], p.path_option("--out", "Write the result here instead of stdout; its suffix picks the format (.json, .txt/.md = table; else JSON) unless --format is given.")] = None,
    plot: p.Plot = None,
    cache_dir: p.CacheDir = None,
    cache: p.Cache = p.DEFAULT_CACHE_MODE,
    queries: Annotated[Optional[Path], p.path_option("--queries", "Your own queries (BEIR queries.jsonl): detect the names in them, ablate them (--ablations mask, gibberish, replace) and measure the retrieval change against --qrels on --corpus.")] = None,
    corpus: Annotated[Optional[Path], p.path_option("--corpus", "With --queries: BEIR folder or corpus.jsonl searched (exact cosine).")] = None,
    qrels: Annotated[Optional[Path], p.path_option("--qrels", "With --queries: graded qrels 1–5 (binary 0/1 read as 1 and 5).")] = None,
    k: Annotated[int, p.int_option("--k", "With --queries: cut-off K of N-Recall4+@K, RA-nWG@K and recall@K.", 1, 100_000)] = 10,
    names: Annotated[Optional[Path], p.path_option("--names", "With --queries: more names to detect, one per line (besides faker's name lists).")] = None,
    bootstrap: p.Bootstrap = 1000,
) -> None:
    """Δ_name and Δ_topic margins under ten name ablations, EN and FR, on any embedder; with
    --queries/--corpus/--qrels, the same question on your own queries: what masking or replacing
    the names in them costs retrieval (paper 001 §4.5)."""
    from ragdiag.io.paths import check_paths
    from ragdiag.report.probe_output import print_probe_output

    check_paths(inputs={"--queries": queries, "--corpus": corpus, "--qrels": qrels, "--names": names},
                outputs={"--out": out}, plots={"--plot": plot}, folders={"--cache-dir": cache_dir})
    if queries is not None or corpus is not None or qrels is not None:
        _names_on_real_queries(queries, corpus, qrels, lang, embedder, ablations, k, names, bootstrap, seed, fmt, out,
                               plot, cache_dir, cache)
        return
    from ragdiag.probes.commands import (
        probe_names,  # after the checks: it needs the probes extra
    )

    print_probe_output(probe_names(lang, embedder, n_queries, runs, seed, ablations, epsilon, fmt.value if fmt else None, out, plot,
                                   cache_dir, cache_mode=cache.value))
