"""``ragdiag triage``: why did each failing query's answer fail? Interventions in the decision tree's
order (oracle, inject, position, drop-distractors, k-sweep, closed-book; single-passage opt-in)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.options import FLOAT, INTEGER, TEXT, finite_float

TriageCorpus = Annotated[Optional[Path], o.retold(o.CorpusFolder, "BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv), a corpus file, or a folder of documents (passages 'path#n' of 256 words; with --queries and --qrels), ranked by --retriever or --run (or give --index-dir, or --texts and --ranked).")]
TriageIndexDir = Annotated[Optional[Path], o.retold(o.IndexDir, "Instead of --corpus: the passages of an index folder written by 'ragdiag index build' (a folder of documents' passages 'path#n', or the corpus file it was built from), with --queries, --qrels and --run (or --retriever).")]
TriageRetriever = Annotated[Optional[list[str]], o.retold(o.Retriever, "With --corpus or --index-dir, one retriever over its passages: bm25[:VARIANT], dense:EMBEDDER[:INDEX_SPEC] or hybrid:A+B (RRF); default bm25.")]
TriageTexts = Annotated[Optional[str], o.retold(o.Texts, "Texts samples (id, q, p, n): JSON/JSONL file, hub-layout folder, or hf:[REPO]; with --ranked, instead of --corpus.")]
TriageAnswers = Annotated[Optional[Path], o.retold(o.Answers, "Reference answers, JSON lines {\"query_id\": ID, \"answer\": TEXT} or {..., \"answers\": [...]} (the format sweep --answers reads): grades are against them, and the oracle runs; without it, grades are against the ideal answer from the relevant passages and the oracle is skipped.")]
AnswersFrom = Annotated[Optional[Path], o.option(o.INPUT, "--answers-from", help="Answers you already have (production answers): the answers file of import traces or generate, its topK rows at K = --k, or a CSV, TSV, JSON or Parquet table with a query id and an answer column (--fields answer=NAME). Each query's baseline is read, graded, never generated; queries without an answer are left out.", metavar=o.PATH)]
TriageK = Annotated[int, o.retold(o.K, "Passages per query given to the generator (top K).")]
TriageDepth = Annotated[Optional[int], o.retold(o.Depth, "Candidate pool per query: inject looks for a relevant passage below K down to here (default: max(4K, 20, the largest --k-sweep cut-off)).")]
FailBelow = Annotated[float, o.option(o.STATISTICS, "--fail-below", help="A query fails when its baseline grade is below this; an intervention fixes it when its grade reaches this or improves by 2. Range [1, 5].", metavar=FLOAT, callback=finite_float(1.0, 5.0))]
AllQueries = Annotated[bool, o.option(o.INPUT, "--all", help="Triage every query, not only the failing ones (base rates; eRAG τ needs varied grades).")]
Interventions = Annotated[str, o.option(o.LLM, "--interventions", help="Comma list of oracle, inject, position, drop-distractors, k-sweep, closed-book, single-passage (opt-in: K calls per query for the utility labels).", metavar=TEXT)]
Repeats = Annotated[int, o.int_option(o.LLM, "--repeats", "Generations and gradings per variant (repeat r asks with seed + r: another sample where the generator or judge is not deterministic). A fix counts only when it holds on every repeat; the failing baseline is asked N times (2(N-1) more calls per failing query) and each first-repeat fix N-1 more times.", 1, 20)]
Exhaustive = Annotated[bool, o.option(o.LLM, "--exhaustive", help="Run every intervention that applies (complete 'also' lists) instead of stopping once the cause is known.")]
KSweep = Annotated[Optional[str], o.option(o.RETRIEVAL, "--k-sweep", help="Cut-offs of the k-sweep intervention, comma list (default: 1,3,K,2K).", metavar=TEXT)]
TriageRun = Annotated[Optional[Path], o.retold(o.Run, "With --corpus or --index-dir: your run (run.jsonl or TREC) gives each query's pool instead of --retriever.")]
TriageIds = Annotated[Optional[str], o.option(o.INPUT, "--ids", help="Triage only these queries, a comma list (e.g. q05,q53), in this order.", metavar=TEXT)]
FromCompare = Annotated[Optional[Path], o.option(o.INPUT, "--from-compare", help="Triage compare's regressed queries: its --per-query file (deltas.jsonl), Δ < 0 on its first metric, most regressed first (--max-queries caps them).", metavar=o.PATH)]
ReferenceFree = Annotated[bool, o.option(o.INPUT, "--reference-free", help="Grade without a reference (answers the question, supported by its passages, abstains when they are insufficient) and find causes with the sufficient-context rater; automatic with neither --answers nor a relevant passage in the qrels.")]
PoolK = Annotated[Optional[int], o.option(o.RETRIEVAL, "--pool-k", help="Reference-free: the sufficient-context rater's deeper pool, the first N passages of the candidate pool (above --k, at most --depth; default: the whole pool).", min=2, max=100_000, metavar=INTEGER)]
TriageOutDir = Annotated[Path, o.retold(o.OutDir, "Folder for triage.json, per_query.jsonl and (single-passage) utility-qrels.tsv (created if missing).")]


def triage(
    out_dir: TriageOutDir = Path("triage"),
    corpus: TriageCorpus = None,
    index_dir: TriageIndexDir = None,
    queries: Annotated[Optional[Path], o.given(o.FolderQueries, "--corpus or --index-dir")] = None,
    qrels: Annotated[Optional[Path], o.retold(o.Qrels, "With --corpus or --index-dir: qrels, BEIR or TREC (default: the --corpus folder's qrels/test.tsv).")] = None,
    retriever: TriageRetriever = None,
    run: TriageRun = None,
    ids: TriageIds = None,
    from_compare: FromCompare = None,
    texts: TriageTexts = None,
    ranked: o.Ranked = None,
    answers: TriageAnswers = None,
    answers_from: AnswersFrom = None,
    reference_free: ReferenceFree = False,
    pool_k: PoolK = None,
    k: TriageK = 5,
    depth: TriageDepth = None,
    fail_below: FailBelow = 3.0,
    all_queries: AllQueries = False,
    max_queries: o.MaxQueries = None,
    client: o.ClientGroup = o.CLIENT,
    max_calls: o.MaxCalls = None,
    interventions: Interventions = "oracle,inject,position,drop-distractors,k-sweep,closed-book",
    exhaustive: Exhaustive = False,
    repeats: Repeats = 1,
    k_sweep: KSweep = None,
    ideal_cap: o.IdealCap = 10,
    bootstrap: o.Bootstrap = 1000,
    embed_base_url: o.EmbedBaseUrl = None,
    grading: o.GradingGroup = o.GRADING,
    answer: o.AnswerGroup = o.ANSWER,
    engine: o.EngineGroup = o.ENGINE,
    fields: o.Fields = None,
    queries_format: o.QueriesFormat = None,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
    by_document: Annotated[bool, o.retold(o.ByDocument, "Qrels that judge documents ('guide/install') judge every passage cut from them ('guide/install.md#0', '#1', and so on) at their grade (an index of a folder of documents).")] = False,
) -> None:
    """Why did each failing answer fail? Baseline, then interventions that each change one thing, smallest first;
    the cause of each query, the share of each cause with its fix, and the cost (files in --out-dir)."""
    config = client.config()
    settings = answer.settings()
    grading_options = grading.options()
    with o.llm_run(client, engine), o.reading_of(fields, queries=queries_format, by_document=by_document,
                                                     chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        from ragdiag.commands.triage import TriageRequest, parse_ids, parse_interventions, sweep_ks
        from ragdiag.commands.triage import run as run_triage
        from ragdiag.errors import RagdiagError
        from ragdiag.io.lists import parse_ks
        from ragdiag.report.triage_report import print_triage

        names = parse_interventions(interventions)
        if retriever is not None and len(retriever) != 1:
            raise RagdiagError("--retriever: triage ranks with one retriever; give it once")
        request = TriageRequest(
            k=k, fail_below=fail_below, all_queries=all_queries, interventions=names, exhaustive=exhaustive, repeats=repeats,
            ks=sweep_ks(k, tuple(parse_ks(k_sweep, "--k-sweep")) if k_sweep else None), ideal_cap=ideal_cap,
            max_calls=max_calls, grading=grading_options, answer=settings, corpus=corpus, index_dir=index_dir,
            queries=queries, qrels=qrels,
            retriever=retriever[0] if retriever else "bm25", texts=texts, ranked=ranked, answers=answers, answers_from=answers_from, depth=depth,
            max_queries=max_queries, bootstrap=bootstrap, embed_base_url=embed_base_url, llm=config, out_dir=out_dir,
            progress=client.progress, run=run, ids=parse_ids(ids) if ids is not None else None, from_compare=from_compare,
            reference_free=reference_free, pool_k=pool_k)
        done = run_triage(request)
        print_triage(done.result, typer.echo)
        for name, path in done.paths.items():
            typer.echo(f"{name}: {path}")
        # client.min_coverage is not applied: every triaged query is reported, graded or not
