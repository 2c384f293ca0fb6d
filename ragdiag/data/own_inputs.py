"""A user's corpus, questions, qrels and runs in the shapes teams keep them, through one reader
(:mod:`ragdiag.data.records`) and one field mapping (:class:`ragdiag.io.fields.Reading`).

* corpus: id, text and an optional title per record (BEIR ``corpus.jsonl``, or ``id,title,text``
  JSONL, a JSON list, CSV, TSV, Parquet); a folder of documents is :mod:`ragdiag.data.doc_folder`'s;
* questions: id and query text per record, or a plain text file, one question a line (the id is
  the line number);
* qrels and runs as tables (CSV, TSV with a header, JSONL, JSON, Parquet): one row per (query,
  document) with a relevance (qrels) or a score or rank (runs); TREC and BEIR layouts stay with
  :mod:`ragdiag.data.qrels_runs`.

A file whose fields cannot be told apart is one error saying what the file looks like and the flag
that reads it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.data.records import Records, read_records, sniff_format
from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.fields import COMMON_NAMES, Reading, current_reading, role_flag

# roles each kind needs (True) or may use (False)
KIND_ROLES: dict[str, dict[str, bool]] = {
    "corpus": {"id": True, "text": True, "title": False},
    "queries": {"id": True, "query": True},
    "qrels": {"query_id": True, "doc_id": True, "relevance": True},
    "run": {"query_id": True, "doc_id": True, "score": False, "rank": False},
}
QUERY_ID_NAMES = (*COMMON_NAMES["query_id"], *COMMON_NAMES["id"])


@dataclass
class Texts:
    """Ids and texts of a corpus or of questions, with what was read and how."""

    ids: list[str]
    texts: list[str]
    format: str
    used: dict[str, str]  # role → field read
    ignored: list[str]
    titles: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # a folder corpus: each passage's file


def candidates(role: str, kind: str) -> tuple[str, ...]:
    """The names recognised for ``role`` in a file of ``kind``."""
    if kind == "queries" and role == "id":
        return QUERY_ID_NAMES
    return COMMON_NAMES[role]


def resolve(records: Records, kind: str, reading: Reading | None = None) -> dict[str, str]:
    """role → column of ``records`` for ``kind``: the named field, else the first common name present
    (a column is used for one role only); a required role without a column is one error naming what
    the file looks like and the flag that reads it."""
    reading = current_reading(reading)
    columns = records.columns
    used: dict[str, str] = {}
    for role, required in KIND_ROLES[kind].items():
        named = reading.named(role) or (reading.named("text") if kind == "queries" and role == "query" else None)
        if named is not None:
            if named not in columns:
                raise DataError(f"{records.source}: no field '{named}' (named by {role_flag(role, named)}); "
                                f"this looks like {records.looks_like()}")
            used[role] = named
            continue
        found = next((c for c in candidates(role, kind) if c in columns and c not in used.values()), None)
        if found is not None:
            used[role] = found
        elif required:
            raise DataError(missing_role(records, kind, role, used))
    return used


def missing_role(records: Records, kind: str, role: str, used: dict[str, str]) -> str:
    """``F: no id field among the common names (…): this looks like CSV with columns doc_id, body: read
    it with `--fields id=doc_id,text=body`` — with a guess for every role still open."""
    free = [c for c in records.columns if c not in used.values()]
    guess = dict(used)
    for open_role in (r for r in KIND_ROLES[kind] if KIND_ROLES[kind][r] and r not in used):
        pick = next((c for c in free if c not in guess.values() and _like(open_role, c)), None)
        pick = pick or next((c for c in free if c not in guess.values()), None)
        if pick:
            guess[open_role] = pick
    names = "|".join(candidates(role, kind))
    looks = records.looks_like()
    guessed = guess_kind(records)
    if guessed is not None and guessed not in (kind, "table"):
        looks += f" — a {KIND_LABELS[guessed]}, not a {KIND_LABELS[kind]}? If it is one,"
    else:
        looks += ":"
    hint = f"read it with `--fields {','.join(f'{r}={c}' for r, c in guess.items())}`" if len(guess) > len(used) \
        else f"name the {role} field with `{role_flag(role, 'NAME')}`"
    return f"{records.source}: no {role} field for a {kind} file (recognised: {names}); this looks like {looks} {hint}"


def _like(role: str, column: str) -> bool:
    low = column.lower()
    keys = {"id": ("id",), "query_id": ("q", "query"), "doc_id": ("doc", "passage", "corpus"), "text": ("text", "content"),
            "query": ("query", "question", "text"), "relevance": ("rel", "label", "grade", "score")}.get(role, (role,))
    return any(k in low for k in keys)


def _scalar_text(records: Records, index: int, column: str, what: str) -> str:
    value = records.rows[index].get(column)
    if value is None or isinstance(value, (dict, list, bool)):
        raise DataError(f"{records.source}: {records.where[index]}: field '{column}': {what} missing or not a scalar")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _objects(records: Records) -> None:
    for index, row in enumerate(records.rows):
        if not isinstance(row, dict):
            place = records.where[index].replace("record", "line") if records.format == "jsonl" else records.where[index]
            raise DataError(f"{records.source}: {place}: expected a JSON object, got {type(row).__name__}")


def open_records(path: Path, kind: str, reading: Reading | None = None) -> Records:
    """The records of ``path`` in the format ``reading`` gives ``kind`` (else sniffed); JSON that does
    not parse in a file that looks like CSV or TSV says so and names the flag."""
    reading = current_reading(reading)
    fmt = reading.format_of(kind)
    try:
        records = read_records(path, fmt)
    except DataError as err:
        if "malformed JSON" not in str(err):
            raise
        actual = content_format(Path(path))
        if actual in ("csv", "tsv"):
            raise DataError(f"{err}; this looks like {actual.upper()}: read it with `--{kind}-format {actual}`") from None
        raise
    if not records.rows:
        raise DataError(f"{path}: empty (no records)")
    _objects(records)
    return records


def content_format(path: Path) -> str:
    """The format the first bytes of ``path`` look like, whatever its suffix."""
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"PAR1"):
        return "parquet"
    if head[:1] in (b"[", b"{"):
        return "json" if head[:1] == b"[" else "jsonl"
    first = head.split(b"\n", 1)[0]
    return "tsv" if b"\t" in first else "csv" if b"," in first else "txt"


def load_corpus_records(path: Path, reading: Reading | None = None) -> Texts:
    """Ids and ``title text`` of a corpus file in any format (see module doc); duplicate ids are an error."""
    records = open_records(path, "corpus", reading)
    if records.format in ("txt", "trec"):
        raise DataError(f"{path}: a plain text file is not a corpus (one record per line without fields); give a "
                        "JSONL/JSON/CSV/TSV/Parquet file with id and text fields, or a folder of documents")
    used = resolve(records, "corpus", reading)
    ids, texts, titles = [], [], []
    seen: dict[str, int] = {}
    for index, row in enumerate(records.rows):
        doc_id = _scalar_text(records, index, used["id"], "document id")
        if doc_id in seen:
            raise DataError(f"{records.source}: {records.where[index]}: field '{used['id']}': duplicate id '{doc_id}' "
                            f"(first at {records.where[seen[doc_id]]})")
        seen[doc_id] = index
        text = row.get(used["text"])
        if text is None:
            raise DataError(f"{records.source}: {records.where[index]}: field '{used['text']}': missing")
        if not isinstance(text, str):
            raise DataError(f"{records.source}: {records.where[index]}: field '{used['text']}': "
                            f"expected a string, got {type(text).__name__}")
        title = row.get(used["title"]) if "title" in used else ""
        title = title if isinstance(title, str) else ""
        ids.append(doc_id)
        titles.append(title)
        texts.append(f"{title} {text}".strip() if title else text)
    return Texts(ids, texts, records.format, used, _ignored(records, used), titles)


def load_question_records(path: Path, reading: Reading | None = None) -> Texts:
    """Ids and texts of questions in any format; a plain text file is one question a line, its id the
    line number."""
    records = open_records(path, "queries", reading)
    if records.format in ("txt", "trec"):
        ids = [where.split()[-1] for where in records.where]
        return Texts(ids, [row["line"].strip() for row in records.rows], "txt", {"id": "line number", "query": "line"}, [])
    if _headerless_pairs(records, reading):
        return _tab_pairs(Path(path))
    used = resolve(records, "queries", reading)
    ids, texts = [], []
    seen: dict[str, int] = {}
    for index, row in enumerate(records.rows):
        query_id = _scalar_text(records, index, used["id"], "query id")
        if query_id in seen:
            raise DataError(f"{records.source}: {records.where[index]}: field '{used['id']}': duplicate id '{query_id}' "
                            f"(first at {records.where[seen[query_id]]})")
        seen[query_id] = index
        text = row.get(used["query"])
        if not isinstance(text, str):
            raise DataError(f"{records.source}: {records.where[index]}: field '{used['query']}': "
                            f"expected a string, got {type(text).__name__}")
        ids.append(query_id)
        texts.append(text)
    return Texts(ids, texts, records.format, used, _ignored(records, used))


def _headerless_pairs(records: Records, reading: Reading | None) -> bool:
    """A TSV of two columns whose first line names no field: MS MARCO's ``queries.tsv`` (qid, text)."""
    reading = current_reading(reading)
    known = {name for names in COMMON_NAMES.values() for name in names}
    return (records.format == "tsv" and len(records.columns) == 2 and not reading.fields
            and not known & set(records.columns))


def _tab_pairs(path: Path) -> Texts:
    from ragdiag.io.jsonl import read_lines

    ids, texts = [], []
    seen: dict[str, int] = {}
    for number, line in read_lines(path):
        query_id, sep, text = line.partition("\t")
        if not sep:
            raise DataError(f"{path}: line {number}: expected two tab-separated columns (id, question)")
        if query_id in seen:
            raise DataError(f"{path}: line {number}: duplicate id '{query_id}' (first at line {seen[query_id]})")
        seen[query_id] = number
        ids.append(query_id)
        texts.append(text)
    return Texts(ids, texts, "tsv", {"id": "column 1", "query": "column 2"}, [])


def _ignored(records: Records, used: dict[str, str]) -> list[str]:
    return [c for c in records.columns if c not in used.values()]


def is_table(path: Path, kind: str, reading: Reading | None = None) -> bool:
    """True when a qrels or run file is a table with named columns (not TREC / BEIR / run.jsonl)."""
    reading = current_reading(reading)
    fmt = reading.format_of(kind) or sniff_format(Path(path))
    if fmt in ("txt", "trec"):
        return False
    if fmt == "tsv" and not reading.fields and not reading.format_of(kind):
        # BEIR qrels TSV (header optional) and tab-separated TREC files stay with the layout readers,
        # unless the header names the columns (a run table)
        return kind == "run" and _named_header(Path(path))
    if fmt == "jsonl" and kind == "run":
        return not _is_ragdiag_run(Path(path))
    return True


def _named_header(path: Path) -> bool:
    from ragdiag.io.jsonl import read_lines

    first = next(read_lines(path), None)
    cells = set(first[1].strip().split("\t")) if first else set()
    return bool(cells & set(COMMON_NAMES["query_id"])) and bool(cells & set(COMMON_NAMES["doc_id"]))


def _is_ragdiag_run(path: Path) -> bool:
    from ragdiag.io.jsonl import read_lines

    first = next(read_lines(path), None)
    return first is not None and '"ids"' in first[1]


def _number(records: Records, index: int, column: str, what: str) -> float:
    value = records.rows[index].get(column)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{records.source}: {records.where[index]}: field '{column}': {what} not a number: "
                        f"{str(value)[:40]!r}") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise DataError(f"{records.source}: {records.where[index]}: field '{column}': {what} not a finite number: {value!r}")
    return number


def qrels_table(path: Path, reading: Reading | None = None) -> dict[str, dict[str, int]]:
    """query id → {doc id: relevance} of a qrels table (query id, doc id and relevance columns)."""
    records = open_records(path, "qrels", reading)
    used = resolve(records, "qrels", reading)
    qrels: dict[str, dict[str, int]] = {}
    for index in range(len(records.rows)):
        query_id = _scalar_text(records, index, used["query_id"], "query id")
        doc_id = _scalar_text(records, index, used["doc_id"], "document id")
        grade = _number(records, index, used["relevance"], "relevance")
        if grade != int(grade):
            raise DataError(f"{records.source}: {records.where[index]}: field '{used['relevance']}': not an integer: {grade}")
        docs = qrels.setdefault(query_id, {})
        if docs.get(doc_id, int(grade)) != int(grade):
            raise DataError(f"{records.source}: {records.where[index]}: query '{query_id}' judges document '{doc_id}' "
                            f"{int(grade)}, but an earlier row judged it {docs[doc_id]}")
        docs[doc_id] = int(grade)
    return qrels


def run_table(path: Path, reading: Reading | None = None) -> dict[str, list[tuple[str, float]]]:
    """query id → [(doc id, score)] best first of a run table: one row per (query, document) with a
    score (higher first) or a rank (lower first); ties keep file order."""
    records = open_records(path, "run", reading)
    if {"query_id", "ids"} <= set(records.columns):
        return _ranked_lists(records)
    used = resolve(records, "run", reading)
    if "score" not in used and "rank" not in used:
        raise DataError(f"{records.source}: a run table needs a score or a rank field; this looks like "
                        f"{records.looks_like()}: name it with `--score-field NAME` or `--fields rank=NAME`")
    rows: dict[str, list[tuple[float, int, str, float]]] = {}
    seen: set[tuple[str, str]] = set()
    for index in range(len(records.rows)):
        query_id = _scalar_text(records, index, used["query_id"], "query id")
        doc_id = _scalar_text(records, index, used["doc_id"], "document id")
        if (query_id, doc_id) in seen:
            raise DataError(f"{records.source}: {records.where[index]}: query '{query_id}' ranks document '{doc_id}' twice")
        seen.add((query_id, doc_id))
        if "score" in used:
            score = _number(records, index, used["score"], "score")
            key = -score
        else:
            key = _number(records, index, used["rank"], "rank")
            score = -key
        rows.setdefault(query_id, []).append((key, index, doc_id, score))
    return {q: [(d, s) for _, _, d, s in sorted(entries)] for q, entries in rows.items()}


def _ranked_lists(records: Records) -> dict[str, list[tuple[str, float]]]:
    """ragdiag's run layout (``query_id``, ``ids``, optional ``scores``) in a JSON list or Parquet file."""
    run: dict[str, list[tuple[str, float]]] = {}
    for index, row in enumerate(records.rows):
        query_id = _scalar_text(records, index, "query_id", "query id")
        ids, scores = row.get("ids"), row.get("scores")
        if not isinstance(ids, list):
            raise DataError(f"{records.source}: {records.where[index]}: field 'ids': missing or not a list of document ids")
        if scores is None:
            scores = [float(-rank) for rank in range(len(ids))]
        if not isinstance(scores, list) or len(scores) != len(ids) or \
                not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in scores):
            raise DataError(f"{records.source}: {records.where[index]}: field 'scores': expected {len(ids)} finite numbers, one per id")
        if query_id in run:
            raise DataError(f"{records.source}: {records.where[index]}: query '{query_id}' is ranked twice")
        if len(set(map(str, ids))) != len(ids):
            raise DataError(f"{records.source}: {records.where[index]}: query '{query_id}' ranks a document twice")
        run[query_id] = [(str(d), float(v)) for d, v in zip(ids, scores)]
    return run


def describe_wrong_shape(path: Path, expected: str) -> str:
    """What ``path`` looks like, for a reader that expected ``expected`` (a sentence ending in the flag)."""
    try:
        records = read_records(path)
    except RagdiagError:
        return ""
    kind = guess_kind(records)
    note = f"this looks like {records.looks_like()}"
    if kind and kind != expected:
        note += f" — a {KIND_LABELS.get(kind, kind)}, not a {KIND_LABELS.get(expected, expected)}"
    return note


KIND_LABELS = {"corpus": "corpus", "queries": "questions file", "qrels": "qrels file", "run": "run file",
               "graded": "graded file", "table": "per-query table"}


def guess_kind(records: Records) -> str | None:
    """The kind of file ``records`` most likely is: run, graded, qrels, corpus, queries or table."""
    cols = set(records.columns)
    if records.format in ("txt", "trec"):
        widths = {len(str(row.get("line", "")).split()) for row in records.rows[:50]}
        if widths == {6}:
            return "run"
        if widths <= {3, 4} and widths:
            return "qrels"
        return "queries"
    if {"query_id", "ids"} <= cols:
        return "run"
    if "id" in cols and ("grade" in cols or "grades" in cols):
        return "graded"
    has = {role: any(c in cols for c in names) for role, names in COMMON_NAMES.items()}
    if has["query_id"] and has["doc_id"]:
        if any(c in cols for c in COMMON_NAMES["relevance"] if c != "score"):
            return "qrels"
        if has["score"] or has["rank"]:
            return "run"
    if any(c in cols for c in ("title", "contents", "body", "passage", "chunk")) or (has["id"] and "text" in cols and not
                                                                                    any(c in cols for c in ("query", "question"))):
        return "corpus"
    if any(c in cols for c in ("query", "question")):
        return "queries"
    return "table"


__all__ = ["KIND_LABELS", "Texts", "describe_wrong_shape", "guess_kind", "is_table", "load_corpus_records",
           "load_question_records", "open_records", "qrels_table", "resolve", "run_table"]
