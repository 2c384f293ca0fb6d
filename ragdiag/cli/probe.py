"""``ragdiag probe names|noise``: the Δ-margin proper-name probe (docs/methods.md#6-name-probe); noise is ``ragdiag noise``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import params as p
from ragdiag.cli.engine_options import engine_command

app = typer.Typer(help="Embedding probes: proper-name sensitivity (Δ-margins) and conversational noise.",
                  no_args_is_help=True)


@app.command("names")
@engine_command
def names(
    lang: p.Lang = "en",
    embedder: p.Embedders = [p.DEFAULT_EMBEDDER],  # noqa: B006 - typer reads the default, never mutates it
    n_queries: Annotated[int, p.int_option("--n-queries", "Queries (bundles) per language.", 1, 100_000)] = 30,
    runs: p.Runs = 15,
    seed: p.Seed = p.DEFAULT_SEED,
    ablations: Annotated[str, p.text_option("--ablations", "all or a comma list of ablation names.")] = "all",
    epsilon: p.Epsilon = 0.01,
    fmt: p.TableFormatOpt = None,
    out: p.TableJsonOut = None,
    quiet: p.Quiet = False,
    plot: p.Plot = None,
    cache_dir: p.CacheDir = None,
    cache: p.Cache = p.DEFAULT_CACHE_MODE,
    queries: p.retold(p.Queries, "Your own queries (BEIR queries.jsonl): detect the names in them, ablate them (--ablations mask, gibberish, replace) and measure the retrieval change against --qrels on --corpus.", kind=Optional[Path]) = None,
    corpus: p.retold(p.Corpus, "With --queries: BEIR folder or corpus.jsonl searched (exact cosine).", kind=Optional[Path]) = None,
    qrels: p.retold(p.Qrels, "With --queries: graded qrels 1–5 (binary 0/1 read as 1 and 5).") = None,
    k: p.retold(p.K, "With --queries: cut-off K of N-Recall4+@K, RA-nWG@K and recall@K.") = 10,
    names: Annotated[Optional[Path], p.path_option("--names", "With --queries: more names to detect, one per line (besides faker's name lists).")] = None,
    bootstrap: p.Bootstrap = 1000,
) -> None:
    """Δ_name and Δ_topic margins under ten name ablations, EN and FR, on any embedder; with
    --queries/--corpus/--qrels, the same question on your own queries: what masking or replacing
    the names in them costs retrieval (paper 001 §4.5)."""
    from ragdiag.commands.probe import NamesRealResult, NamesRequest, run
    from ragdiag.report.probe_output import print_names_real, print_probe_output

    fmt_value = fmt.value if fmt else None
    result = run(NamesRequest(lang, tuple(embedder), n_queries, runs, seed, ablations, epsilon, fmt_value, out, plot,
                              cache_dir, cache.value, queries, corpus, qrels, k, names, bootstrap))
    if isinstance(result, NamesRealResult):
        print_names_real(result, fmt_value, quiet)
    else:
        print_probe_output(result, fmt_value, out is not None, quiet)
