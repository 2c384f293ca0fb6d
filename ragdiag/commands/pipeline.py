"""``ragdiag pipeline``: rank (optional) → generate → grade → correlate, into one output folder;
with ``--corpus``, your corpus, queries and qrels ranked by ``--retriever`` specs first (→ evaluate
when the qrels are graded).

:func:`run` checks the flags, the gate, the prompt settings, every path and the segment sizes before
any model or LLM call, then runs the stages, handing each the previous stage's objects in memory (the
samples, the answers, the graded rows: a stage never reads back a file this run wrote; a file's size
and sha256 for the run record come from the bytes written, :class:`ragdiag.commands.llm_files.Written`).
Every file goes through ``ragdiag.io.writer`` (``answers.jsonl``, ``graded.json`` or ``graded.parquet``,
their manifests, ``ranked.json`` with ``--embedder``, ``correlation.json``; with ``--corpus`` also the
samples, one run file per retriever, ``evaluation.json`` and ``corpus_run.json``), each JSON stamped
with the run record. Engine: :mod:`ragdiag.answers`; library parts: :mod:`ragdiag.pipeline.stages`,
:mod:`ragdiag.pipeline.end_to_end`, :mod:`ragdiag.pipeline.corpus_run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.answers.judging import GradingOptions
from ragdiag.answers.plan import AnswerSettings
from ragdiag.commands.llm_files import Written
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.corpus_run import CorpusRunResult
from ragdiag.pipeline.end_to_end import PipelineResult
from ragdiag.pipeline.run_meta import CoverageError, check_coverage
from ragdiag.pipeline.stages import CorpusRunConfig, PipelineRequest
from ragdiag.results.pipeline import CorpusRunManifest, CorpusRunMeta, PipelineMeta, QueryCounts

__all__ = ["AnswerSettings", "ClientConfig", "CorpusRunConfig", "CorpusRunManifest", "CorpusRunMeta",
           "CorpusRunResult", "CoverageError", "GradingOptions", "PipelineMeta", "PipelineRequest", "PipelineResult",
           "HeldSamples", "check_corpus_flags", "check_coverage", "run", "run_corpus_pipeline", "run_pipeline"]


@dataclass
class HeldSamples:
    """Samples this run built and wrote (``pipeline --corpus``), handed to the stages in memory."""

    texts: Loaded[TextsSample]
    ranked: Loaded[RankedSample]
    written: list[Written]


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
    from ragdiag.answers.judging import judge_models
    from ragdiag.commands.answer_files import check_ranking_source
    from ragdiag.io.paths import check_paths

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
    request.judges = judge_models(request.config, request.second_judge)
    return run_pipeline(request)


def run_pipeline(request: PipelineRequest, held: HeldSamples | None = None,
                 notice: Callable[[str], None] | None = None) -> PipelineResult:
    """Run every stage; the correlation uses the grades just computed (null grades skipped and counted).

    ``request.parquet`` writes the graded table as Parquet; ``request.answer``: the answers' language and
    prompt budget; ``request.complete_cases``: correlate only the queries graded at every K. ``held``: the
    samples already in memory (``--corpus``), else read from ``request.texts`` / ``request.ranked``. Segment
    sizes are checked from the samples before any model or LLM call: when every segment would be dropped,
    the run falls back to ``pooled`` (``notice`` says so) or stops at once. Each stage's files are written
    and stamped here, from the objects the library returns."""
    import hashlib

    from ragdiag.answers.answers_file import AnswersFile
    from ragdiag.answers.runs import generate, grade, grade_prompt_versions
    from ragdiag.commands.answer_files import grade_record, load_samples, rank_with, write_answers, write_graded
    from ragdiag.commands.llm_files import json_bytes, local, manifest_path, open_record, stderr_notice
    from ragdiag.data.graded_parquet import check_graded_output, is_parquet
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
    from ragdiag.pipeline import stages

    out_dir, config, grading, settings = request.out_dir, request.config, request.grading, request.answer
    stages.check_segments(request.segments)
    check_output_dir(out_dir, "--out-dir")
    paths = stages.stage_paths(request)
    held_files = held.written if held is not None else []
    inputs: list[Any] = [] if held is not None else local([request.texts, request.ranked])
    guard_outputs([*paths.values(), manifest_path(paths["answers"]), manifest_path(paths["graded"])],
                  inputs + [w.path for w in held_files])
    check_graded_output(paths["graded"])
    start = stages.stage_inputs(request, (held.texts, held.ranked) if held is not None else None,
                                notice or stderr_notice)
    judges = request.judges or [config.model]
    record = start_run("ragdiag pipeline", inputs=inputs, models={"llm": judges}, seeds={"llm": config.seed},
                       cache=config.cache)
    record.inputs.extend(dict(w.described()) for w in held_files)
    out_dir.mkdir(parents=True, exist_ok=True)
    gate = grading.gate()
    # generate: its own run record and manifest, the answers kept in memory for the judge
    generate_inputs: list[Any] = [request.texts, request.ranked] if held is None else []
    generate_record = open_record("generate", config, generate_inputs, settings.prompt_ids(), held=held_files)
    if request.embedder is not None:
        assert request.texts is not None
        ranked, ranked_file = rank_with(start.texts, request.texts, request.embedder, list(request.ks),
                                        paths["ranked"], config, request.progress)
        samples = load_samples(start.texts, ranked)
        samples.inputs["ranked"] = {"ranked_with": request.embedder, "written_to": str(ranked_file.path)}
    else:
        assert start.ranked is not None
        samples = load_samples(start.texts, start.ranked)
    samples.ranked_source = str(request.ranked)
    answered = generate(samples, list(request.ks), request.dataset, config, gate, settings, request.progress,
                        notice or stderr_notice)
    generated = write_answers(paths["answers"], manifest_path(paths["answers"]), answered, generate_record,
                              generate_inputs + [w.path for w in held_files])
    assert generated.written is not None
    answers_file: Written = generated.written
    # grade: the answers as generate holds them (checked as the file would be)
    answers = AnswersFile.from_rows(answered.meta.to_json(), answered.rows, paths["answers"])
    prompts = dict(grade_prompt_versions(answers, grading.grade_mode, settings.lang))
    grade_run_record = grade_record(config, prompts, judges, gate.patterns.source, [], held=[answers_file])
    judged = grade(answers, paths["answers"], answers_file.sha256, config, judges, request.repeats, gate,
                   grading.grade_mode, grading.top_logprobs, grading.keep_degenerate, True, settings.lang,
                   request.progress)
    graded = write_graded(paths["graded"], manifest_path(paths["graded"]), judged, grade_run_record,
                          [answers_file.path])
    # correlate: the graded rows in memory (a Parquet table is read columnar, as correlate reads it)
    if is_parquet(paths["graded"]):
        from ragdiag.data.loaders import load_graded_file

        table = load_graded_file(paths["graded"], gate=gate)
    else:
        sha256 = hashlib.sha256(json_bytes(judged.graded)).hexdigest()
        table = stages.graded_table(judged.graded, paths["graded"], sha256, gate)
    correlated = stages.correlate_stage(table, start.segments, request)
    correlation = stages.correlation_document(
        correlated, paths["graded"], start.segments, request, generated.meta, graded.meta,
        (generated.summary.reference_gate, graded.summary.reference_gate))
    record.prompts.update(stages.run_prompts(correlated, [*generated.meta.prompts, *graded.meta.prompts],
                                             gate.patterns.source))
    write_json(paths["correlation"], stamp(correlation, record), inputs=inputs + [w.path for w in held_files])
    return PipelineResult(generated, graded, correlation, paths)


def run_corpus_pipeline(cfg: CorpusRunConfig, config: ClientConfig, progress: bool = True) -> CorpusRunResult:
    """Rank, write the samples and runs, then generate → grade → correlate (→ evaluate) on the samples in memory."""
    from ragdiag.commands.llm_files import json_bytes, jsonl_bytes, stderr_notice, write_held
    from ragdiag.io.run_record import describe_input
    from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
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

    specs, depth = check_config(cfg.retrievers, cfg.ks, cfg.depth, cfg.ideal_cap)
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
    texts_file = write_held(paths["texts"], json_bytes(texts), inputs)
    ranked_file = write_held(paths["ranked"], json_bytes(ranked), inputs)
    held = HeldSamples(
        Loaded([TextsSample.from_json(r, str(paths["texts"]), i) for i, r in enumerate(texts, start=1)],
               str(paths["texts"]), texts_file.sha256),
        Loaded([RankedSample.from_json(r, str(paths["ranked"]), i) for i, r in enumerate(ranked, start=1)],
               str(paths["ranked"]), ranked_file.sha256),
        [texts_file, ranked_file])
    runs: dict[str, tuple[dict[str, list[str]], Written]] = {}
    for spec in specs:
        run_ = {qid: [(data.doc_ids[r], s) for r, s in lists] for qid, lists in zip(data.query_ids, rankings[spec.text])}
        rows = [{"query_id": q, "ids": [d for d, _ in p], "scores": [float(x) for _, x in p]} for q, p in run_.items()]
        runs[spec.text] = ({q: [d for d, _ in p] for q, p in run_.items()},
                           write_held(run_paths[spec.text], jsonl_bytes(rows), inputs))  # as data.qrels_runs.write_run
        paths[f"run {spec.text}"] = run_paths[spec.text]
    request = PipelineRequest(out_dir=out_dir, config=config, ks=tuple(cfg.ks), texts=str(paths["texts"]),
                              ranked=str(paths["ranked"]), repeats=cfg.repeats, segments=segments,
                              min_samples=cfg.min_samples, grading=cfg.grading or GradingOptions(),
                              answer=cfg.answer or AnswerSettings(), complete_cases=cfg.complete_cases,
                              progress=progress, judges=list(cfg.judges or [config.model]))
    result = run_pipeline(request, held)
    evaluation = None
    if data.graded:
        from ragdiag.evaluate.evaluation import EvaluateParams
        from ragdiag.io.run_record import start_run
        from ragdiag.pipeline.stages import evaluate_runs

        params = EvaluateParams(ks=tuple(cfg.ks), bootstrap=cfg.bootstrap, seed=config.seed)
        # the run record of ``ragdiag evaluate QRELS RUN…``: the qrels, then each run named by the bytes written
        evaluate_record = start_run("ragdiag evaluate", inputs=[data.files["qrels"]], seeds={"bootstrap": params.seed})
        evaluate_record.inputs.extend(dict(written.described()) for _, written in runs.values())
        evaluated = evaluate_runs(data.files["qrels"], [(ids, written.path) for ids, written in runs.values()], params)
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
