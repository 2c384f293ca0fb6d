"""``ragdiag grade``: an LLM judge grades top-K answers against ideal answers (samples_graded schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragdiag.cli import options as o
from ragdiag.report.llm_summary import render_summary


def grade(
    answers: o.Answers,
    out: Annotated[Path, o.retold(o.OutRequired, "Graded samples (samples_graded schema): a JSON list, or Parquet when the name ends in .parquet (needs pyarrow); its manifest is OUT.manifest.json.")],
    repeats: o.Repeats = o.DEFAULT_REPEATS,
    second_judge: o.SecondJudge = None,
    grade_mode: o.GradeModeOpt = o.GradeMode.digit,
    top_logprobs: o.TopLogprobs = o.DEFAULT_TOP_LOGPROBS,
    keep_degenerate: o.KeepDegenerate = False,
    degenerate_patterns: o.DegeneratePatterns = None,
    long_answer_ratio: o.LongAnswerRatio = o.DEFAULT_LONG_ANSWER_RATIO,
    no_retry_unparsed: Annotated[bool, o.option(
        o.LLM, "--no-retry-unparsed",
        help="Keep the cached judge replies that held no grade (prose, {\"grade\": NaN}, a logprob reply without a digit) instead of asking them "
             "again; by default a rerun asks them again (the summary counts them), never a reply that parsed.")] = False,
    lang: o.GradeLang = o.DEFAULT_LANG,
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
) -> None:
    """Grade each top-K answer 1-5 against the ideal answer; missing grades are null, never defaulted.

    Rows whose ideal answer is degenerate (empty, a refusal, an echo of the prompt, a copy of the
    question, far longer than the median) are not sent to the judge unless --keep-degenerate.
    """
    config = o.client_config(
        model=model, base_url=base_url, cache_dir=cache_dir, cache=cache, workers=workers, seed=seed,
        temperature=temperature, max_retries=max_retries, timeout=timeout, rpm=rpm, tpm=tpm, prices=prices, batch=batch,
        batch_dir=batch_dir, batch_wait=batch_wait, batch_poll=batch_poll, batch_max_requests=batch_max_requests,
        batch_max_bytes=batch_max_bytes)
    grading = o.grading_options(grade_mode, top_logprobs, keep_degenerate, degenerate_patterns, long_answer_ratio)
    with o.llm_run(config, o.engine_settings(engine, ray_address, ray_workers, gpus_per_worker, llm_backend)):
        from ragdiag.commands import grade as command

        request = command.GradeRequest(answers=answers, out=out, config=config, repeats=repeats, second_judge=second_judge,
                                       grading=grading, retry_unparsed=not no_retry_unparsed, lang=lang.value,
                                       progress=progress)
        result = command.run(request)
        if result.summary.retried_unparsed:
            typer.echo(f"retried {result.summary.retried_unparsed} item(s) whose cached judge reply held no grade "
                       "(--no-retry-unparsed keeps them)", err=True)
        render_summary("ragdiag grade", result.summary, {"graded": out, "manifest": result.manifest_path})
        command.check_coverage(result.summary, min_coverage, result.manifest_path)
