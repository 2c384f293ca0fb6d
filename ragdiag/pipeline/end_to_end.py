"""The library parts of ``ragdiag pipeline`` (run by :mod:`ragdiag.commands.pipeline`): the top-K
rows a run will grade (known from the inputs, before any call), the ``correlate`` command that redoes
its last stage, and the result: ``answers.jsonl``, ``graded.json``, their manifests, and
``correlation.json`` whose ``meta.pipeline`` block (:class:`PipelineMeta`) links the stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.pipeline.generate import GenerateResult
from ragdiag.pipeline.grade import GradeResult, GradingOptions
from ragdiag.results.pipeline import PipelineMeta


@dataclass
class PipelineResult:
    """The three stages' results; ``correlation`` is the document written to ``correlation.json``
    (the correlate job's result with ``meta.pipeline`` = :attr:`pipeline_meta`)."""

    generated: GenerateResult
    graded: GradeResult
    correlation: dict[str, Any]
    paths: dict[str, Path]

    @property
    def pipeline_meta(self) -> PipelineMeta:
        return PipelineMeta.from_json(self.correlation["meta"]["pipeline"])

    def to_json(self) -> dict[str, Any]:
        """``correlation.json`` as written."""
        return self.correlation


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
