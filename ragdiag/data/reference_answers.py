"""Reference answers from a dataset (``sweep --answers FILE``): query id → one or more answers.

Format: JSON lines, one object per query, ``{"query_id": ID, "answer": "..."}`` or
``{"query_id": ID, "answers": ["...", "..."]}`` (``"_id"`` is accepted for ``"query_id"``; an id may
be a string or an integer, compared as a string). Examples: MS MARCO's ``answers`` list, the
SQuAD answer spans of a question (``answers[].text``). Repeated answers of one query are kept once,
in file order. Errors name the file, the line and the field.
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.errors import DataError
from ragdiag.io.jsonl import read_jsonl_lines

ID_FIELDS = ("query_id", "_id")


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
    path = Path(path)
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
