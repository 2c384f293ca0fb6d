"""``ragdiag index build|search``: embed a BEIR corpus (cached) into dense + BM25 indexes, and search them."""

from __future__ import annotations

from typing import Annotated

import typer

from ragdiag.cli import options as o
from ragdiag.cli.help_format import HelpGroup, PanelCommand

app = typer.Typer(cls=HelpGroup, help="Build retrieval indexes (dense faiss + BM25) from a corpus, and search them.", no_args_is_help=True)


@app.command("build", cls=PanelCommand)
def build(
    corpus: o.Corpus,
    out_dir: o.OutDir,
    fields: o.Fields = None,
    id_field: o.IdField = None,
    text_field: o.TextField = None,
    title_field: o.TitleField = None,
    corpus_format: o.CorpusFormat = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
    embedder: o.Embedder = o.DEFAULT_EMBEDDER,
    index_spec: o.IndexSpec = "flat",
    metric: o.MetricOpt = o.DEFAULT_METRIC,
    lang: Annotated[o.Language, o.option(o.RETRIEVAL, "--lang", help="BM25 stopwords and Snowball stemmer.", metavar=o.choices_metavar(o.Language))] = o.Language.en,
    fold_accents: Annotated[bool, o.option(o.RETRIEVAL, "--fold-accents", help="BM25: fold accents (é → e).")] = False,
    cache_dir: o.EmbeddingCacheDir = None,
    cache: o.EmbeddingCache = o.DEFAULT_CACHE_MODE,
    base_url: o.EmbeddingBaseUrl = None,
    seed: o.Seed = o.DEFAULT_SEED,
    bm25: Annotated[str, o.text_option(o.RETRIEVAL, "--bm25", "BM25 variant: bm25:lucene (k1 0.9, b 0.4, as Anserini), bm25:okapi (rank-bm25's BM25Okapi, k1 1.5, b 0.75), or with parameters, e.g. bm25:lucene:k1=1.2,b=0.75.")] = "bm25:lucene",
    stem: Annotated[bool, o.option(o.RETRIEVAL, "--stem/--no-stem", help="BM25: Snowball stemming (PyStemmer) for --lang.")] = True,
    backend: o.Backend = "faiss",
    chunk: o.Chunk = None,
    device: o.DeviceOpt = o.Device.cpu,
    batch_size: o.BatchSize = None,
    engine: o.EngineGroup = o.ENGINE,
) -> None:
    """Embed the corpus through the cache and save dense and BM25 indexes to --out-dir."""
    with engine.settings().activate():
        from ragdiag.commands.index import IndexBuildRequest
        from ragdiag.commands.index import run as run_build

        request = IndexBuildRequest(corpus, out_dir, embedder, index_spec, metric.value, lang.value, fold_accents, cache_dir,
                                    cache is not o.CacheMode.off, base_url, seed, bm25=bm25, stem=stem, chunk=chunk,
                                    device=device.value, batch_size=batch_size, backend=backend, cache_mode=cache.value,
                                    progress=True, reading=o.reading_of(fields, id_field, text_field, title_field,
                                                                        corpus=corpus_format, chunk_size=chunk_size,
                                                                        chunk_overlap=chunk_overlap))
        result = run_build(request)
        for line in build_summary(result.to_json(), out_dir):
            typer.echo(line)



def build_summary(manifest: dict, out_dir) -> list[str]:
    """Three plain lines: what was indexed, the embedding calls, where the time went."""
    meta, stats, times = manifest["meta"], manifest["embedding"], manifest["timings_s"]
    bm25 = meta.get("bm25") or {}
    if manifest.get("dim") is None:
        dense = f"no dense index (--embedder {meta.get('embedder')})"
    else:
        dense = (f"dense {meta.get('index_spec')} ({meta.get('backend')}, {meta.get('metric')}, dim {manifest['dim']}, "
                 f"embedder {meta.get('embedder_identity') or meta.get('embedder')})")
    passages = manifest.get("n_passages")
    chunks = f" as {passages} passages" if passages and passages != manifest["n_docs"] else ""
    folder = meta.get("documents")
    indexed = (f"{folder['files']} files as {manifest['n_docs']} passages ('path#n', {folder['chunk_size']} tokens, "
               f"{folder['chunk_overlap']} shared)" if folder else f"{manifest['n_docs']} documents{chunks}")
    what = (f"indexed {indexed} into {out_dir}: {dense}; "
            f"BM25 {bm25.get('variant')} (k1 {bm25.get('k1')}, b {bm25.get('b')}, {bm25.get('lang')})")
    calls = (f"embedding: {stats['model_calls']} model calls, {stats['embedded']} texts embedded, "
             f"{stats['cache_hits']} cache hits, {stats.get('retries', 0)} retries")
    time = ("time: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in times.items())
            + f"; seed {meta.get('seed')}; manifest {out_dir}/manifest.json")
    return [what, calls, time]
