"""The result of ``ragdiag index build``: the index folder's ``manifest.json`` (how it was made,
counts, embedding calls, timings) and the folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord


@dataclass(kw_only=True)
class IndexBuildResult(JsonRecord):
    """The folder's ``manifest.json``: ``meta`` (command, corpus and its sha256, embedder, index spec,
    parameters …), passage and document counts, the vector size, the index size, the embedding calls,
    the timings in seconds, the run record; ``out_dir`` is where it was written (not part of the JSON)."""

    meta: dict[str, Any] = field(default_factory=dict)
    n_docs: int = 0
    n_passages: int = 0
    truncated_texts: int | None = None
    dim: int | None = None
    index_bytes: int = 0
    embedding: dict[str, int] | None = None
    timings_s: dict[str, float] = field(default_factory=dict)
    run_record: dict[str, Any] | None = None
    out_dir: Path = field(default_factory=Path, compare=False)
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "n_docs", "n_passages", "truncated_texts", "dim",
                                                "index_bytes", "embedding", "timings_s", "run_record")
