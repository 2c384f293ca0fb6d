"""``ragdiag import ragas|deepeval FILE --out DIR``: check the folder and the files it will hold,
read and convert the records (:mod:`ragdiag.data.importers`), write texts, ranked, answers and
graded files and the stamped ``import.manifest.json``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdiag.data.importers import SCORE_SCALES
from ragdiag.errors import RagdiagError
from ragdiag.results.import_data import ImportMeta, ImportResult

__all__ = ["SCORE_SCALES", "ImportMeta", "ImportRequest", "ImportResult", "run"]


@dataclass
class ImportRequest:
    tool: str
    path: Path
    out: Path
    system: str = "imported"
    subset: str = "U"
    score_col: str | None = None
    score_scale: str | None = None
    parquet: bool = False


def run(request: ImportRequest) -> ImportResult:
    from ragdiag.data.graded_parquet import check_graded_output, graded_arrow_table
    from ragdiag.data.importers import convert, read_records
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import check_output_dir, guard_outputs, sidecar_path, write_json, write_jsonl, write_parquet

    path, score_col = request.path, request.score_col
    if request.score_scale is not None and request.score_scale not in SCORE_SCALES:
        raise RagdiagError(f"--score-scale must be one of {', '.join(SCORE_SCALES)}, got '{request.score_scale}'")
    out = check_output_dir(request.out, "--out-dir")
    graded_name = "graded.parquet" if request.parquet else "graded.json"
    files = {name: out / name for name in ("texts.json", "ranked.json", "answers.jsonl", graded_name)}
    guard_outputs(files.values(), [path])
    check_graded_output(files[graded_name])
    record = start_run(f"ragdiag import {request.tool}", inputs=[path])
    records = read_records(path)
    if score_col is None and records and isinstance(records[0], dict) and "score" in records[0]:
        score_col = "score"
    data = convert(records, request.tool, str(path), system=request.system, subset=request.subset,
                   score_col=score_col, scale=request.score_scale)
    meta = ImportMeta(f"import {request.tool}", str(path), request.system, request.subset, score_col,
                      data.score_scale, len(data.texts))
    write_json(files["texts.json"], data.texts, inputs=[path])
    write_json(files["ranked.json"], data.ranked, inputs=[path])
    write_jsonl(files["answers.jsonl"], [{"kind": "meta", "meta": meta.to_json()}, *data.answers], inputs=[path])
    written = ["texts.json", "ranked.json", "answers.jsonl"]
    if data.graded:
        if request.parquet:
            write_parquet(files[graded_name], graded_arrow_table(data.graded), inputs=[path])
        else:
            write_json(files[graded_name], data.graded, inputs=[path])
        written.append(graded_name)
    result = ImportResult(meta, written, out=out)
    result.run_record = stamp(result.to_json(), record)["run_record"]
    write_json(sidecar_path(out / "import", "manifest"), result.to_json())
    return result
