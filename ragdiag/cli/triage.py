"""``ragdiag triage``: why did each failing query's answer fail? Interventions in the decision tree's
order (oracle, inject, position, drop-distractors, k-sweep, closed-book; single-passage opt-in)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.cli.options import FLOAT, TEXT, finite_float

TriageCorpus = Annotated[Optional[Path], o.retold(o.CorpusFolder, "BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or corpus.jsonl, ranked by --retriever (or give --texts and --ranked).")]
TriageRetriever = Annotated[Optional[list[str]], o.retold(o.Retriever, "With --corpus, one retriever: bm25[:VARIANT], dense:EMBEDDER[:INDEX_SPEC] or hybrid:A+B (RRF); default bm25.")]
TriageTexts = Annotated[Optional[str], o.retold(o.Texts, "Texts samples (id, q, p, n): JSON/JSONL file, hub-layout folder, or hf:[REPO]; with --ranked, instead of --corpus.")]
TriageAnswers = Annotated[Optional[Path], o.retold(o.Answers, "Reference answers, JSON lines {\"query_id\": ID, \"answer\": TEXT} or {..., \"answers\": [...]} (the format sweep --answers reads): grades are against them, and the oracle runs; without it, grades are against the ideal answer from the relevant passages and the oracle is skipped.")]
TriageK = Annotated[int, o.retold(o.K, "Passages per query given to the generator (top K).")]
TriageDepth = Annotated[Optional[int], o.retold(o.Depth, "Candidate pool per query: inject looks for a relevant passage below K down to here (default: max(4K, 20, the largest --k-sweep cut-off)).")]
FailBelow = Annotated[float, o.option(o.STATISTICS, "--fail-below", help="A query fails when its baseline grade is below this; an intervention fixes it when its grade reaches this or improves by 2. Range [1, 5].", metavar=FLOAT, callback=finite_float(1.0, 5.0))]
AllQueries = Annotated[bool, o.option(o.INPUT, "--all", help="Triage every query, not only the failing ones (base rates; eRAG τ needs varied grades).")]
Interventions = Annotated[str, o.option(o.LLM, "--interventions", help="Comma list of oracle, inject, position, drop-distractors, k-sweep, closed-book, single-passage (opt-in: K calls per query for the utility labels).", metavar=TEXT)]
Exhaustive = Annotated[bool, o.option(o.LLM, "--exhaustive", help="Run every intervention that applies (complete 'also' lists) instead of stopping once the cause is known.")]
KSweep = Annotated[Optional[str], o.option(o.RETRIEVAL, "--k-sweep", help="Cut-offs of the k-sweep intervention, comma list (default: 1,3,K,2K).", metavar=TEXT)]
TriageOutDir = Annotated[Path, o.retold(o.OutDir, "Folder for triage.json, per_query.jsonl and (single-passage) utility-qrels.tsv (created if missing).")]


def triage(
    out_dir: TriageOutDir = Path("triage"),
    corpus: TriageCorpus = None,
    queries: Annotated[Optional[Path], o.given(o.FolderQueries, "--corpus")] = None,
    qrels: Annotated[Optional[Path], o.retold(o.Qrels, "With --corpus: qrels, BEIR or TREC (default: the folder's qrels/test.tsv).")] = None,
    retriever: TriageRetriever = None,
    texts: TriageTexts = None,
    ranked: o.Ranked = None,
    answers: TriageAnswers = None,
    k: TriageK = 5,
    depth: TriageDepth = None,
    fail_below: FailBelow = 3.0,
    all_queries: AllQueries = False,
    max_queries: o.MaxQueries = None,
    max_calls: o.MaxCalls = None,
    interventions: Interventions = "oracle,inject,position,drop-distractors,k-sweep,closed-book",
    exhaustive: Exhaustive = False,
    k_sweep: KSweep = None,
    ideal_cap: o.IdealCap = 10,
    bootstrap: o.Bootstrap = 1000,
    embed_base_url: o.EmbedBaseUrl = None,
    grade_mode: o.GradeModeOpt = o.GradeMode.digit,
    top_logprobs: o.TopLogprobs = o.DEFAULT_TOP_LOGPROBS,
    keep_degenerate: o.KeepDegenerate = False,
    degenerate_patterns: o.DegeneratePatterns = None,
    long_answer_ratio: o.LongAnswerRatio = o.DEFAULT_LONG_ANSWER_RATIO,
    lang: o.AnswerLang = o.DEFAULT_LANG,
    max_prompt_tokens: o.MaxPromptTokens = None,
    fit: o.Fit = o.DEFAULT_FIT,
    tokenizer: o.Tokenizer = None,
    chars_per_token: o.CharsPerToken = o.DEFAULT_CHARS_PER_TOKEN,
    max_answer_tokens: o.MaxAnswerTokens = o.DEFAULT_MAX_ANSWER_TOKENS,
    model: o.Model = o.DEFAULT_MODEL,
    base_url: o.BaseUrl = None,
    cache_dir: o.CacheDir = None,
    cache: o.Cache = o.DEFAULT_CACHE_MODE,
    workers: o.Workers = o.DEFAULT_WORKERS,
    seed: o.RequestSeed = o.DEFAULT_SEED,
    temperature: o.Temperature = o.DEFAULT_TEMPERATURE,
    max_retries: o.MaxRetries = o.DEFAULT_MAX_RETRIES,
    timeout: o.Timeout = o.DEFAULT_TIMEOUT,
    rpm: o.Rpm = None,
    tpm: o.Tpm = None,
    prices: o.Prices = None,
    batch: o.Batch = None,
    batch_dir: o.BatchDir = None,
    batch_wait: o.BatchWait = None,
    batch_poll: o.BatchPoll = o.DEFAULT_BATCH_POLL,
    batch_max_requests: o.BatchMaxRequests = o.DEFAULT_BATCH_MAX_REQUESTS,
    batch_max_bytes: o.BatchMaxBytes = o.DEFAULT_BATCH_MAX_BYTES,
    min_coverage: o.MinCoverage = o.DEFAULT_MIN_COVERAGE,
    progress: o.Progress = True,
    engine: o.EngineOpt = o.EngineKind.local,
    ray_address: o.RayAddress = o.DEFAULT_RAY_ADDRESS,
    ray_workers: o.RayWorkers = o.DEFAULT_RAY_WORKERS,
    gpus_per_worker: o.GpusPerWorker = 0.0,
    llm_backend: o.LlmBackendOpt = o.LlmBackend.openai,
    fields: o.Fields = None,
    queries_format: o.QueriesFormat = None,
) -> None:
    """Why did each failing answer fail? Baseline, then interventions in the decision tree's order; the cause of each
    query, the share of each cause with its fix, and the cost (files in --out-dir)."""
    config = o.client_config(
        model=model, base_url=base_url, cache_dir=cache_dir, cache=cache, workers=workers, seed=seed,
        temperature=temperature, max_retries=max_retries, timeout=timeout, rpm=rpm, tpm=tpm, prices=prices, batch=batch,
        batch_dir=batch_dir, batch_wait=batch_wait, batch_poll=batch_poll, batch_max_requests=batch_max_requests,
        batch_max_bytes=batch_max_bytes)
    answer = o.answer_settings(lang, max_prompt_tokens, fit, tokenizer, chars_per_token, max_answer_tokens)
    grading = o.grading_options(grade_mode, top_logprobs, keep_degenerate, degenerate_patterns, long_answer_ratio)
    with o.llm_run(config, o.engine_settings(engine, ray_address, ray_workers, gpus_per_worker, llm_backend)), \
            o.reading_of(fields, queries=queries_format).activate():
        from ragdiag.commands.triage import TriageRequest, parse_interventions, sweep_ks
        from ragdiag.commands.triage import run as run_triage
        from ragdiag.errors import RagdiagError
        from ragdiag.io.lists import parse_ks
        from ragdiag.report.triage_report import print_triage

        names = parse_interventions(interventions)
        if retriever is not None and len(retriever) != 1:
            raise RagdiagError("--retriever: triage ranks with one retriever; give it once")
        request = TriageRequest(
            k=k, fail_below=fail_below, all_queries=all_queries, interventions=names, exhaustive=exhaustive,
            ks=sweep_ks(k, tuple(parse_ks(k_sweep, "--k-sweep")) if k_sweep else None), ideal_cap=ideal_cap,
            max_calls=max_calls, grading=grading, answer=answer, corpus=corpus, queries=queries, qrels=qrels,
            retriever=retriever[0] if retriever else "bm25", texts=texts, ranked=ranked, answers=answers, depth=depth,
            max_queries=max_queries, bootstrap=bootstrap, embed_base_url=embed_base_url, llm=config, out_dir=out_dir,
            progress=progress)
        done = run_triage(request)
        print_triage(done.result, typer.echo)
        for name, path in done.paths.items():
            typer.echo(f"{name}: {path}")
        del min_coverage  # every triaged query is reported, graded or not: no coverage threshold applies
