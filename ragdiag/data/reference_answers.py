"""Reference answers from a dataset (``sweep --answers FILE``): query id → one or more answers.

Format: JSON lines, one object per query, ``{"query_id": ID, "answer": "..."}`` or
``{"query_id": ID, "answers": ["...", "..."]}`` (``"_id"`` is accepted for ``"query_id"``; an id may
be a string or an integer, compared as a string). Examples: MS MARCO's ``answers`` list, the
SQuAD answer spans of a question (``answers[].text``). Repeated answers of one query are kept once,
in file order. Errors name the file, the line and the field.

The same rows as a JSON list, CSV, TSV or Parquet (told by the content) are read too
(:mod:`ragdiag.data.records`), the id also under ``qid``/``id``/``question_id`` and the answer under ``reference`` or
``ground_truth`` (a table cell holds one answer).
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.errors import DataError
from ragdiag.io.jsonl import read_jsonl_lines

ID_FIELDS = ("query_id", "_id")
TABLE_ID_FIELDS = ("query_id", "_id", "qid", "id", "question_id")
TABLE_ANSWER_FIELDS = ("answer", "answers", "reference", "ground_truth")


def _query_id(path: Path, line: int, record: dict) -> str:
    present = [f for f in ID_FIELDS if f in record]
    if not present:
        raise DataError(f"--answers {path} line {line}: no 'query_id' (or '_id') field")
    value = record[present[0]]
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value).strip() == "":
        raise DataError(f"--answers {path} line {line}: field '{present[0]}' must be a non-empty string or an integer")
    return str(value)


def _answers(path: Path, line: int, record: dict) -> list[str]:
    if ("answer" in record) == ("answers" in record):
        raise DataError(f"--answers {path} line {line}: give exactly one of 'answer' (a string) or 'answers' "
                        f"(a list of strings)")
    if "answer" in record:
        values, field = [record["answer"]], "answer"
    else:
        values, field = record["answers"], "answers"
        if not isinstance(values, list) or not values:
            raise DataError(f"--answers {path} line {line}: field 'answers' must be a non-empty list of strings")
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise DataError(f"--answers {path} line {line}: field '{field}' holds an empty or non-string answer")
    return list(dict.fromkeys(v.strip() for v in values))


def load_reference_answers(path: Path) -> dict[str, list[str]]:
    """``{query id: [answer, ...]}`` in file order; a query id given twice is an error."""
    from ragdiag.data.own_inputs import content_format
    from ragdiag.io.files import existing_file

    path = Path(path)
    if content_format(existing_file(path)) in ("json", "csv", "tsv", "parquet"):  # JSON lines (and the rest) as before
        return _table_answers(path)
    out: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    for line, record in read_jsonl_lines(path):
        if not isinstance(record, dict):
            raise DataError(f"--answers {path} line {line}: expected a JSON object")
        query_id = _query_id(path, line, record)
        if query_id in out:
            raise DataError(f"--answers {path} line {line}: query '{query_id}' already has answers "
                            f"(line {first_line[query_id]}); give each query one line")
        out[query_id] = _answers(path, line, record)
        first_line[query_id] = line
    if not out:
        raise DataError(f"--answers {path}: no answers (expected JSON lines with 'query_id' and 'answer')")
    return out


def _table_answers(path: Path) -> dict[str, list[str]]:
    """Reference answers from a JSON list, CSV, TSV or Parquet table (one row per query)."""
    from ragdiag.data.records import read_records

    records = read_records(path)
    id_field = next((f for f in TABLE_ID_FIELDS if f in records.columns), None)
    answer_field = next((f for f in TABLE_ANSWER_FIELDS if f in records.columns), None)
    if id_field is None or answer_field is None:
        missing = "query id" if id_field is None else "answer"
        names = "|".join(TABLE_ID_FIELDS if id_field is None else TABLE_ANSWER_FIELDS)
        raise DataError(f"--answers {path}: no {missing} field (recognised: {names}); this looks like "
                        f"{records.looks_like()}")
    out: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for where, row in zip(records.where, records.rows):
        if not isinstance(row, dict):
            raise DataError(f"--answers {path} {where}: expected an object with named fields")
        value = row.get(id_field)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value).strip() == "":
            raise DataError(f"--answers {path} {where}: field '{id_field}' must be a non-empty string or an integer")
        query_id = str(value).strip()
        if query_id in out:
            raise DataError(f"--answers {path} {where}: query '{query_id}' already has answers ({first[query_id]}); "
                            "give each query one row")
        answers = row.get(answer_field)
        values = answers if isinstance(answers, list) else [answers]
        if not values or not all(isinstance(v, str) and v.strip() for v in values):
            raise DataError(f"--answers {path} {where}: field '{answer_field}' holds an empty or non-string answer")
        out[query_id] = list(dict.fromkeys(str(v).strip() for v in values))
        first[query_id] = where
    if not out:
        raise DataError(f"--answers {path}: no answers")
    return out
