"""``ragdiag label``: an LLM utility judge grades each (query, passage) of a fused candidate pool 1–5
and writes graded qrels (BEIR TSV) with a manifest (paper 001, rag-gs S2–S5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.report.llm_summary import render_summary


def label(
    corpus: Annotated[Path, o.retold(o.Corpus, "Corpus: JSONL, JSON list, CSV, TSV or Parquet with id, text and optional title fields (BEIR corpus.jsonl), a BEIR folder, or a folder of documents (passages 'path#n').")],
    queries: o.Queries,
    out: Annotated[Path, o.retold(o.OutRequired, "Graded qrels to write (BEIR TSV query-id, corpus-id, score 1–5); its manifest is OUT.manifest.json.")],
    pool: Annotated[str, o.text_option(o.RETRIEVAL, "--pool", "Pool retrievers, comma-separated: dense:EMBEDDER (faiss flat, cosine), bm25[:SPEC], run:PATH; fused by RRF (c = 60).")] = "dense:local,bm25",
    pool_depth: Annotated[int, o.int_option(o.RETRIEVAL, "--pool-depth", "Top passages taken from each pool retriever.", 1, 10_000)] = 50,
    client: o.ClientGroup = o.CLIENT,
    repeats: o.Repeats = o.DEFAULT_REPEATS,
    min_per_query: Annotated[Optional[int], o.option(o.LLM, "--min-per-query", help="Prune: keep whole grade buckets 5 → 1 until at least this many pairs per query. Range [1, 100000].", min=1, max=100_000, metavar=o.INTEGER)] = None,
    max_queries: Annotated[Optional[int], o.retold(o.MaxQueries, "Label only the first N queries of --queries (to try it on a few). Range [1, 10000000].")] = None,
    refine: Annotated[bool, o.option(o.LLM, "--refine", help="Refine each query's Top-N graded passages with listwise Plackett–Luce comparisons (paper 001 §3.3.1); orders in OUT.refined.jsonl.")] = False,
    refine_top: Annotated[int, o.int_option(o.LLM, "--refine-top", "With --refine: the Top-N refined per query.", 2, 1000)] = 20,
    refine_batch: Annotated[int, o.int_option(o.LLM, "--refine-batch", "With --refine: passages per listwise judgement (m).", 2, 20)] = 5,
    refine_patience: Annotated[int, o.int_option(o.LLM, "--refine-patience", "With --refine: stop once the Top-N order is unchanged for this many rounds.", 1, 10_000)] = 15,
    refine_max_rounds: Annotated[int, o.int_option(o.LLM, "--refine-max-rounds", "With --refine: at most this many listwise judgements per query.", 1, 100_000)] = 200,
    refine_seed: Annotated[int, o.option(o.LLM, "--refine-seed", help="With --refine: seed of the batch choice (per query: seed + its position).", min=0, max=o.SEED_MAX, metavar=o.INTEGER)] = 0,
    human: o.Human = None,
    engine: o.EngineGroup = o.ENGINE,
    fields: o.Fields = None,
    queries_format: o.QueriesFormat = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
) -> None:
    """Judge each pooled (query, passage) 1–5 for utility from the passage text; nulls, never defaults."""
    config = client.config()
    with o.llm_run(client, engine), o.reading_of(fields, queries=queries_format, chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands.label import LabelOptions, LabelRequest, RefineParams, check_coverage, refined_output, run

        refine_params = RefineParams(top_n=refine_top, batch=refine_batch, patience=refine_patience,
                                     max_rounds=refine_max_rounds, seed=refine_seed) if refine else None
        options = LabelOptions(corpus, queries, out, pool, pool_depth, repeats, min_per_query, human, refine_params,
                               max_queries)
        result = run(LabelRequest(options, config, client.progress))
        files = {"graded qrels": out, "manifest": result.manifest}
        if refine:
            files["refined orders"] = refined_output(out)
        render_summary("ragdiag label", result.summary, files)
        refined = result.document.refine_totals
        if refined:
            typer.echo(f"refined the Top-{refine_top} of {refined.queries} queries: {refined.judgements} listwise "
                       f"judgements, {refined.failed_batches} failed batches, {refined.stable} stopped after "
                       f"{refine_patience} stable rounds (the others at --refine-max-rounds {refine_max_rounds})")
        agreement = result.document.human_agreement
        if agreement:
            def show(x):
                return "n/a" if x is None else f"{x:.3f}"
            typer.echo(f"judge vs human on {agreement.pairs} shared pairs: quadratic-weighted κ {show(agreement.kappa_quadratic)}, "
                       f"Krippendorff α (ordinal) {show(agreement.alpha_ordinal)}, mean |judge − human| {show(agreement.mean_abs_diff)}; "
                       f"confusion matrix in {result.manifest}")
        check_coverage(result.summary, client.min_coverage, result.manifest)
