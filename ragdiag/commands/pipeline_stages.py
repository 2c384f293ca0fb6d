"""The stages of ``ragdiag pipeline`` after the inputs are known: generate → grade → correlate, each
stage handed the previous one's objects in memory and writing its files through :mod:`ragdiag.io.writer`
(the write helpers of :mod:`ragdiag.commands.generate` and :mod:`ragdiag.commands.grade`); the
correlation is stamped with the pipeline's run record. A file this run wrote is never read back: the run
records name it with the size and sha256 of the bytes written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.answers.judging import GradingOptions
from ragdiag.answers.plan import AnswerSettings
from ragdiag.commands.llm_files import Written
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig

if TYPE_CHECKING:
    from ragdiag.data.graded_table import GradedTable
    from ragdiag.evaluate.evaluation import EvaluateParams
    from ragdiag.pipeline.end_to_end import PipelineResult
    from ragdiag.results.evaluate import EvaluateResult


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
    judges: list[str] = field(default_factory=list)  # set by run: the configured model, then --second-judge


@dataclass
class HeldSamples:
    """Samples this run built and wrote (``pipeline --corpus``), handed to the stages in memory."""

    texts: Loaded[TextsSample]
    ranked: Loaded[RankedSample]
    written: list[Written]



@dataclass
class CorpusRunConfig:
    """What ``pipeline --corpus`` ranks and how (the stages after ranking take a :class:`PipelineRequest`)."""

    corpus: Path
    retrievers: list[str]
    ks: list[int]
    out_dir: Path
    queries: Path | None = None
    qrels: Path | None = None
    depth: int | None = None
    ideal_cap: int = 10
    max_queries: int | None = None
    embed_base_url: str | None = None
    repeats: int = 1
    judges: list[str] | None = None
    segments: str = "ratio"
    min_samples: int = 300
    bootstrap: int = 1000
    grading: GradingOptions | None = None  # grade mode, reference gate
    answer: AnswerSettings | None = None  # --lang and the prompt budget
    complete_cases: bool = False  # correlate only the queries graded at every K



def run_stages(request: PipelineRequest, held: HeldSamples | None,
               notice: Callable[[str], None] | None) -> PipelineResult:
    """Check outputs and segments, then generate, grade and correlate; write and stamp each stage's files."""
    from ragdiag.answers.answers_file import AnswersFile
    from ragdiag.answers.runs import generate, grade, grade_prompt_versions
    from ragdiag.commands.answer_files import grade_record, load_samples, rank_with, write_answers, write_graded
    from ragdiag.commands.llm_files import local, manifest_path, open_record, stderr_notice
    from ragdiag.data.graded_parquet import check_graded_output, is_parquet
    from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import gate_prompts, run_correlation
    from ragdiag.metrics.segments import SEGMENTATIONS, segmentation_for
    from ragdiag.pipeline.end_to_end import PipelineResult, planned_rows
    from ragdiag.results.pipeline import PipelineMeta, StageGates

    out_dir, config, grading, settings = request.out_dir, request.config, request.grading, request.answer
    notice = notice or stderr_notice
    if request.segments not in SEGMENTATIONS:
        raise RagdiagError(f"--segments must be one of {', '.join(SEGMENTATIONS)}, got '{request.segments}'")
    check_output_dir(out_dir, "--out-dir")
    graded_name = "graded.parquet" if request.parquet else "graded.json"
    paths = {"answers": out_dir / "answers.jsonl", "graded": out_dir / graded_name,
             "correlation": out_dir / "correlation.json"}
    if request.embedder:
        paths["ranked"] = out_dir / "ranked.json"
    inputs: list[Any] = [] if held is not None else local([request.texts, request.ranked])
    guard_outputs([*paths.values(), manifest_path(paths["answers"]), manifest_path(paths["graded"])],
                  inputs + [w.path for w in (held.written if held else [])])
    check_graded_output(paths["graded"])
    assert request.texts is not None
    texts = held.texts if held is not None else load_texts(request.texts, request.dataset)
    ranked = held.ranked if held is not None else (
        load_ranked(request.ranked, request.dataset) if request.ranked is not None else None)
    segments, changed = segmentation_for(planned_rows(texts, ranked, request.embedder, list(request.ks)),
                                         request.segments, request.min_samples)
    if changed:
        notice(changed)
    judges = request.judges or [config.model]
    held_files = held.written if held is not None else []
    record = start_run("ragdiag pipeline", inputs=inputs, models={"llm": judges}, seeds={"llm": config.seed},
                       cache=config.cache)
    record.inputs.extend(dict(w.described()) for w in held_files)
    out_dir.mkdir(parents=True, exist_ok=True)
    gate = grading.gate()
    # generate: its own run record and manifest, the answers kept in memory for the judge
    generate_inputs: list[Any] = [request.texts, request.ranked] if held is None else []
    generate_record = open_record("generate", config, generate_inputs, settings.prompt_ids(), held=held_files)
    if request.embedder is not None:
        ranked, ranked_file = rank_with(texts, request.texts, request.embedder, list(request.ks), paths["ranked"],
                                        config, request.progress)
        samples = load_samples(texts, ranked)
        samples.inputs["ranked"] = {"ranked_with": request.embedder, "written_to": str(ranked_file.path)}
    else:
        assert ranked is not None
        samples = load_samples(texts, ranked)
    samples.ranked_source = str(request.ranked)
    answered = generate(samples, list(request.ks), request.dataset, config, gate, settings, request.progress, notice)
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
        table = graded_table(judged.graded, paths["graded"], gate)
    correlated = run_correlation(table, CorrelateOptions(segments=segments, min_samples=request.min_samples,
                                                         keep_degenerate=grading.keep_degenerate),
                                 complete_cases=request.complete_cases)
    record.prompts.update(gate_prompts(correlated))
    correlation = correlated.to_json()
    correlation["meta"]["pipeline"] = PipelineMeta(
        equivalent_command=correlate_command(paths["graded"], segments, request.min_samples, grading,
                                             request.complete_cases),
        generate_meta=generated.meta, grade_meta=graded.meta,
        reference_gate=StageGates(generate=generated.summary.reference_gate, grade=graded.summary.reference_gate),
    ).to_json()
    record.prompts.update({**{prompt.split("@")[0]: prompt for prompt in [*generated.meta.prompts, *graded.meta.prompts]},
                           gate.patterns.source.split("@")[0]: gate.patterns.source})
    write_json(paths["correlation"], stamp(correlation, record), inputs=inputs + [w.path for w in held_files])
    return PipelineResult(generated, graded, correlation, paths)


def graded_table(records: list[dict[str, Any]], path: Any, gate: Any) -> GradedTable:
    """The graded table of the rows just written to ``path`` (a JSON list), as ``correlate --graded PATH``
    would read it: the source named by path and the sha256 of the bytes written."""
    import hashlib

    from ragdiag.commands.llm_files import json_bytes
    from ragdiag.data.graded_table import GradedSource, build_graded_table
    from ragdiag.data.loaders import bundled_sample_path
    from ragdiag.io.files import file_sha256
    from ragdiag.io.jsonl import no_cyclic_gc

    sha256 = hashlib.sha256(json_bytes(records)).hexdigest()
    simulated = sha256 == file_sha256(bundled_sample_path()) or (
        bool(records) and all(r.get("simulated_grades") is True for r in records))
    source = GradedSource(name=str(path), sha256=sha256, simulated_grades=simulated)
    with no_cyclic_gc():
        return build_graded_table(records, str(path), source, gate)


def evaluate_held_runs(qrels_path: Path, runs: list[tuple[dict[str, list[str]], Written]],
                       params: EvaluateParams) -> EvaluateResult:
    """``ragdiag evaluate QRELS RUN…`` on the run files this run wrote, from their rankings in memory: the
    same result as :func:`ragdiag.evaluate.evaluation.evaluate_files` (run record: the qrels, then each run
    named by the size and sha256 of the bytes written)."""
    import time

    from ragdiag.evaluate.evaluation import check_params, evaluate_aligned
    from ragdiag.evaluate.inputs import AlignedRun, align_ids, load_graded_qrels
    from ragdiag.io.run_record import start_run

    check_params(params)
    record = start_run("ragdiag evaluate", inputs=[qrels_path], seeds={"bootstrap": params.seed})
    record.inputs.extend(dict(written.described()) for _, written in runs)
    started = time.perf_counter()
    qrels = load_graded_qrels(qrels_path)
    aligned: list[AlignedRun] = []
    for ids, written in runs:
        aligned.append(align_ids(ids, written.path, qrels, [r.name for r in aligned]))
    result, _rows = evaluate_aligned(qrels_path, qrels, aligned, params, started)
    result.run_record = record.to_json()
    return result


def correlate_command(graded: Path, segments: str, min_samples: int, grading: GradingOptions | None = None,
                      complete_cases: bool = False) -> str:
    """The ``ragdiag correlate`` command line that redoes the last stage (gate options and
    ``--complete-cases`` included when set)."""
    command = f"ragdiag correlate --graded {graded} --segments {segments} --min-samples {min_samples}"
    if grading is not None:
        command += "".join([" --keep-degenerate" if grading.keep_degenerate else "",
                            f" --degenerate-patterns {grading.degenerate_patterns}" if grading.degenerate_patterns else "",
                            f" --long-answer-ratio {grading.long_answer_ratio:g}"
                            if grading.long_answer_ratio != GradingOptions.long_answer_ratio else ""])
    return command + (" --complete-cases" if complete_cases else "")
