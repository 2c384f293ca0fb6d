"""``ragdiag index build``: embed a BEIR corpus (cached) and save dense + BM25 indexes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

app = typer.Typer(help="Build retrieval indexes (dense faiss + BM25) from a corpus.", no_args_is_help=True)


@app.command("build")
def build(
    corpus: Path = typer.Option(..., "--corpus", help="BEIR corpus.jsonl (_id, title, text)."),
    out: Path = typer.Option(..., "--out", help="Index directory to write."),
    embedder: str = typer.Option("local", "--embedder", help="local, st:NAME, openai:MODEL or voyage:MODEL."),
    index: str = typer.Option("flat", "--index", help="Index spec, e.g. hnsw:M=16,efConstruction=100,efSearch=64."),
    metric: str = typer.Option("cosine", "--metric", help="ip, cosine or l2."),
    lang: str = typer.Option("en", "--lang", help="BM25 stopwords: en or fr."),
    fold_accents: bool = typer.Option(False, "--fold-accents", help="BM25: fold accents (é → e)."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Cache directory (default $RAGDIAG_CACHE_DIR)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the embedding cache."),
    base_url: str = typer.Option(None, "--base-url", help="API base URL for openai:/voyage: embedders."),
    seed: int = typer.Option(0, "--seed", help="Seed for IVF k-means training."),
) -> None:
    """Embed the corpus through the cache and save dense and BM25 indexes to --out."""
    from ragdiag.retrieval.store import BuildOptions, build_index_dir

    opts = BuildOptions(corpus, out, embedder, index, metric, lang, fold_accents, cache_dir, not no_cache, base_url, seed)
    manifest = build_index_dir(opts, progress=sys.stderr.isatty())
    stats, times = manifest["embedding"], manifest["timings_s"]
    typer.echo(
        f"indexed {manifest['n_docs']} passages (dim {manifest['dim']}) into {out} in {times['total']:.2f}s; "
        f"embedding calls: {stats['model_calls']} ({stats['embedded']} texts embedded, {stats['cache_hits']} cache hits); "
        f"seed {seed}"
    )
    typer.echo(json.dumps({"embedding": stats, "timings_s": times}))
