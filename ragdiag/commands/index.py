"""``ragdiag index build``: embed a BEIR corpus (cached) into a dense index and a BM25 index saved in
an index folder.

:func:`run` checks the paths (named by their flag) and every option before the corpus is read, then
builds the indexes (:func:`ragdiag.retrieval.store.build_indexes`), saves them
(:func:`~ragdiag.retrieval.store.save_index_folder`) and writes ``manifest.json`` stamped with the run
record, every file through :mod:`ragdiag.io.writer`; it returns the manifest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import stamp, start_run
from ragdiag.io.writer import write_json
from ragdiag.results.index import IndexBuildResult
from ragdiag.retrieval.store import (
    MANIFEST,
    BuildOptions,
    build_indexes,
    check_build_options,
    manifest_of,
    save_index_folder,
)

__all__ = ["IndexBuildRequest", "IndexBuildResult", "run"]


@dataclass
class IndexBuildRequest(BuildOptions):
    """Every option of ``ragdiag index build`` (``out`` is the index folder)."""

    progress: bool = False


def run(request: IndexBuildRequest) -> IndexBuildResult:
    """Check, build, save, write the manifest; the manifest."""
    start = time.perf_counter()
    check_paths(inputs={"--corpus": request.corpus}, folders={"--out-dir": request.out, "--cache-dir": request.cache_dir})
    spec = check_build_options(request)
    record = start_run("ragdiag index build", inputs=[request.corpus], models={"embedder": request.embedder},
                       seeds={"ivf_kmeans": request.seed}, cache="on" if request.use_cache else "off")
    built = build_indexes(request, spec, progress=request.progress)
    out = Path(request.out)
    save_index_folder(out, built)
    built.timings["total"] = time.perf_counter() - start
    manifest = manifest_of(request, spec, built)
    write_json(out / MANIFEST, stamp(manifest, record), indent=2)
    result = IndexBuildResult.from_json(manifest)
    result.out_dir = out
    return result
