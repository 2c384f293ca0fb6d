"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

from ragdiag.cli import options as o
from ragdiag.io.lists import parse_ks
from ragdiag.report.llm_summary import render_summary


def generate(
    texts: o.Texts,
    out: Annotated[Path, o.retold(o.OutRequired, "Answers file (JSON lines); its manifest is OUT.manifest.json.")],
    ranked: o.Ranked = None,
    ks: o.Ks = o.DEFAULT_KS,
    dataset: o.DatasetOpt = o.Dataset.all,
    embedder: o.RankEmbedder = None,
    ranked_out: Annotated[Optional[Path], o.path_option(o.OUTPUT, "--ranked-out", "Where --embedder writes the ranked samples (default OUT-stem.ranked.json).")] = None,
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
) -> None:
    """Write one ideal answer per query and one top-K answer per (ranked sample, K); count degenerate answers
    (empty, refusal, prompt echo, question copy, too long) per kind."""
    config = o.client_config(
        model=model, base_url=base_url, cache_dir=cache_dir, cache=cache, workers=workers, seed=seed,
        temperature=temperature, max_retries=max_retries, timeout=timeout, rpm=rpm, tpm=tpm, prices=prices, batch=batch,
        batch_dir=batch_dir, batch_wait=batch_wait, batch_poll=batch_poll, batch_max_requests=batch_max_requests,
        batch_max_bytes=batch_max_bytes)
    answer = o.answer_settings(lang, max_prompt_tokens, fit, tokenizer, chars_per_token, max_answer_tokens)
    with o.llm_run(config, o.engine_settings(engine, ray_address, ray_workers, gpus_per_worker, llm_backend)):
        from ragdiag.commands import generate as command

        request = command.GenerateRequest(
            texts=texts, out=out, config=config, ks=tuple(sorted(parse_ks(ks, "--ks"))), ranked=ranked,
            dataset=dataset.value, embedder=embedder, ranked_out=ranked_out, degenerate_patterns=degenerate_patterns,
            long_answer_ratio=long_answer_ratio, answer=answer, progress=progress)
        result = command.run(request)
        render_summary("ragdiag generate", result.summary, {"answers": out, "manifest": result.manifest_path})
        command.check_coverage(result.summary, min_coverage, result.manifest_path)
