"""``ragdiag pipeline``: rank → generate → grade → correlate in one command (``--corpus``: your own
corpus, queries and qrels ranked by ``--retriever`` specs; see :mod:`ragdiag.commands.pipeline`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ragdiag.cli import options as o
from ragdiag.io.lists import parse_ks
from ragdiag.report.llm_summary import render_summary

if TYPE_CHECKING:
    from ragdiag.commands.pipeline import CorpusRunResult, PipelineResult

TextsOpt = Annotated[Optional[str], o.retold(o.Texts, "Texts samples: JSON/JSONL file, hub-layout folder, or hf:[REPO] (or rank your own corpus with --corpus).")]
CorpusOpt = Annotated[Optional[Path], o.retold(o.CorpusFolder, "Rank your own corpus: BEIR corpus.jsonl, or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv); use with --retriever instead of --texts.")]
QrelsOpt = Annotated[Optional[Path], o.retold(o.Qrels, "With --corpus: qrels, BEIR or TREC (default: the folder's qrels/test.tsv).")]
RetrieverOpt = o.Retriever
DepthOpt = o.Depth
IdealCapOpt = Annotated[int, o.retold(o.IdealCap, "With --corpus: queries with more relevant passages than this are left out (the ideal answer uses them all).")]
EmbedBaseUrlOpt = Annotated[Optional[str], o.retold(o.EmbedBaseUrl, "With --corpus: server URL for openai:/voyage: embedders (--base-url is the chat model's).")]


def pipeline(
    out_dir: o.OutDir,
    texts: TextsOpt = None,
    ranked: o.Ranked = None,
    embedder: o.RankEmbedder = None,
    ks: o.Ks = o.DEFAULT_KS,
    dataset: o.DatasetOpt = o.Dataset.all,
    repeats: o.Repeats = o.DEFAULT_REPEATS,
    second_judge: o.SecondJudge = None,
    segments: o.Segments = o.Segmentation.ratio,
    min_samples: o.MinSamples = o.DEFAULT_MIN_SAMPLES,
    corpus: CorpusOpt = None,
    queries: Annotated[Optional[Path], o.given(o.FolderQueries, "--corpus")] = None,
    qrels: QrelsOpt = None,
    retriever: RetrieverOpt = None,
    depth: DepthOpt = None,
    ideal_cap: IdealCapOpt = 10,
    max_queries: Annotated[Optional[int], o.given(o.MaxQueries, "--corpus")] = None,
    embed_base_url: EmbedBaseUrlOpt = None,
    grade_mode: o.GradeModeOpt = o.GradeMode.digit,
    top_logprobs: o.TopLogprobs = o.DEFAULT_TOP_LOGPROBS,
    keep_degenerate: o.KeepDegenerate = False,
    degenerate_patterns: o.DegeneratePatterns = None,
    long_answer_ratio: o.LongAnswerRatio = o.DEFAULT_LONG_ANSWER_RATIO,
    parquet: o.GradedParquet = False,
    lang: o.AnswerLang = o.DEFAULT_LANG,
    max_prompt_tokens: o.MaxPromptTokens = None,
    fit: o.Fit = o.DEFAULT_FIT,
    tokenizer: o.Tokenizer = None,
    chars_per_token: o.CharsPerToken = o.DEFAULT_CHARS_PER_TOKEN,
    max_answer_tokens: o.MaxAnswerTokens = o.DEFAULT_MAX_ANSWER_TOKENS,
    complete_cases: o.CompleteCases = False,
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
    """Generate answers, grade them and correlate retrieval measures with the grades (files in --out-dir:
    answers.jsonl, graded.json or with --parquet graded.parquet, correlation.json)."""
    config = o.client_config(
        model=model, base_url=base_url, cache_dir=cache_dir, cache=cache, workers=workers, seed=seed,
        temperature=temperature, max_retries=max_retries, timeout=timeout, rpm=rpm, tpm=tpm, prices=prices, batch=batch,
        batch_dir=batch_dir, batch_wait=batch_wait, batch_poll=batch_poll, batch_max_requests=batch_max_requests,
        batch_max_bytes=batch_max_bytes)
    answer = o.answer_settings(lang, max_prompt_tokens, fit, tokenizer, chars_per_token, max_answer_tokens)
    grading = o.grading_options(grade_mode, top_logprobs, keep_degenerate, degenerate_patterns, long_answer_ratio)
    with o.llm_run(config, o.engine_settings(engine, ray_address, ray_workers, gpus_per_worker, llm_backend)), \
            o.reading_of(fields, queries=queries_format).activate():
        from ragdiag.commands import pipeline as command

        request = command.PipelineRequest(
            out_dir=out_dir, config=config, ks=tuple(sorted(parse_ks(ks, "--ks"))), texts=texts, ranked=ranked,
            embedder=embedder, dataset=dataset.value, repeats=repeats, second_judge=second_judge, segments=segments.value,
            min_samples=min_samples, corpus=corpus, queries=queries, qrels=qrels, retrievers=tuple(retriever or ()),
            depth=depth, ideal_cap=ideal_cap, max_queries=max_queries, embed_base_url=embed_base_url, grading=grading,
            parquet=parquet, answer=answer, complete_cases=complete_cases, progress=progress)
        result = command.run(request)
        pipe = result.pipeline if isinstance(result, command.CorpusRunResult) else result
        try:  # the gate is checked before anything is printed: a verdict never shows as if it held
            command.check_coverage(pipe.graded.summary, min_coverage, pipe.graded.manifest_path)
            failure = None
        except command.CoverageError as err:
            failure = err
        if isinstance(result, command.CorpusRunResult):
            _render_corpus_run(result, out_dir, failure)
        else:
            _render_stages(pipe, failure)
            typer.echo(f"correlation written to {pipe.paths['correlation']} "
                       f"(same as: {pipe.pipeline_meta.equivalent_command})")
        if failure is not None:
            raise failure



def _render_stages(pipe: PipelineResult, failure: Exception | None = None) -> None:
    """The generate and grade summaries, then the correlation report (``failure``: the failed
    coverage gate, printed first, and the verdict withheld)."""
    from rich.console import Console

    from ragdiag.report.correlate_report import print_report

    render_summary("generate", pipe.generated.summary, {"answers": pipe.paths["answers"]})
    render_summary("grade", pipe.graded.summary, {"graded": pipe.paths["graded"]})
    if failure is not None:
        Console(stderr=True).print(f"ragdiag: coverage gate failed: {failure}", style="bold red", highlight=False)
    print_report(pipe.correlation, Console(), withheld=f"coverage gate failed ({failure})" if failure else None)


def _render_corpus_run(result: CorpusRunResult, out_dir: Path, failure: Exception | None = None) -> None:
    """What was ranked (stderr), the stages, and where the corpus run wrote."""
    meta = result.summary
    typer.echo(f"{meta.dataset}: {meta.queries.used} queries ({meta.queries.left_out} left out: more relevant "
               f"passages than --ideal-cap {meta.ideal_cap}), {meta.ranked_samples} ranked samples from "
               f"{len(meta.retrievers)} retrievers at depth {meta.depth}", err=True)
    _render_stages(result.pipeline, failure)
    if result.evaluation is not None:
        typer.echo(f"evaluate (graded qrels): {result.paths['evaluation']}")
    typer.echo(f"samples, runs and manifest in {out_dir} ({result.paths['manifest'].name})")
