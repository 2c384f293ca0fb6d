"""``ragdiag data inspect PATH``: what ragdiag sees in a user's file or folder, read through the one
reader (:mod:`ragdiag.data.records`, :mod:`ragdiag.data.own_inputs`): its kind, format, rows, the
fields used and ignored, three sample records, problems (duplicate ids, empty texts, qrels or runs
naming passages the corpus lacks, fields it cannot tell apart) and the command to run next.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ragdiag.data.doc_folder import is_document_folder, read_folder
from ragdiag.data.own_inputs import KIND_LABELS, guess_kind, resolve
from ragdiag.data.records import Records, read_records
from ragdiag.errors import RagdiagError
from ragdiag.io.fields import FORMATS, Reading, current_reading
from ragdiag.results.data import InspectResult

KINDS = ("corpus", "questions", "qrels", "run", "graded", "table")
_INTERNAL = {"questions": "queries"}
SHOWN = 200  # characters of a sample value


def inspect_path(path: Path, kind: str | None = None, reading: Reading | None = None,
                 corpus: Path | None = None) -> InspectResult:
    """The inspection of ``path`` (``kind`` guessed when None); ``corpus``: the ids qrels and runs must name."""
    reading = current_reading(reading)
    path = Path(path)
    if path.is_dir():
        if is_document_folder(path):
            return _folder(path, reading)
        path = path / "corpus.jsonl"
    records = read_records(path, _format(reading, kind))
    found = kind or _kind_name(guess_kind(records) or "table")
    known = _corpus_ids(corpus, reading) if corpus else None
    inspect = {"corpus": _texts, "questions": _texts, "qrels": _judgements, "run": _judgements,
               "graded": _graded, "table": _table}[found]
    used, ignored, problems, rows = inspect(records, found, reading, known)
    return InspectResult(path=path, kind=found, format=records.format, rows=rows, fields_used=used,
                         fields_ignored=ignored, samples=[_sample(r) for r in records.rows[:3]], problems=problems,
                         next_command=next_command(found, path, reading))


def _format(reading: Reading, kind: str | None) -> str | None:
    if kind is None:
        return next(iter(reading.formats.values()), None)
    return reading.format_of(_INTERNAL.get(kind, kind))


def _kind_name(kind: str) -> str:
    return "questions" if kind == "queries" else kind


def _sample(row: Any) -> dict[str, Any]:
    if not isinstance(row, dict):
        return {"value": str(row)[:SHOWN]}
    return {str(k): (v[:SHOWN] + "…" if isinstance(v, str) and len(v) > SHOWN else v) for k, v in list(row.items())[:12]}


def _corpus_ids(corpus: Path, reading: Reading) -> set[str]:
    from ragdiag.data.beir import load_corpus

    return set(load_corpus(corpus, reading)[0])


def _texts(records: Records, kind: str, reading: Reading, _known: set[str] | None):
    if records.format in ("txt", "trec"):
        empty = sum(not str(r.get("line", "")).strip() for r in records.rows)
        return ({"id": "line number", "query": "line"}, [], [f"{empty} empty lines"] if empty else [], len(records.rows))
    internal = _INTERNAL.get(kind, kind)
    try:
        used = resolve(records, internal, reading)
    except RagdiagError as err:
        return {}, list(records.columns), [str(err)], len(records.rows)
    text_field = used.get("text") or used.get("query", "")
    ids = [str(r.get(used["id"])) for r in records.rows if isinstance(r, dict)]
    problems = []
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    if repeated:
        problems.append(f"{len(repeated)} duplicate ids (first: {', '.join(repeated[:3])})")
    empty = sum(not (isinstance(r, dict) and isinstance(r.get(text_field), str) and r[text_field].strip())
                for r in records.rows)
    if empty:
        problems.append(f"{empty} records with an empty or missing text ('{text_field}')")
    return used, [c for c in records.columns if c not in used.values()], problems, len(records.rows)


def _judgements(records: Records, kind: str, reading: Reading, known: set[str] | None):
    from ragdiag.data.qrels_runs import read_qrels, read_run_ids

    if records.format in ("txt", "trec") or (records.format == "tsv" and kind == "qrels"):
        used = ({"query_id": "column 1", "doc_id": "column 3", "relevance": "column 4 (TREC) or 3 (BEIR)"} if kind == "qrels"
                else {"query_id": "column 1", "doc_id": "column 3", "rank": "column 4", "score": "column 5"})
        ignored: list[str] = []
    elif {"query_id", "ids"} <= set(records.columns):
        used, ignored = {"query_id": "query_id", "doc_id": "ids", "score": "scores"}, []
    else:
        try:
            used = resolve(records, kind, reading)
        except RagdiagError as err:
            return {}, list(records.columns), [str(err)], len(records.rows)
        ignored = [c for c in records.columns if c not in used.values()]
    try:
        docs = read_qrels(records.source, reading) if kind == "qrels" else read_run_ids(records.source, reading)
    except RagdiagError as err:
        return used, ignored, [str(err)], len(records.rows)
    named = {d for ranked in docs.values() for d in ranked}
    problems = []
    if known is not None:
        unknown = sorted(named - known)
        if unknown:
            problems.append(f"{len(unknown)} of {len(named)} passages named are not in the corpus "
                            f"(first: {', '.join(unknown[:3])})")
    return used, ignored, problems, len(records.rows)


def _graded(records: Records, kind: str, reading: Reading, _known: set[str] | None):
    used = {"id": "id", "grade": "grades" if "grades" in records.columns else "grade"}
    for role in ("E", "K"):
        if role in records.columns:
            used[role] = role
    ids = [str(r.get("id")) for r in records.rows if isinstance(r, dict)]
    problems = [f"{n} rows without a grade" for n in
                [sum(r.get("grade") is None and not r.get("grades") for r in records.rows if isinstance(r, dict))] if n]
    return used, [c for c in records.columns if c not in used.values()], problems + \
        ([f"{len(ids) - len(set(ids))} repeated ids (one configuration E, K per file compares one row per query)"]
         if len(set(ids)) < len(ids) else []), len(records.rows)


def _table(records: Records, kind: str, reading: Reading, _known: set[str] | None):
    id_col = reading.named("query_id") or next((c for c in ("query_id", "qid", "id") if c in records.columns), None)
    first = next((r for r in records.rows if isinstance(r, dict)), {})
    numeric = [c for c in records.columns if c != id_col and _is_number(first.get(c))]
    used = {"query_id": id_col or "(none)", **{f"metric {i + 1}": c for i, c in enumerate(numeric)}}
    problems = [] if id_col else ["no query-id column (query_id, qid, id): name it with --id-col when comparing"]
    return used, [c for c in records.columns if c not in numeric and c != id_col], problems, len(records.rows)


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _folder(path: Path, reading: Reading) -> InspectResult:
    documents = read_folder(path)
    empty = [p for p, t in zip(documents.paths, documents.texts) if not t.strip()]
    problems = ([f"{len(empty)} empty documents (first: {', '.join(empty[:3])})"] if empty else []) + \
        ([f"{len(documents.skipped)} files of other types left out (first: {', '.join(documents.skipped[:3])})"]
         if documents.skipped else [])
    samples = [{"path": p, "text": t[:SHOWN] + ("…" if len(t) > SHOWN else "")}
               for p, t in zip(documents.paths[:3], documents.texts[:3])]
    return InspectResult(path=path, kind="corpus", format="folder of documents", rows=len(documents.paths),
                         fields_used={"id": "relative/path#n (one per passage)", "text": "the file's text"},
                         fields_ignored=[], samples=samples, problems=problems,
                         next_command=next_command("corpus", path, reading))


def _flags(reading: Reading, kind: str) -> str:
    parts = []
    if reading.fields:
        parts.append("--fields " + ",".join(f"{r}={c}" for r, c in reading.fields.items()))
    fmt = reading.format_of(_INTERNAL.get(kind, kind))
    if fmt:
        parts.append(f"--{_INTERNAL.get(kind, kind)}-format {fmt}")
    return "".join(" " + p for p in parts)


def next_command(kind: str, path: Path, reading: Reading) -> str:
    """The command that takes a file of ``kind`` next, with the reading flags it needs."""
    flags = _flags(reading, kind)
    return {
        "corpus": f"ragdiag index build --corpus {path}{flags} --out-dir /tmp/ragdiag/index",
        "questions": f"ragdiag retrieve --index-dir /tmp/ragdiag/index --queries {path}{flags} --out /tmp/ragdiag/run.jsonl",
        "qrels": f"ragdiag evaluate --run /tmp/ragdiag/run.jsonl --qrels {path}{flags}",
        "run": f"ragdiag evaluate --run {path} --qrels QRELS{flags}",
        "graded": f"ragdiag compare --base {path} --new OTHER_GRADED",
        "table": f"ragdiag compare --base {path} --new OTHER_TABLE --id-col QUERY_ID_COLUMN",
    }[kind]


def check_kind(kind: str | None) -> None:
    if kind is not None and kind not in KINDS:
        raise RagdiagError(f"--kind {kind}: expected one of {', '.join(KINDS)}")


__all__ = ["FORMATS", "KINDS", "KIND_LABELS", "check_kind", "inspect_path", "next_command"]
