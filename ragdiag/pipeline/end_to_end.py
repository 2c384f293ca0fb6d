"""The library parts of ``ragdiag pipeline`` (run by :mod:`ragdiag.commands.pipeline`): the top-K
rows a run will grade (known from the inputs, before any call), the ``correlate`` command that redoes
its last stage (:func:`ragdiag.pipeline.stages.correlate_command`), and the result: ``answers.jsonl``, ``graded.json``, their manifests, and
``correlation.json`` whose ``meta.pipeline`` block (:class:`PipelineMeta`) links the stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.data.schema import RankedSample, TextsSample
from ragdiag.data.texts_ranked_loaders import Loaded
from ragdiag.pipeline.run_meta import LLMRunResult
from ragdiag.results.pipeline import PipelineMeta


@dataclass
class PipelineResult:
    """The three stages' results; ``correlation`` is the document written to ``correlation.json``
    (the correlate job's result with ``meta.pipeline`` = :attr:`pipeline_meta`)."""

    generated: LLMRunResult  # ragdiag.commands.generate.GenerateResult
    graded: LLMRunResult  # ragdiag.commands.grade.GradeResult
    correlation: dict[str, Any]
    paths: dict[str, Path]

    @property
    def pipeline_meta(self) -> PipelineMeta:
        return PipelineMeta.from_json(self.correlation["meta"]["pipeline"])

    def to_json(self) -> dict[str, Any]:
        """``correlation.json`` as written."""
        return self.correlation


def planned_rows(texts: Loaded[TextsSample], ranked: Loaded[RankedSample] | None, rank_with: str | None,
                 ks: list[int]) -> list[tuple[str, str, int, int]]:
    """(embedder, subset, K, Np) of every top-K row the run will grade, known from the samples alone:
    ranking with an embedder gives one ranked sample per texts sample (Nc = |p| + |n|, Np = |p|)."""
    from ragdiag.data.schema import subset_of
    from ragdiag.pipeline.rank import EMBEDDER_CODES

    samples = texts.samples
    if rank_with is not None or ranked is None:
        code = EMBEDDER_CODES.get(rank_with or "", rank_with or "")
        shapes = [(code, s.id, len(s.p) + len(s.n), len(s.p)) for s in samples]
    else:
        known = {s.id for s in samples}
        shapes = [(r.E, r.id, r.Nc, r.Np) for r in ranked.samples if r.id in known]
    return [(e, subset_of(sid), k, np_) for e, sid, nc, np_ in shapes for k in ks if k <= nc]
