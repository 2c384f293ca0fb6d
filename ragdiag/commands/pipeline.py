"""``ragdiag pipeline``: rank (optional) → generate → grade → correlate, into one output folder;
with ``--corpus``, your corpus, queries and qrels ranked by ``--retriever`` specs first (→ evaluate
when the qrels are graded).

:func:`run` checks the flags, the gate, the prompt settings, every path and the segment sizes before
any model or LLM call; the stages write through ``ragdiag.io.writer`` (``answers.jsonl``,
``graded.json`` or ``graded.parquet``, their manifests, ``ranked.json`` with ``--embedder``,
``correlation.json``; with ``--corpus`` also the samples, one run file per retriever,
``evaluation.json`` and ``corpus_run.json``), each JSON stamped with the run record. Library parts:
:mod:`ragdiag.pipeline.end_to_end`, :mod:`ragdiag.pipeline.corpus_run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.answer_plan import AnswerSettings
from ragdiag.pipeline.corpus_run import CorpusRunConfig, CorpusRunResult
from ragdiag.pipeline.end_to_end import PipelineResult
from ragdiag.pipeline.grade import GradingOptions
from ragdiag.pipeline.run_meta import CoverageError, check_coverage
from ragdiag.results.pipeline import CorpusRunManifest, CorpusRunMeta, PipelineMeta, QueryCounts, StageGates

__all__ = ["AnswerSettings", "ClientConfig", "CorpusRunConfig", "CorpusRunManifest", "CorpusRunMeta",
           "CorpusRunResult", "CoverageError", "GradingOptions", "PipelineMeta", "PipelineRequest", "PipelineResult",
           "check_corpus_flags", "check_coverage", "run", "run_corpus_pipeline", "run_pipeline"]


@dataclass
class PipelineRequest:
    """Every option of ``pipeline``, parsed (``ks`` sorted); ``corpus`` set = the corpus path."""

    out_dir: Path
    config: ClientConfig
    ks: tuple[int, ...]
    texts: str | None = None
    ranked: str | None = None
    embedder: str | None = None
    dataset: str = "all"
    repeats: int = 1
    second_judge: str | None = None
    segments: str = "ratio"
    min_samples: int = 300
    corpus: Path | None = None
    queries: Path | None = None
    qrels: Path | None = None
    retrievers: tuple[str, ...] = ()
    depth: int | None = None
    ideal_cap: int = 10
    max_queries: int | None = None
    embed_base_url: str | None = None
    grading: GradingOptions = field(default_factory=GradingOptions)
    parquet: bool = False
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    complete_cases: bool = False
    progress: bool = True


def check_corpus_flags(corpus: Path | None, retriever: list[str] | tuple[str, ...] | None, texts: str | None,
                       ranked: str | None, embedder: str | None) -> None:
    """--corpus and --texts are two different inputs; --retriever belongs to --corpus."""
    if corpus is None:
        if retriever:
            raise RagdiagError("--retriever needs --corpus (your corpus, queries and qrels)")
        if texts is None:
            raise RagdiagError("give --texts (with --ranked or --embedder), or --corpus with --retriever")
        return
    if texts is not None or ranked is not None or embedder is not None:
        raise RagdiagError("--corpus ranks your own corpus: it does not take --texts, --ranked or --embedder")
    if not retriever:
        raise RagdiagError("--corpus needs at least one --retriever, e.g. --retriever dense:local --retriever bm25")


def run(request: PipelineRequest) -> PipelineResult | CorpusRunResult:
    """Check everything, then run the texts/ranked path or the corpus path."""
    from ragdiag.commands.generate import check_ranking_source
    from ragdiag.io.paths import check_paths
    from ragdiag.pipeline.grade import judge_models

    check_corpus_flags(request.corpus, request.retrievers, request.texts, request.ranked, request.embedder)
    check_paths(inputs={"--degenerate-patterns": request.grading.degenerate_patterns})
    request.grading.gate()  # a bad patterns file or ratio stops here, before any call
    if request.corpus is not None:
        check_paths(folders={"--out-dir": request.out_dir, "--cache-dir": request.config.cache_dir})
        judges = judge_models(request.config, request.second_judge)
        cfg = CorpusRunConfig(corpus=request.corpus, retrievers=list(request.retrievers), ks=list(request.ks),
                              out_dir=request.out_dir, queries=request.queries, qrels=request.qrels,
                              depth=request.depth, ideal_cap=request.ideal_cap, max_queries=request.max_queries,
                              embed_base_url=request.embed_base_url, repeats=request.repeats, judges=judges,
                              segments=request.segments, min_samples=request.min_samples, grading=request.grading,
                              answer=request.answer, complete_cases=request.complete_cases)
        return run_corpus_pipeline(cfg, request.config, request.progress)
    check_ranking_source(request.ranked, request.embedder)
    check_paths(folders={"--out-dir": request.out_dir, "--cache-dir": request.config.cache_dir})
    judges = judge_models(request.config, request.second_judge)
    return run_pipeline(request.texts, request.ranked, request.embedder, list(request.ks), request.dataset,
                        request.out_dir, request.config, request.repeats, judges, request.segments,
                        request.min_samples, request.progress, request.grading,
                        graded_name="graded.parquet" if request.parquet else "graded.json", settings=request.answer,
                        complete_cases=request.complete_cases)


def run_pipeline(texts: str, ranked: str | None, rank_with: str | None, ks: list[int], dataset: str, out_dir: Path,
                 config: ClientConfig, repeats: int = 1, judges: list[str] | None = None, segments: str = "ratio",
                 min_samples: int = 300, progress: bool = True, grading: GradingOptions | None = None,
                 graded_name: str = "graded.json", settings: AnswerSettings | None = None,
                 complete_cases: bool = False, notice: Callable[[str], None] | None = None) -> PipelineResult:
    """Run every stage; the correlation uses the grades just written (null grades skipped and counted).

    ``graded_name`` ``graded.parquet`` writes the graded table as Parquet (read back columnar);
    ``settings``: the answers' language and prompt budget; ``complete_cases``: correlate only the
    queries graded at every K. Segment sizes are checked from the inputs before any model or LLM
    call: when every segment would be dropped, the run falls back to ``pooled`` (``notice`` says so)
    or stops at once."""
    from ragdiag.data.graded_parquet import check_graded_output
    from ragdiag.data.loaders import load_graded_file
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import gate_prompts, run_correlation
    from ragdiag.metrics.segments import SEGMENTATIONS, segmentation_for
    from ragdiag.pipeline.end_to_end import correlate_command, planned_rows
    from ragdiag.pipeline.generate import run_generate, stderr_notice
    from ragdiag.pipeline.grade import run_grade
    from ragdiag.pipeline.run_meta import manifest_path

    if segments not in SEGMENTATIONS:
        raise RagdiagError(f"--segments must be one of {', '.join(SEGMENTATIONS)}, got '{segments}'")
    check_output_dir(out_dir, "--out-dir")
    paths = {"answers": out_dir / "answers.jsonl", "graded": out_dir / graded_name,
             "correlation": out_dir / "correlation.json"}
    if rank_with:
        paths["ranked"] = out_dir / "ranked.json"
    inputs = [p for p in (texts, ranked) if p is not None and not str(p).startswith("hf:")]
    guard_outputs([*paths.values(), manifest_path(paths["answers"]), manifest_path(paths["graded"])], inputs)
    check_graded_output(paths["graded"])
    segments, changed = segmentation_for(planned_rows(texts, ranked, rank_with, ks, dataset), segments, min_samples)
    if changed:
        (notice or stderr_notice)(changed)
    record = start_run("ragdiag pipeline", inputs=inputs, models={"llm": judges or [config.model]},
                       seeds={"llm": config.seed}, cache=config.cache)
    out_dir.mkdir(parents=True, exist_ok=True)
    grading = grading or GradingOptions()
    gate = grading.gate()
    generated = run_generate(texts, ranked, ks, dataset, paths["answers"], config, rank_with, paths.get("ranked"), progress,
                             gate=gate, settings=settings)
    graded = run_grade(paths["answers"], paths["graded"], config, repeats, judges, progress, grading.grade_mode,
                       grading.top_logprobs, gate, grading.keep_degenerate, lang=settings.lang if settings else "auto")
    table = load_graded_file(paths["graded"], gate=gate)
    correlated = run_correlation(table, CorrelateOptions(segments=segments, min_samples=min_samples,
                                                         keep_degenerate=grading.keep_degenerate),
                                 complete_cases=complete_cases)
    record.prompts.update(gate_prompts(correlated))
    correlation = correlated.to_json()
    correlation["meta"]["pipeline"] = PipelineMeta(
        equivalent_command=correlate_command(paths["graded"], segments, min_samples, grading, complete_cases),
        generate_meta=generated.meta, grade_meta=graded.meta,
        reference_gate=StageGates(generate=generated.summary.reference_gate, grade=graded.summary.reference_gate),
    ).to_json()
    record.prompts.update({**{prompt.split("@")[0]: prompt for prompt in [*generated.meta.prompts, *graded.meta.prompts]},
                           gate.patterns.source.split("@")[0]: gate.patterns.source})
    write_json(paths["correlation"], stamp(correlation, record), inputs=inputs)
    return PipelineResult(generated, graded, correlation, paths)


def run_corpus_pipeline(cfg: CorpusRunConfig, config: ClientConfig, progress: bool = True) -> CorpusRunResult:
    """Rank, write the samples and runs, then generate → grade → correlate (→ evaluate)."""
    from ragdiag.data.qrels_runs import run_file_text
    from ragdiag.io.run_record import describe_input
    from ragdiag.io.writer import check_output_dir, guard_outputs, write_json, write_text
    from ragdiag.metrics.segments import segmentation_for
    from ragdiag.pipeline.corpus_inputs import load_corpus_data
    from ragdiag.pipeline.corpus_retrievers import CorpusRetrieval
    from ragdiag.pipeline.corpus_run import (
        RANKED_FILE,
        TEXTS_FILE,
        build_samples,
        check_config,
        planned_rows,
        safe_name,
    )
    from ragdiag.pipeline.generate import stderr_notice

    specs, depth = check_config(cfg)
    from ragdiag.remote.preflight import preflight

    preflight(embedders=[getattr(s, "embedder", None) for s in specs], embed_base_url=cfg.embed_base_url,
              llm_base_url=config.base_url, cache_mode=config.cache, embedder_flag="--retriever dense:")
    out_dir = check_output_dir(cfg.out_dir, "--out-dir")
    data = load_corpus_data(cfg.corpus, cfg.queries, cfg.qrels, cfg.max_queries)
    if depth > len(data.doc_ids):
        raise RagdiagError(f"retrieval depth {depth} is larger than the {len(data.doc_ids)} passages of {data.files['corpus']}")
    paths = {"texts": out_dir / TEXTS_FILE, "ranked": out_dir / RANKED_FILE, "manifest": out_dir / "corpus_run.json"}
    run_paths = {s.text: out_dir / "runs" / f"{safe_name(s.text)}.jsonl" for s in specs}
    guard_outputs([*paths.values(), *run_paths.values()], data.files.values())
    segments, changed = segmentation_for(planned_rows(data, specs, cfg.ks, depth, cfg.ideal_cap), cfg.segments,
                                         cfg.min_samples)
    if changed:
        stderr_notice(changed)
    retrieval = CorpusRetrieval(data.doc_texts, data.query_texts, config.cache_dir, cfg.embed_base_url, config.seed, progress)
    rankings = {s.text: retrieval.rank(s, depth) for s in specs}
    texts, ranked, skipped, short = build_samples(data, rankings, cfg.ks, depth, cfg.ideal_cap)
    if not texts:
        raise RagdiagError(f"every query has more relevant passages than --ideal-cap {cfg.ideal_cap}")
    inputs = list(data.files.values())
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(paths["texts"], texts, inputs=inputs)
    write_json(paths["ranked"], ranked, inputs=inputs)
    for spec in specs:
        run_ = {qid: [(data.doc_ids[r], s) for r, s in lists] for qid, lists in zip(data.query_ids, rankings[spec.text])}
        write_text(run_paths[spec.text], run_file_text(run_), inputs=inputs)
        paths[f"run {spec.text}"] = run_paths[spec.text]
    result = run_pipeline(str(paths["texts"]), str(paths["ranked"]), None, cfg.ks, "all", out_dir, config, cfg.repeats,
                          cfg.judges, segments, cfg.min_samples, progress, cfg.grading, settings=cfg.answer,
                          complete_cases=cfg.complete_cases)
    evaluation = None
    if data.graded:
        from ragdiag.evaluate.evaluation import EvaluateParams, evaluate_files
        from ragdiag.io.run_record import start_run

        evaluate_record = start_run("ragdiag evaluate", inputs=[data.files["qrels"], *run_paths.values()],
                                    seeds={"bootstrap": config.seed})
        evaluated, _rows = evaluate_files(data.files["qrels"], list(run_paths.values()),
                                          EvaluateParams(ks=tuple(cfg.ks), bootstrap=cfg.bootstrap, seed=config.seed),
                                          progress=progress)
        evaluated.run_record = evaluate_record.to_json()
        evaluation = evaluated.to_json()
        paths["evaluation"] = out_dir / "evaluation.json"
        write_json(paths["evaluation"], evaluation, inputs=inputs)
    meta = CorpusRunMeta(
        command="ragdiag pipeline --corpus", dataset=data.name, files={k: str(v) for k, v in data.files.items()},
        retrievers=[{"spec": s.text, "kind": s.kind} for s in specs], embedders=retrieval.identities,
        ks=cfg.ks, depth=depth, ideal_cap=cfg.ideal_cap,
        ideal="answer from all the query's relevant passages (qrels score > 0); queries with more than "
              f"ideal_cap = {cfg.ideal_cap} relevant passages are left out",
        nc="Nc counts all candidates of the query (relevant + every retriever's non-relevant hits); "
           "the retriever's own top-depth list comes first in rank, the rest follows in candidate order",
        short_lists_dropped=short,
        queries=QueryCounts(judged_with_relevant=len(data.query_ids), used=len(texts), left_out=len(skipped),
                            left_out_ids=skipped[:50], not_judged=data.unjudged_queries),
        ranked_samples=len(ranked), qrels_graded=data.graded,
        evaluate="run (graded qrels)" if evaluation is not None else "skipped: the qrels are binary",
        outputs={k: str(v) for k, v in {**paths, **result.paths}.items()})
    record = dict(result.correlation.get("run_record") or {})
    record["inputs"] = [describe_input(p) for p in inputs] + list(record.get("inputs", []))
    manifest = CorpusRunManifest(meta, record)
    write_json(paths["manifest"], manifest.to_json(), inputs=inputs)
    return CorpusRunResult(result, evaluation, manifest, {**paths, **result.paths})
