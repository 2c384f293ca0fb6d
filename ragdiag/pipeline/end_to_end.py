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
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.generate import GenerateResult, _stderr_line, run_generate
from ragdiag.pipeline.grade import GradeResult, run_grade
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import check_output_dir, guard_outputs, write_json
from ragdiag.pipeline.run_meta import manifest_path


@dataclass
class PipelineResult:
    generated: GenerateResult
    graded: GradeResult
    correlation: dict[str, Any]
    paths: dict[str, Path]


def correlate_command(graded: Path, segments: str, min_samples: int) -> str:
    """The ``ragdiag correlate`` command line that redoes the last stage."""
    return f"ragdiag correlate --graded {graded} --segments {segments} --min-samples {min_samples}"


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
                 min_samples: int = 300, progress: bool = True,
                 notice: Callable[[str], None] | None = None) -> PipelineResult:
    """Run every stage; the correlation uses the grades just written (null grades skipped and counted).

    Segment sizes are checked from the inputs before any model or LLM call: when every segment
    would be dropped, the run falls back to ``pooled`` (``notice`` says so) or stops at once."""
    from ragdiag.data.loaders import load_graded_file
    from ragdiag.metrics.analysis import CorrelateOptions
    from ragdiag.metrics.correlate_job import run_correlation

    from ragdiag.metrics.segments import SEGMENTATIONS, segmentation_for

    if segments not in SEGMENTATIONS:
        raise RagdiagError(f"--segments must be one of {', '.join(SEGMENTATIONS)}, got '{segments}'")
    check_output_dir(out_dir, "--out-dir")
    paths = {"answers": out_dir / "answers.jsonl", "graded": out_dir / "graded.json",
             "correlation": out_dir / "correlation.json"}
    if rank_with:
        paths["ranked"] = out_dir / "ranked.json"
    inputs = [p for p in (texts, ranked) if p is not None and not str(p).startswith("hf:")]
    guard_outputs([*paths.values(), manifest_path(paths["answers"]), manifest_path(paths["graded"])], inputs)
    segments, changed = segmentation_for(planned_rows(texts, ranked, rank_with, ks, dataset), segments, min_samples)
    if changed:
        (notice or _stderr_line)(changed)
    record = start_run("ragdiag pipeline", inputs=inputs, models={"llm": judges or [config.model]},
                       seeds={"llm": config.seed}, cache=config.cache)
    out_dir.mkdir(parents=True, exist_ok=True)
    generated = run_generate(texts, ranked, ks, dataset, paths["answers"], config, rank_with, paths.get("ranked"), progress)
    graded = run_grade(paths["answers"], paths["graded"], config, repeats, judges, progress)
    table = load_graded_file(paths["graded"])
    correlation = run_correlation(table, CorrelateOptions(segments=segments, min_samples=min_samples), record=record)
    correlation["meta"]["pipeline"] = {"command": "pipeline", "equivalent_command":
                                       correlate_command(paths["graded"], segments, min_samples),
                                       "generate_meta": generated.meta, "grade_meta": graded.meta}
    record.prompts.update({"generation": generated.meta["prompts"][0], "grading": graded.meta["prompts"][0],
                           "grading-repair": graded.meta["prompts"][1]})
    write_json(paths["correlation"], stamp(correlation, record), inputs=inputs)
    return PipelineResult(generated, graded, correlation, paths)
