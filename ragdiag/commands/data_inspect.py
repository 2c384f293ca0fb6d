"""``ragdiag data inspect PATH``: check the path and the options, inspect (:func:`ragdiag.data.inspect.inspect_path`),
write ``--out`` (JSON) through :mod:`ragdiag.io.out_format`; nothing else is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdiag.data.inspect import check_kind, inspect_path
from ragdiag.errors import RagdiagError
from ragdiag.io.fields import Reading
from ragdiag.io.paths import check_paths, not_found
from ragdiag.io.run_record import start_run
from ragdiag.results.data import InspectResult

__all__ = ["InspectRequest", "InspectResult", "run"]


@dataclass
class InspectRequest:
    """``PATH`` to inspect, its kind (None: guessed), the corpus qrels and runs are checked against, the reading."""

    path: Path
    kind: str | None = None
    corpus: Path | None = None
    reading: Reading | None = None
    out: Path | None = None


def run(request: InspectRequest) -> InspectResult:
    """Check, inspect, stamp the run record, write ``--out`` (JSON); the inspection."""
    for flag, path in (("PATH", request.path), ("--corpus", request.corpus)):
        if path is not None and not Path(path).exists():
            raise RagdiagError(not_found(flag, Path(path)))
    check_kind(request.kind)
    check_paths(inputs={"PATH": request.path, "--corpus": request.corpus}, outputs={"--out": request.out})
    record = start_run("ragdiag data inspect", inputs=[request.path, request.corpus])
    result = inspect_path(request.path, request.kind, request.reading, request.corpus)
    result.run_record = record.to_json()
    if request.out is not None:
        from ragdiag.io.out_format import write_result

        write_result(request.out, "json", {"json": lambda: _json(result)}, inputs=[request.path, request.corpus])
    return result


def _json(result: InspectResult) -> str:
    import json

    return json.dumps(result.to_json(), indent=1, ensure_ascii=False) + "\n"
