"""The stages of ``ragdiag pipeline`` after the inputs are known, as library parts that compute and
return (:mod:`ragdiag.commands.pipeline` writes their files and stamps their run records): the request,
the output paths, the samples and segments the run will use (checked before any call), the graded table
of rows held in memory, the correlation with its ``meta.pipeline`` block, and ``evaluate`` on the run
rankings held in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.answers.judging import GradingOptions
from ragdiag.answers.plan import AnswerSettings
from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig

if TYPE_CHECKING:
    from ragdiag.data.graded_table import GradedTable
    from ragdiag.evaluate.evaluation import EvaluateParams
    from ragdiag.results.correlate import CorrelateResult
    from ragdiag.results.evaluate import EvaluateResult
    from ragdiag.results.llm_run import RunMeta


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


@dataclass
class StageInputs:
    """The samples the stages start from and the segmentation the correlation will use."""

    texts: Loaded[TextsSample]
    ranked: Loaded[RankedSample] | None  # None: ranked with ``--embedder`` by the run
    segments: str


def stage_paths(request: PipelineRequest) -> dict[str, Path]:
    """The files the stages write into ``--out-dir`` (``ranked.json`` only with ``--embedder``)."""
    out_dir = request.out_dir
    paths = {"answers": out_dir / "answers.jsonl",
             "graded": out_dir / ("graded.parquet" if request.parquet else "graded.json"),
             "correlation": out_dir / "correlation.json"}
    if request.embedder:
        paths["ranked"] = out_dir / "ranked.json"
    return paths


def check_segments(segments: str) -> None:
    """``--segments`` names a known segmentation."""
    from ragdiag.metrics.segments import SEGMENTATIONS

    if segments not in SEGMENTATIONS:
        raise RagdiagError(f"--segments must be one of {', '.join(SEGMENTATIONS)}, got '{segments}'")


def stage_inputs(request: PipelineRequest, held: tuple[Loaded[TextsSample], Loaded[RankedSample]] | None,
                 notice: Callable[[str], None]) -> StageInputs:
    """The samples (``held`` in memory, else read from ``--texts`` / ``--ranked``) and the segmentation,
    checked from the samples before any model or LLM call: when every segment would be dropped, the run
    falls back to ``pooled`` (``notice`` says so) or stops at once."""
    from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
    from ragdiag.metrics.segments import segmentation_for
    from ragdiag.pipeline.end_to_end import planned_rows

    assert request.texts is not None
    ranked: Loaded[RankedSample] | None
    if held is not None:
        texts, ranked = held
    else:
        texts = load_texts(request.texts, request.dataset)
        ranked = load_ranked(request.ranked, request.dataset) if request.ranked is not None else None
    segments, changed = segmentation_for(planned_rows(texts, ranked, request.embedder, list(request.ks)),
                                         request.segments, request.min_samples)
    if changed:
        notice(changed)
    return StageInputs(texts, ranked, segments)


def graded_table(records: list[dict[str, Any]], path: Path, sha256: str, gate: Any) -> GradedTable:
    """The graded table of the rows just written to ``path`` (a JSON list whose bytes have ``sha256``),
    as ``correlate --graded PATH`` would read it."""
    from ragdiag.data.graded_table import GradedSource, build_graded_table
    from ragdiag.data.loaders import bundled_sample_path
    from ragdiag.io.files import file_sha256
    from ragdiag.io.jsonl import no_cyclic_gc

    simulated = sha256 == file_sha256(bundled_sample_path()) or (
        bool(records) and all(r.get("simulated_grades") is True for r in records))
    source = GradedSource(name=str(path), sha256=sha256, simulated_grades=simulated)
    with no_cyclic_gc():
        return build_graded_table(records, str(path), source, gate)


def correlate_stage(table: GradedTable, segments: str, request: PipelineRequest) -> CorrelateResult:
    """The last stage: ``correlate`` on the graded table in memory."""
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import run_correlation

    options = CorrelateOptions(segments=segments, min_samples=request.min_samples,
                               keep_degenerate=request.grading.keep_degenerate)
    return run_correlation(table, options, complete_cases=request.complete_cases)


def correlation_document(correlated: CorrelateResult, graded_path: Path, segments: str, request: PipelineRequest,
                         generated: RunMeta, graded: RunMeta, gates: tuple[Any, Any]) -> dict[str, Any]:
    """``correlation.json`` before stamping: the correlation with ``meta.pipeline`` linking the stages
    (the command that redoes the last one, both stages' metas and reference-gate counts)."""
    from ragdiag.results.pipeline import PipelineMeta, StageGates

    correlation = correlated.to_json()
    correlation["meta"]["pipeline"] = PipelineMeta(
        equivalent_command=correlate_command(graded_path, segments, request.min_samples, request.grading,
                                             request.complete_cases),
        generate_meta=generated, grade_meta=graded,
        reference_gate=StageGates(generate=gates[0], grade=gates[1]),
    ).to_json()
    return correlation


def run_prompts(correlated: CorrelateResult, prompts: list[str], gate_source: str) -> dict[str, str]:
    """The prompt versions the pipeline's run record names: the correlation's gate, every stage's prompts
    (name → ``name@version``) and the gate's patterns."""
    from ragdiag.metrics.correlate_job import gate_prompts

    return {**gate_prompts(correlated), **{prompt.split("@")[0]: prompt for prompt in prompts},
            gate_source.split("@")[0]: gate_source}


def evaluate_runs(qrels_path: Path, runs: list[tuple[dict[str, list[str]], Path]],
                  params: EvaluateParams) -> EvaluateResult:
    """``ragdiag evaluate QRELS RUN…`` on run rankings held in memory (each named by the path it was
    written to): the same result as :func:`ragdiag.evaluate.evaluation.evaluate_files`, without its
    run record (the caller adds it)."""
    import time

    from ragdiag.evaluate.evaluation import check_params, evaluate_aligned
    from ragdiag.evaluate.inputs import AlignedRun, align_ids, load_graded_qrels

    check_params(params)
    started = time.perf_counter()
    qrels = load_graded_qrels(qrels_path)
    aligned: list[AlignedRun] = []
    for ids, path in runs:
        aligned.append(align_ids(ids, path, qrels, [r.name for r in aligned]))
    result, _rows = evaluate_aligned(qrels_path, qrels, aligned, params, started)
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
