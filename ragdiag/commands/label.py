"""``ragdiag label``: check every path before the pool is embedded and judged, then pool, judge,
prune and write the graded qrels, the refined orders and the manifest (all through the writer,
the manifest stamped with the run record)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdiag.evaluate.plackett_luce import RefineParams
from ragdiag.io.paths import check_paths
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.label import LabelOptions, LabelResult, refined_output, run_label
from ragdiag.pipeline.run_meta import check_coverage

__all__ = ["ClientConfig", "LabelRequest", "RefineParams", "check_coverage", "refined_output", "run"]


@dataclass
class LabelRequest:
    corpus: Path
    queries: Path
    out: Path
    config: ClientConfig
    pool: str = "dense:local,bm25"
    pool_depth: int = 50
    repeats: int = 1
    min_per_query: int | None = None
    max_queries: int | None = None
    refine: RefineParams | None = None  # None: no listwise refinement
    human: Path | None = None
    progress: bool = True


def run(request: LabelRequest) -> LabelResult:
    """Check the paths (before any paid call), then label; the manifest carries the run record."""
    check_paths(inputs={"--corpus": request.corpus, "--queries": request.queries, "--human": request.human},
                outputs={"--out": request.out}, folders={"--cache-dir": request.config.cache_dir})
    opts = LabelOptions(request.corpus, request.queries, request.out, request.pool, request.pool_depth, request.repeats,
                        request.min_per_query, request.human, request.refine, request.max_queries)
    return run_label(opts, request.config, request.progress)
