"""``ragdiag label``: check every path before the pool is embedded and judged, then pool, judge,
prune and write the graded qrels, the refined orders and the manifest (all through the writer,
the manifest stamped with the run record)."""

from __future__ import annotations

from dataclasses import dataclass

from ragdiag.evaluate.plackett_luce import RefineParams
from ragdiag.io.paths import check_paths
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.label import LabelOptions, LabelResult, refined_output, run_label
from ragdiag.pipeline.run_meta import check_coverage

__all__ = ["ClientConfig", "LabelOptions", "LabelRequest", "RefineParams", "check_coverage", "refined_output", "run"]


@dataclass
class LabelRequest:
    """What to label (:class:`LabelOptions`: corpus, queries, pool, refinement, ``--out``) and the LLM client."""

    options: LabelOptions
    config: ClientConfig
    progress: bool = True


def run(request: LabelRequest) -> LabelResult:
    """Check the paths (before any paid call), then label; the manifest carries the run record."""
    opts = request.options
    check_paths(inputs={"--corpus": opts.corpus, "--queries": opts.queries, "--human": opts.human},
                outputs={"--out": opts.out}, folders={"--cache-dir": request.config.cache_dir})
    return run_label(opts, request.config, request.progress)
