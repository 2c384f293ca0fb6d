"""``ragdiag pipeline``: rank (optional) → generate → grade → correlate, into one output directory.

Files: ``answers.jsonl``, ``graded.json`` (samples_graded schema), their ``<name>.manifest.json``,
``ranked.json`` with ``--rank-with``, and ``correlation.json`` from
:func:`ragdiag.metrics.correlate_job.run_correlation` (the ``correlate`` job) on the graded file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.answer_plan import AnswerSettings
from ragdiag.pipeline.generate import GenerateResult, _stderr_line, run_generate
from ragdiag.pipeline.grade import GradeResult, GradingOptions, run_grade
from ragdiag.pipeline.run_meta import manifest_path


@dataclass
class PipelineResult:
    generated: GenerateResult
    graded: GradeResult
    correlation: dict[str, Any]
    paths: dict[str, Path]


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


def planned_rows(texts: str, ranked: str | None, rank_with: str | None, ks: list[int],
                 dataset: str) -> list[tuple[str, str, int, int]]:
    """(embedder, subset, K, Np) of every top-K row the run will grade, read from the inputs alone:
    ranking with an embedder gives one ranked sample per texts sample (Nc = |p| + |n|, Np = |p|)."""
    from ragdiag.data.schema import subset_of
    from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
    from ragdiag.pipeline.rank import EMBEDDER_CODES

    samples = load_texts(texts, dataset).samples
    if rank_with is not None:
        code = EMBEDDER_CODES.get(rank_with, rank_with)
        shapes = [(code, s.id, len(s.p) + len(s.n), len(s.p)) for s in samples]
    else:
        known = {s.id for s in samples}
        shapes = [(r.E, r.id, r.Nc, r.Np) for r in load_ranked(ranked, dataset).samples if r.id in known]
    return [(e, subset_of(sid), k, np_) for e, sid, nc, np_ in shapes for k in ks if k <= nc]


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
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import run_correlation
    from ragdiag.metrics.segments import SEGMENTATIONS, segmentation_for

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
        (notice or _stderr_line)(changed)
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
    correlation = run_correlation(table, CorrelateOptions(segments=segments, min_samples=min_samples,
                                                          keep_degenerate=grading.keep_degenerate), record=record,
                                  complete_cases=complete_cases)
    correlation["meta"]["pipeline"] = {"command": "pipeline", "equivalent_command":
                                       correlate_command(paths["graded"], segments, min_samples, grading,
                                                         complete_cases),
                                       "generate_meta": generated.meta, "grade_meta": graded.meta,
                                       "reference_gate": {"generate": generated.summary["reference_gate"],
                                                          "grade": graded.summary["reference_gate"]}}
    record.prompts.update({**{prompt.split("@")[0]: prompt for prompt in [*generated.meta["prompts"], *graded.meta["prompts"]]},
                           gate.patterns.source.split("@")[0]: gate.patterns.source})
    write_json(paths["correlation"], stamp(correlation, record), inputs=inputs)
    return PipelineResult(generated, graded, correlation, paths)
