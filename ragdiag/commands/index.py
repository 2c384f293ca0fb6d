"""``ragdiag index build``: embed a BEIR corpus (cached) into a dense index and a BM25 index saved in
an index folder.

:func:`run` checks the paths (named by their flag) and every option before the corpus is read, then
builds and saves the folder (:func:`ragdiag.retrieval.store.build_index_dir`: files through
:mod:`ragdiag.io.writer`, ``manifest.json`` stamped with the run record) and returns its manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.io.paths import check_paths
from ragdiag.retrieval.store import BuildOptions, build_index_dir, check_build_options

__all__ = ["IndexBuildRequest", "IndexBuildResult", "run"]


@dataclass
class IndexBuildRequest(BuildOptions):
    """Every option of ``ragdiag index build`` (``out`` is the index folder)."""

    progress: bool = False


@dataclass
class IndexBuildResult:
    """The folder's ``manifest.json``: how it was made (``meta``), counts, embedding calls, timings."""

    manifest: dict[str, Any]
    out_dir: Path

    @property
    def meta(self) -> dict[str, Any]:
        return self.manifest["meta"]

    def to_json(self) -> dict[str, Any]:
        return self.manifest


def run(request: IndexBuildRequest) -> IndexBuildResult:
    """Check, build, save; the manifest."""
    check_paths(inputs={"--corpus": request.corpus}, folders={"--out-dir": request.out, "--cache-dir": request.cache_dir})
    check_build_options(request)
    return IndexBuildResult(build_index_dir(request, progress=request.progress), Path(request.out))
