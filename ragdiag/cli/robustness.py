"""``ragdiag robustness``: Robustness-δ@K, average recall and speed of vector indexes or of a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o


def robustness(
    base_vectors: o.BaseVectors = None,
    query_vectors: o.QueryVectors = None,
    corpus: Annotated[Optional[Path], o.retold(o.Corpus, "A corpus file (BEIR corpus.jsonl or another shape) or a folder of documents, embedded with --embedder.")] = None,
    queries: Annotated[Optional[Path], o.retold(o.Queries, "BEIR queries.jsonl, embedded with --embedder.")] = None,
    embedder: o.Embedder = o.DEFAULT_EMBEDDER,
    run: Annotated[Optional[list[Path]], o.retold(o.Run, "Run file (with --qrels): run.jsonl from 'ragdiag retrieve' or a TREC run; repeat to compare runs side by side, each labelled by its file name.")] = None,
    qrels: o.Qrels = None,
    k: o.K = o.DEFAULT_K,
    metric: o.MetricOpt = o.DEFAULT_METRIC,
    index_spec: o.IndexSpecs = ["flat"],  # noqa: B006 - typer reads the default, never mutates it
    backend: Annotated[str, o.retold(o.Backend, "Where pg-* specs run: pgvector:postgresql://USER@HOST/DB or pgvector:embedded[:DIR] (faiss specs always run in faiss).")] = "faiss",
    delta: o.Deltas = o.DEFAULT_DELTAS,
    tie_aware: o.TieAware = False,
    latency_queries: o.LatencyQueries = 1000,
    repeats: o.BenchRepeats = 3,
    seed: o.Seed = o.DEFAULT_SEED,
    pg_builds: Annotated[int, o.int_option(o.RETRIEVAL, "--pg-builds", "Build each pg-ivfflat / pg-hnsw index N times and report recall, zero-recall queries and Robustness-δ as mean ± SD over the builds (pgvector's index build draws from the server's random state, which no seed reaches).", 1, 100)] = 1,
    threads: o.Threads = None,
    fmt: o.TableFormatOpt = None,
    quiet: o.Quiet = False,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the result here; its suffix picks the format (.json, .txt/.md = table; else JSON) unless --format is given.")] = None,
    per_query: o.PerQuery = None,
    plot_dir: o.PlotDir = None,
    cache_dir: o.EmbeddingCacheDir = None,
    cache: o.EmbeddingCache = o.DEFAULT_CACHE_MODE,
    base_url: o.EmbeddingBaseUrl = None,
    device: o.DeviceOpt = o.Device.cpu,
    batch_size: o.BatchSize = None,
    match_recall: Annotated[Optional[float], o.option(o.STATISTICS, "--match-recall", help="Target average recall (0, 1]: per index family, metrics (MAP, nDCG, MRR, hit rate vs exact, p5/p10/p50 recall, Robustness-δ@K) at the point interpolated between measured points with that recall (never extrapolated), and their deviation from the mean over families. Range (0, 1].", metavar=o.FLOAT, callback=o.finite_float(0.0, 1.0, lo_open=True, optional=True))] = None,
    require: Annotated[Optional[list[str]], o.option(o.STATISTICS, "--require", help="Constraint on the operating points, repeatable, NAME OP NUMBER with OP >=, <=, >, <; names: recall, R<δ> (e.g. R0.3; its δ is added to --delta), qps, p50, p95, p99 (ms), zero, build_s, mib. Shows the points meeting all of them with their unconstrained metrics, or names the binding constraint.", metavar=o.TEXT)] = None,
    min_recall: Annotated[Optional[float], o.option(o.STATISTICS, "--min-recall", help="Keep only operating points whose average recall is at least this (the others are listed in meta.min_recall). Range [0, 1].", metavar=o.FLOAT, callback=o.finite_float(0.0, 1.0, optional=True))] = None,
    hardness: Annotated[bool, o.option(o.STATISTICS, "--hardness", help="Per-query relative contrast and local intrinsic dimensionality against the base vectors, their Spearman correlation with per-query recall at every point, and the zero-recall queries with their features.")] = False,
    lid_k: Annotated[int, o.option(o.STATISTICS, "--lid-k", help="Nearest neighbours of the LID estimate (with --hardness).", min=2, max=1000, metavar=o.INTEGER)] = 20,
    adaptive: Annotated[Optional[str], o.option(o.RETRIEVAL, "--adaptive", help="FIRST:SECOND, e.g. 16:128: for every hnsw/ivf spec, search with efSearch (nprobe) FIRST, search again with SECOND only the queries whose rank-1 to rank-K score gap is small (threshold swept), and compare with the spec's fixed values at equal mean distance computations.", metavar=o.TEXT)] = None,
    bootstrap: o.Bootstrap = 1000,
    engine: o.EngineGroup = o.ENGINE,
    fields: o.Fields = None,
    run_format: o.RunFormat = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
) -> None:
    """Robustness-δ@K (share of queries with recall ≥ δ) beside average recall, QPS and latency."""
    with engine.settings().activate(), o.reading_of(fields, run=run_format, chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands.robustness import RobustnessRequest
        from ragdiag.commands.robustness import run as run_robustness
        from ragdiag.io.lists import parse_deltas

        request = RobustnessRequest(
            k=k, metric=metric.value, index=list(index_spec), deltas=parse_deltas(delta), base=base_vectors,
            queries=query_vectors, corpus=corpus, query_texts=queries, embedder=embedder, run=run, qrels=qrels,
            tie_aware=tie_aware, latency_queries=latency_queries, repeats=repeats, seed=seed, threads=threads,
            cache_dir=cache_dir, base_url=base_url, backend=backend, cache_mode=cache.value, device=device.value,
            batch_size=batch_size, bootstrap=bootstrap, match_recall=match_recall, require=list(require or []),
            min_recall=min_recall, hardness=hardness, lid_k=lid_k, adaptive=adaptive, pg_builds=pg_builds,
            out=out, fmt=fmt.value if fmt else None, per_query=per_query, plot_dir=plot_dir, progress=True,
        )
        result = run_robustness(request)
        from rich.console import Console

        from ragdiag.cli.show import show_result
        from ragdiag.report.robustness_table import print_robustness

        show_result(out, fmt, quiet, lambda: print_robustness(result, Console()),
                    lambda shown: json.dumps(result.to_json(), indent=2) + "\n")
