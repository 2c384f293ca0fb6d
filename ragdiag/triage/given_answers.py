"""``triage --answers-from FILE``: the answers the user already has (production answers) as the baseline.

FILE is the answers file of ``ragdiag import traces`` or ``ragdiag generate`` (JSON lines: a ``meta``
line, ``ideal`` rows and ``topK`` rows ``{id, q, K, answer, ...}``), read and checked whole by
:func:`ragdiag.answers.answers_file.read_answers`. Each query's baseline answer is its ``topK`` row at
K = ``--k`` (the row answered on the passages triage gives the baseline); it is graded, never generated.
A row without an answer (its generation failed) gives none. Every check runs before any call.
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

    question: str
    answer: str


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def read_given_answers(path: Path, k: int) -> dict[str, GivenAnswer]:
    """Query id → its answer at K = ``k``; a query answered on another K only, or twice at K (two systems), is refused."""
    from ragdiag.answers.answers_file import read_answers

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
        if answer is not None and _norm(answer.question) != _norm(query.text):
            raise RagdiagError(f"--answers-from {path}: query '{query.id}' asks {query.text[:60]!r} but the file's "
                               f"answer is to {answer.question[:60]!r}; give the answers file of these queries")
