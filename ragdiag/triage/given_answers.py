"""``triage --answers-from FILE``: the answers the user already has (production answers) as the baseline.

FILE is the answers file of ``ragdiag import traces`` or ``ragdiag generate`` (JSON lines: a ``meta``
line, ``ideal`` rows and ``topK`` rows ``{id, q, K, answer, ...}``), read and checked whole by
:func:`ragdiag.answers.answers_file.read_answers`. Each query's baseline answer is its ``topK`` row at
K = ``--k`` (the row answered on the passages triage gives the baseline); it is graded, never generated.
A row without an answer (its generation failed) gives none. Every check runs before any call.

FILE may also be a table of the answers a team keeps (CSV, TSV, a JSON list or Parquet, read by
:mod:`ragdiag.data.records`): one row per query with its id (``query_id``, ``query-id``, ``qid``,
``question_id``, ``_id``, ``id``; ``--fields query_id=NAME``) and answer (``answer``, ``response``,
``output``, ``actual_output``; ``--fields answer=NAME``), optionally its question (``question``,
``query``, ``q``; ``--fields query=NAME``, then checked against the query's text) and ``K`` (only the
rows at ``--k`` are read). A row without ``K`` is taken as answered on the top ``--k`` passages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.triage.inputs import TriageQuery


@dataclass(frozen=True)
class GivenAnswer:
    """One query's answer from the file: its question text and the answer."""

    question: str | None  # None: a table without questions (nothing to check the query's text against)
    answer: str


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def read_given_answers(path: Path, k: int) -> dict[str, GivenAnswer]:
    """Query id → its answer at K = ``k``; a query answered on another K only, or twice at K (two systems), is refused."""
    from ragdiag.answers.answers_file import read_answers
    from ragdiag.data.own_inputs import content_format
    from ragdiag.io.files import existing_file

    if content_format(existing_file(path)) in ("json", "csv", "tsv", "parquet"):
        return _table_answers(path, k)
    rows = read_answers(path).rows
    at_k: dict[str, list[dict]] = {}
    other_k: dict[str, int] = {}
    for row in rows:
        if row["K"] == k:
            at_k.setdefault(row["id"], []).append(row)
        else:
            other_k.setdefault(row["id"], row["K"])
    only_other = [q for q in other_k if q not in at_k]
    if only_other:
        raise RagdiagError(f"--answers-from {path}: query '{only_other[0]}' was answered on K = {other_k[only_other[0]]} "
                           f"passages, not on the top --k {k} that triage's baseline shows; give --k "
                           f"{other_k[only_other[0]]} (or the answers at K = {k})")
    twice = next(((q, rs) for q, rs in at_k.items() if len(rs) > 1), None)
    if twice is not None:
        systems = ", ".join(sorted({str(r["E"]) for r in twice[1]}))
        raise RagdiagError(f"--answers-from {path}: query '{twice[0]}' has {len(twice[1])} answers at K = {k} "
                           f"(systems {systems}); keep the rows of one system")
    return {q: GivenAnswer(rs[0]["q"], rs[0]["answer"]) for q, rs in at_k.items() if rs[0].get("answer") is not None}


ID_NAMES = ("query_id", "query-id", "qid", "question_id", "_id", "id")
ANSWER_NAMES = ("answer", "response", "output", "actual_output")
QUESTION_NAMES = ("question", "query", "q")


def _field(columns: list[str], named: str | None, names: tuple[str, ...]) -> str | None:
    return named if named is not None else next((name for name in names if name in columns), None)


def _table_answers(path: Path, k: int) -> dict[str, GivenAnswer]:
    """Query id → its answer from a table of answers (see the module doc), every row checked."""
    from ragdiag.data.records import read_records
    from ragdiag.io.fields import current_reading

    reading = current_reading()
    records = read_records(path)
    columns = records.columns
    id_field = _field(columns, reading.named("query_id"), ID_NAMES)
    answer_field = _field(columns, reading.named("answer"), ANSWER_NAMES)
    question_field = _field(columns, reading.named("query"), QUESTION_NAMES)
    for role, name, names in (("query_id", id_field, ID_NAMES), ("answer", answer_field, ANSWER_NAMES),
                              ("query", question_field, None)):
        if name is not None and name not in columns:
            raise RagdiagError(f"--answers-from {path}: no field '{name}' (named by --fields {role}={name}); this "
                               f"looks like {records.looks_like()}")
        if name is None and names is not None:
            guess = next((c for c in columns if c not in (id_field, answer_field, question_field)), "NAME")
            raise RagdiagError(f"--answers-from {path}: no {role.replace('_', ' ')} field (recognised: {'|'.join(names)}); "
                               f"this looks like {records.looks_like()}: read it with `--fields {role}={guess}`")
    assert id_field is not None and answer_field is not None
    given: dict[str, GivenAnswer] = {}
    first: dict[str, str] = {}
    for where, row in zip(records.where, records.rows):
        if not isinstance(row, dict):
            raise RagdiagError(f"--answers-from {path} {where}: expected an object with named fields")
        if "K" in row and str(row["K"]).strip() != str(k):
            continue
        query_id, answer = row.get(id_field), row.get(answer_field)
        if isinstance(query_id, bool) or not isinstance(query_id, (str, int)) or not str(query_id).strip():
            raise RagdiagError(f"--answers-from {path} {where}: field '{id_field}' must be a non-empty string or an integer")
        query_id = str(query_id).strip()
        if query_id in given:
            raise RagdiagError(f"--answers-from {path} {where}: query '{query_id}' already has an answer "
                               f"({first[query_id]}); give each query one row at K = {k}")
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            continue  # no answer: the query is left out, as a failed generation is
        if not isinstance(answer, str):
            raise RagdiagError(f"--answers-from {path} {where}: field '{answer_field}' must be text, got "
                               f"{type(answer).__name__}")
        question = row.get(question_field) if question_field else None
        given[query_id] = GivenAnswer(question if isinstance(question, str) else None, answer)
        first[query_id] = where
    if not given:
        raise RagdiagError(f"--answers-from {path}: no answers (at K = {k}); this looks like {records.looks_like()}")
    return given


def check_named(given: dict[str, GivenAnswer], path: Path, ids: list[str] | None) -> None:
    """Every query named by --ids / --from-compare has an answer in the file."""
    missing = [q for q in ids or [] if q not in given]
    if ids and len(missing) == len(ids):
        raise RagdiagError(f"--answers-from {path}: the file answers other queries (none of the {len(ids)} queries "
                           f"named by --ids / --from-compare, e.g. '{ids[0]}', has a topK row); give the answers file "
                           f"of these queries")
    if missing:
        more = f" ({len(missing)} such ids)" if len(missing) > 1 else ""
        raise RagdiagError(f"--answers-from {path}: no answer for query '{missing[0]}' (--ids / --from-compare){more}; "
                           f"name only answered queries, or give the answers file of these queries")


def check_questions(given: dict[str, GivenAnswer], path: Path, queries: list[TriageQuery]) -> None:
    """The file answers these queries: some query has an answer, and each answer's question is the query's."""
    if not any(q.id in given for q in queries):
        example = queries[0].id if queries else "?"
        raise RagdiagError(f"--answers-from {path}: the file answers other queries (none of the {len(queries)} queries, "
                           f"e.g. '{example}', has a topK row); give the answers file of these queries")
    for query in queries:
        answer = given.get(query.id)
        if answer is not None and answer.question is not None and _norm(answer.question) != _norm(query.text):
            raise RagdiagError(f"--answers-from {path}: query '{query.id}' asks {query.text[:60]!r} but the file's "
                               f"answer is to {answer.question[:60]!r}; give the answers file of these queries")
