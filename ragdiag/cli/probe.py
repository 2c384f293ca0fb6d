"""``ragdiag probe names|noise``: the Δ-margin proper-name probe (docs/methods.md#6-name-probe); noise is ``ragdiag noise``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand

app = typer.Typer(cls=HelpGroup, help="Embedding probes: proper-name sensitivity (Δ-margins) and conversational noise.",
                  no_args_is_help=True)


@app.command("names", cls=PanelCommand)
def names(
    lang: o.Lang = "en",
    embedder: o.Embedders = [o.DEFAULT_EMBEDDER],  # noqa: B006 - typer reads the default, never mutates it
    n_queries: Annotated[int, o.int_option(o.INPUT, "--n-queries", "Queries (bundles) per language.", 1, 100_000)] = 30,
    runs: o.Runs = 15,
    seed: o.Seed = o.DEFAULT_SEED,
    ablations: Annotated[str, o.text_option(o.INPUT, "--ablations", "all or a comma list of ablation names.")] = "all",
    epsilon: o.Epsilon = 0.01,
    output: o.ProbeOutputGroup = o.PROBE_OUTPUT,
    cache_dir: o.EmbeddingCacheDir = None,
    cache: o.EmbeddingCache = o.DEFAULT_CACHE_MODE,
    queries: Annotated[Optional[Path], o.retold(o.Queries, "Your own queries (BEIR queries.jsonl): detect the names in them, ablate them (--ablations mask, gibberish, replace) and measure the retrieval change against --qrels on --corpus.")] = None,
    corpus: Annotated[Optional[Path], o.retold(o.Corpus, "With --queries: BEIR folder, a corpus file or a folder of documents, searched (exact cosine).")] = None,
    qrels: Annotated[Optional[Path], o.retold(o.Qrels, "With --queries: graded qrels 1–5 (binary 0/1 read as 1 and 5).")] = None,
    k: Annotated[int, o.retold(o.K, "With --queries: cut-off K of N-Recall4+@K, RA-nWG@K and recall@K.")] = 10,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
    names: Annotated[Optional[Path], o.path_option(o.INPUT, "--names", "With --queries: more names to detect, one per line (besides faker's name lists).")] = None,
    bootstrap: o.Bootstrap = 1000,
    engine: o.EngineGroup = o.ENGINE,
) -> None:
    """Δ_name and Δ_topic margins under ten name ablations, EN and FR, on any embedder; with
    --queries/--corpus/--qrels, the same question on your own queries: what masking or replacing
    the names in them costs retrieval (paper 001 §4.5)."""
    with engine.settings().activate(), o.reading_of(chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands.probe import NamesRealResult, NamesRequest, run
        from ragdiag.report.probe_output import print_names_real, print_probe_output

        result = run(NamesRequest(lang, tuple(embedder), n_queries, runs, seed, ablations, epsilon, output.format,
                                  output.out, output.plot, cache_dir, cache.value, queries, corpus, qrels, k, names,
                                  bootstrap))
        if isinstance(result, NamesRealResult):
            print_names_real(result, output.format, output.quiet)
        else:
            print_probe_output(result, output.format, output.out is not None, output.quiet)
