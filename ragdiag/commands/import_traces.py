"""``ragdiag import traces FILE --out DIR``: check the folder and the files it will hold, read the
spans (:mod:`ragdiag.data.spans`), join them by trace (:mod:`ragdiag.data.traces`), write the
questions, the documents seen, the production run and — with ``--qrels`` — texts, ranked and answers
files, and the stamped ``import-traces.manifest.json``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError, RagdiagError
from ragdiag.results.import_data import TracesImportResult, TracesMeta

__all__ = ["TracesImportRequest", "TracesImportResult", "run"]

SUBSET = re.compile(r"[A-Za-z0-9]+")
REFERENCE_FIELDS = ("reference", "expected_output", "ground_truth", "ideal", "answer")
REFERENCE_KEYS = ("id", "query_id", "trace_id", "question", "q", "input")


@dataclass
class TracesImportRequest:
    path: Path
    out: Path
    system: str = "production"
    subset: str = "U"
    qrels: Path | None = None
    references: Path | None = None


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def read_references(path: Path, questions: dict[str, str]) -> dict[str, str]:
    """Question id → reference answer, from records naming the question by id (the written id or the
    trace id) or by its text (``question``/``q``/``input``), the answer in ``reference`` (or
    ``expected_output``, ``ground_truth``, ``ideal``, ``answer``)."""
    from ragdiag.data.importers import read_records

    by_text = {_norm(q): qid for qid, q in questions.items()}
    found: dict[str, str] = {}
    for number, record in enumerate(read_records(path), start=1):
        if not isinstance(record, dict):
            raise DataError.at(str(path), number, None, "expected an object with an id (or question) and a reference")
        answer_field = next((f for f in REFERENCE_FIELDS if isinstance(record.get(f), str)), None)
        if answer_field is None:
            raise DataError.at(str(path), number, None, f"no reference answer: expected one of {', '.join(REFERENCE_FIELDS)}")
        key = next((str(record[k]) for k in REFERENCE_KEYS if record.get(k) not in (None, "")), None)
        if key is None:
            raise DataError.at(str(path), number, None, f"no question named: expected one of {', '.join(REFERENCE_KEYS)}")
        qid = key if key in questions else next((q for q in questions if q.endswith(f"-{key}")), by_text.get(_norm(key)))
        if qid is not None:
            found[qid] = record[answer_field]
    return found


def run(request: TracesImportRequest) -> TracesImportResult:
    from ragdiag.data.qrels_runs import check_ids_fit, read_qrels, run_file_text
    from ragdiag.data.spans import read_spans
    from ragdiag.data.traces import join, question_id, to_files
    from ragdiag.io.run_record import stamp, start_run
    from ragdiag.io.writer import check_output_dir, guard_outputs, sidecar_path, write_json, write_jsonl, write_text

    if not SUBSET.fullmatch(request.subset):
        raise RagdiagError(f"--subset must be letters and digits (it prefixes each question id), got '{request.subset}'")
    if not request.system.strip():
        raise RagdiagError("--system must not be empty")
    if request.references is not None and request.qrels is None:
        raise RagdiagError("--references needs --qrels: the answers file holds the traces with a relevant document")
    out = check_output_dir(request.out, "--out-dir")
    names = ["queries.jsonl", "corpus.jsonl", "run.jsonl"]
    if request.qrels is not None:
        names += ["texts.json", "ranked.json", "answers.jsonl"]
    files = {name: out / name for name in names}
    inputs = [p for p in (request.path, request.qrels, request.references) if p is not None]
    guard_outputs([*files.values(), sidecar_path(out / "import-traces", "manifest")], inputs)
    record = start_run("ragdiag import traces", inputs=inputs)
    spans = read_spans(request.path)
    qrels = read_qrels(request.qrels) if request.qrels is not None else None
    joined = join(spans)
    if not joined.kept:
        reasons = "; ".join(f"{n} × {why}" for why, n in joined.skipped.most_common())
        raise DataError(f"{request.path}: no trace holds a retrieval with document texts, a question and an answer "
                        f"({len(spans)} spans; skipped: {reasons or 'none'})")
    questions = {question_id(request.subset, t): t.question for t in joined.kept}
    references = read_references(request.references, questions) if request.references is not None else None
    data = to_files(joined.kept, request.subset, request.system, qrels, references)
    check_ids_fit("tsv", [("document id", (row["_id"] for row in data.corpus))],
                  "qrels and ragdiag's TSV files cannot hold it")
    meta = TracesMeta("import traces", str(request.path), request.system, request.subset, len(spans),
                      len(joined.kept) + sum(joined.skipped.values()), len(joined.kept), dict(joined.skipped.most_common()),
                      dict(joined.convention), None if request.qrels is None else str(request.qrels),
                      None if request.references is None else str(request.references), len(data.texts),
                      data.unlabelled, data.references)
    write_jsonl(files["queries.jsonl"], data.queries, inputs=inputs)
    write_jsonl(files["corpus.jsonl"], data.corpus, inputs=inputs)
    write_text(files["run.jsonl"], run_file_text(data.run, "jsonl"), inputs=inputs)
    if request.qrels is not None and data.texts:
        write_json(files["texts.json"], data.texts, inputs=inputs)
        write_json(files["ranked.json"], data.ranked, inputs=inputs)
        answers_meta: dict[str, Any] = {"command": "import traces", "source": str(request.path), "system": request.system}
        write_jsonl(files["answers.jsonl"], [{"kind": "meta", "meta": answers_meta}, *data.answers], inputs=inputs)
    written = [name for name in names if name in ("queries.jsonl", "corpus.jsonl", "run.jsonl") or data.texts]
    result = TracesImportResult(meta, written, out=out)
    result.run_record = stamp(result.to_json(), record)["run_record"]
    write_json(sidecar_path(out / "import-traces", "manifest"), result.to_json())
    return result
