"""``ragdiag robustness``: Robustness-δ@K, average recall and speed of vector indexes or of a run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def robustness(
    base: Path = typer.Option(None, "--base", help="Base vectors X.npy (n × dim)."),
    queries: Path = typer.Option(None, "--queries", help="Query vectors Q.npy (m × dim)."),
    corpus: Path = typer.Option(None, "--corpus", help="BEIR corpus.jsonl, embedded with --embedder."),
    query_texts: Path = typer.Option(None, "--query-texts", help="BEIR queries.jsonl, embedded with --embedder."),
    embedder: str = typer.Option("local", "--embedder", help="local, st:NAME, openai:MODEL or voyage:MODEL."),
    run: Path = typer.Option(None, "--run", help="run.jsonl from 'ragdiag retrieve' (with --qrels)."),
    qrels: Path = typer.Option(None, "--qrels", help="Qrels TSV with header (query-id, corpus-id, score)."),
    k: int = typer.Option(10, "--k", help="Cut-off K."),
    metric: str = typer.Option("ip", "--metric", help="ip, cosine or l2."),
    index: list[str] = typer.Option(["flat"], "--index", help="Index spec (repeatable); a|b|c sweeps a search parameter."),
    backend: str = typer.Option("faiss", "--backend", help="Where pg-* specs run: pgvector:postgresql://… or pgvector:embedded[:DIR] (faiss specs always run in faiss)."),
    delta: str = typer.Option("0.1,0.3,0.5,0.7,0.9", "--delta", help="Comma-separated δ values."),
    tie_aware: bool = typer.Option(False, "--tie-aware", help="Count returned items tied with the K-th true distance."),
    latency_queries: int = typer.Option(1000, "--latency-queries", help="Queries timed one by one for latency."),
    repeats: int = typer.Option(3, "--repeats", help="Repeats of the batch QPS measurement (median reported)."),
    seed: int = typer.Option(0, "--seed", help="Seed for IVF k-means training."),
    threads: int = typer.Option(None, "--threads", help="faiss OpenMP threads (default: all cores)."),
    fmt: str = typer.Option("table", "--format", help="table or json (stdout)."),
    out: Path = typer.Option(None, "--out", help="Write the JSON result here."),
    per_query: Path = typer.Option(None, "--per-query", help="Write one JSON line per (point, query)."),
    plot: Path = typer.Option(None, "--plot", help="Write PNG plots to this directory."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Cache directory (default $RAGDIAG_CACHE_DIR)."),
    base_url: str = typer.Option(None, "--base-url", help="API base URL for openai:/voyage: embedders."),
) -> None:
    """Robustness-δ@K (share of queries with recall ≥ δ) beside average recall, QPS and latency."""
    from ragdiag.bench.robustness import RobustnessOptions, run_robustness, write_outputs
    from ragdiag.options import parse_deltas
    from ragdiag.errors import RagdiagError

    if fmt not in ("table", "json"):
        raise RagdiagError(f"--format '{fmt}': expected table or json")
    opts = RobustnessOptions(
        k=k, metric=metric, index=list(index), deltas=parse_deltas(delta), base=base, queries=queries, corpus=corpus,
        query_texts=query_texts, embedder=embedder, run=run, qrels=qrels, tie_aware=tie_aware,
        latency_queries=latency_queries, repeats=repeats, seed=seed, threads=threads, cache_dir=cache_dir, base_url=base_url,
        backend=backend,
    )
    result, rows = run_robustness(opts, progress=sys.stderr.isatty())
    write_outputs(result, rows, out, per_query)
    if plot:
        from ragdiag.report.robustness_plots import write_plots

        write_plots(result, plot)
    if fmt == "json":
        typer.echo(json.dumps(result, indent=2))
    else:
        from rich.console import Console

        from ragdiag.report.robustness_table import robustness_table

        Console(width=200).print(robustness_table(result))
