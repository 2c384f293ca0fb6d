"""``ragdiag pipeline``: rank → generate → grade → correlate in one command (``--corpus``: your own
corpus, queries and qrels ranked by ``--retriever`` specs, see :mod:`ragdiag.cli.corpus_pipeline`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ragdiag.cli import answer_options as ao
from ragdiag.cli import corpus_pipeline as cp
from ragdiag.cli import params as p
from ragdiag.cli.generate import check_ranking_source
from ragdiag.cli.llm_options import llm_command, render_summary

if TYPE_CHECKING:
    from ragdiag.llm.client import ClientConfig


@llm_command
def pipeline(
    out_dir: p.OutDir,
    texts: Annotated[Optional[str], typer.Option("--texts", help="Texts samples: JSON/JSONL file, hub-layout folder, or hf:[REPO] (or rank your own corpus with --corpus).", metavar=p.TEXT)] = None,
    ranked: p.Ranked = None,
    embedder: p.RankEmbedder = None,
    ks: p.Ks = p.DEFAULT_KS,
    dataset: p.DatasetOpt = p.Dataset.all,
    repeats: p.Repeats = p.DEFAULT_REPEATS,
    second_judge: p.SecondJudge = None,
    segments: p.Segments = p.Segmentation.ratio,
    min_samples: p.MinSamples = p.DEFAULT_MIN_SAMPLES,
    corpus: cp.CorpusOpt = None,
    queries: cp.QueriesOpt = None,
    qrels: cp.QrelsOpt = None,
    retriever: cp.RetrieverOpt = None,
    depth: cp.DepthOpt = None,
    ideal_cap: cp.IdealCapOpt = 10,
    max_queries: cp.MaxQueriesOpt = None,
    embed_base_url: cp.EmbedBaseUrlOpt = None,
    grade_mode: p.GradeModeOpt = p.GradeMode.digit,
    top_logprobs: p.TopLogprobs = p.DEFAULT_TOP_LOGPROBS,
    keep_degenerate: p.KeepDegenerate = False,
    degenerate_patterns: p.DegeneratePatterns = None,
    long_answer_ratio: p.LongAnswerRatio = p.DEFAULT_LONG_ANSWER_RATIO,
    parquet: p.GradedParquet = False,
    lang: ao.AnswerLang = ao.DEFAULT_LANG,
    max_prompt_tokens: ao.MaxPromptTokens = None,
    fit: ao.Fit = ao.DEFAULT_FIT,
    tokenizer: ao.Tokenizer = None,
    chars_per_token: ao.CharsPerToken = ao.DEFAULT_CHARS_PER_TOKEN,
    complete_cases: ao.CompleteCases = False,
    *,
    config: ClientConfig,
    min_coverage: float,
    progress: bool,
) -> None:
    """Generate answers, grade them and correlate retrieval measures with the grades (files in --out-dir:
    answers.jsonl, graded.json or with --parquet graded.parquet, correlation.json)."""
    from rich.console import Console

    from ragdiag.io.lists import parse_ks
    from ragdiag.io.paths import check_paths
    from ragdiag.pipeline.end_to_end import GradingOptions, run_pipeline
    from ragdiag.pipeline.grade import judge_models
    from ragdiag.pipeline.run_meta import check_coverage
    from ragdiag.report.correlate_report import print_report

    cp.check_corpus_flags(corpus, retriever, texts, ranked, embedder)
    check_paths(inputs={"--degenerate-patterns": degenerate_patterns})
    grading = GradingOptions(grade_mode.value, top_logprobs, degenerate_patterns, long_answer_ratio, keep_degenerate)
    grading.gate()  # a bad patterns file or ratio stops here, before any call
    settings = ao.answer_settings(lang, max_prompt_tokens, fit, tokenizer, chars_per_token)
    if corpus is not None:
        check_paths(folders={"--out-dir": out_dir, "--cache-dir": config.cache_dir})
        cp.corpus_pipeline(corpus, queries, qrels, retriever, sorted(parse_ks(ks, "--ks")), out_dir, depth, ideal_cap, max_queries,
                           embed_base_url, repeats, judge_models(config, second_judge), segments.value, min_samples,
                           config, min_coverage, progress, grading, settings, complete_cases)
        return
    check_ranking_source(ranked, embedder)
    check_paths(folders={"--out-dir": out_dir, "--cache-dir": config.cache_dir})
    result = run_pipeline(texts, ranked, embedder, sorted(parse_ks(ks, "--ks")), dataset.value, out_dir, config, repeats,
                          judge_models(config, second_judge), segments.value, min_samples, progress, grading,
                          graded_name="graded.parquet" if parquet else "graded.json", settings=settings,
                          complete_cases=complete_cases)
    render_summary("generate", result.generated.summary, {"answers": result.paths["answers"]})
    render_summary("grade", result.graded.summary, {"graded": result.paths["graded"]})
    print_report(result.correlation, Console())
    typer.echo(f"correlation written to {result.paths['correlation']} "
               f"(same as: {result.correlation['meta']['pipeline']['equivalent_command']})")
    check_coverage(result.graded.summary, min_coverage, result.graded.manifest)
