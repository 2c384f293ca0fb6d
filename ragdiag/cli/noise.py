"""``ragdiag noise`` (also ``ragdiag probe noise``): conversational-noise sensitivity of embedders (docs/methods.md#7-noise-probe)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o


def noise(
    lang: o.Lang = "en",
    embedder: o.Embedders = [o.DEFAULT_EMBEDDER],  # noqa: B006 - typer reads the default, never mutates it
    levels: Annotated[str, o.text_option(o.INPUT, "--levels", "Noise levels: a range (0-4) or a list (0,2,4).")] = "0-4",
    queries: Annotated[str, o.text_option(o.INPUT, "--queries", "bundled, or a JSONL file of {query, reference} (or BEIR queries: _id, text).")] = "bundled",
    seed: o.Seed = o.DEFAULT_SEED,
    variants: o.Variants = 3,
    corpus: Annotated[Optional[Path], o.retold(o.Corpus, "BEIR folder, a corpus file or a folder of documents: retrieval impact.")] = None,
    k: o.K = o.DEFAULT_K,
    output: o.ProbeOutputGroup = o.PROBE_OUTPUT,
    cache_dir: o.EmbeddingCacheDir = None,
    cache: o.EmbeddingCache = o.DEFAULT_CACHE_MODE,
    rewrite: Annotated[bool, o.option(o.LLM, "--rewrite", help="Also rewrite queries with an LLM and report recovery.")] = False,
    model: Annotated[Optional[str], o.retold(o.Model, f"LLM for --rewrite (default: {o.DEFAULT_MODEL}).")] = None,
    base_url: o.BaseUrl = None,
    qrels: Annotated[Optional[Path], o.retold(o.Qrels, "With --corpus and BEIR queries: graded qrels 1–5; per level the change in N-Recall4+@K, RA-nWG@K and recall@K of the noisy queries against the clean ones, with paired bootstrap intervals and the queries that lose the most.")] = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
    bootstrap: o.Bootstrap = 1000,
    engine: o.EngineGroup = o.ENGINE,
) -> None:
    """Cosine to the clean query and to its reference passage as conversational noise grows."""
    with engine.settings().activate(), o.reading_of(chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands.probe import NamesRealResult, NoiseRequest, run
        from ragdiag.report.probe_output import print_probe_output

        result = run(NoiseRequest(lang, tuple(embedder), levels, queries, seed, variants, corpus, k, output.format,
                                  output.out, output.plot, cache_dir, cache.value, rewrite, model, base_url, qrels,
                                  bootstrap))
        assert not isinstance(result, NamesRealResult)  # a noise request gets a ProbeRun
        print_probe_output(result, output.format, output.out is not None, output.quiet)
