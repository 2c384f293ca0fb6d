"""Relevance judgements (qrels) and run files in the TREC and BEIR layouts: the one reader of each.

Qrels, sniffed from the column count of the first data line (whitespace or tab separated):

* TREC: ``qid 0 docid rel`` (4 columns; the second, "iteration", is ignored), e.g. the official
  MS MARCO ``qrels.dev.small.tsv``;
* BEIR: ``query-id corpus-id score`` (3 columns), with or without the header line.

Runs, sniffed from the first non-blank character:

* ragdiag ``run.jsonl``: one JSON object a line, ``{"query_id", "ids", "scores"}``, best first;
* TREC run: ``qid Q0 docid rank score tag`` (6 columns), ordered by rank, then by score
  (descending) for equal ranks, then by file order.

Line numbers in error messages are 1-based, like editors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal, overload

import numpy as np

from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.fields import Reading, current_reading, document_of
from ragdiag.io.jsonl import json_line, read_lines
from ragdiag.io.writer import PathLike

Qrels = dict[str, dict[str, int]]
Run = dict[str, list[tuple[str, float]]]
RunFormat = Literal["jsonl", "trec"]
RUN_FORMATS: tuple[str, ...] = ("jsonl", "trec")

__all__ = ["Qrels", "Run", "RUN_FORMATS", "check_ids_fit", "read_qrels", "read_run", "read_run_ids", "run_depth", "run_file_text", "run_ids"]


def _open_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of every non-blank line (:func:`ragdiag.io.jsonl.read_lines`)."""
    return read_lines(path)


def _split(line: str) -> list[str]:
    """Tab-separated when the line has a tab (ids may then hold spaces), else whitespace-separated."""
    if "\t" in line:
        return [cell.strip() for cell in line.strip().split("\t")]
    return line.split()


def _relevance(text: str) -> int | None:
    """An integer relevance grade ("1", "2", "1.0"); None when the cell is not one."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isfinite(value) and value == int(value):
        return int(value)
    return None


def read_qrels(path: PathLike, reading: Reading | None = None) -> Qrels:
    """query id → {doc id: relevance} from a TREC (4 columns) or BEIR (3 columns) qrels file, or a
    qrels table (CSV, JSONL, JSON, Parquet: :func:`ragdiag.data.own_inputs.qrels_table`).

    A first line whose relevance column is not an integer is a header and is skipped; a repeated
    (query, doc) pair with a different grade is an error naming both lines.
    """
    from ragdiag.data.own_inputs import is_table, qrels_table

    if is_table(Path(path), "qrels", reading):
        table = qrels_table(Path(path), reading)
        if not table:
            raise DataError(f"{path}: no judgements")
        return table
    source = str(path)
    qrels: Qrels = {}
    n_cols: int | None = None
    for number, line in _open_lines(path):
        cells = _split(line)
        if n_cols is None:
            if len(cells) not in (3, 4):
                hint = " (this looks like a TREC run file, not qrels)" if len(cells) == 6 else _shape_hint(path, "qrels")
                raise DataError.at(
                    source, number, None,
                    f"expected 3 columns (BEIR: query-id corpus-id score) or 4 (TREC: qid 0 docid rel), "
                    f"got {len(cells)}{hint}",
                )
            n_cols = len(cells)
            if _relevance(cells[-1]) is None:  # header line (BEIR's query-id / corpus-id / score)
                continue
        elif len(cells) != n_cols:
            layout = "BEIR (query-id corpus-id score)" if n_cols == 3 else "TREC (qid 0 docid rel)"
            raise DataError.at(source, number, None, f"expected {n_cols} columns like the first line, {layout}; got {len(cells)}")
        query_id, doc_id = cells[0], cells[-2]
        grade = _relevance(cells[-1])
        if grade is None:
            raise DataError.at(source, number, "relevance", f"not an integer: {cells[-1]!r}")
        docs = qrels.get(query_id)
        if docs is None:
            docs = qrels[query_id] = {}
        elif doc_id in docs and docs[doc_id] != grade:
            raise DataError.at(
                source, number, None,
                f"query '{query_id}' judges document '{doc_id}' {grade}, but line {_first_line(path, query_id, doc_id)} "
                f"judged it {docs[doc_id]}",
            )
        docs[doc_id] = grade
    if not qrels:
        raise DataError(f"{source}: no judgements")
    return qrels


def _first_line(path: PathLike, query_id: str, doc_id: str) -> int:
    """The line where ``query_id`` first judges ``doc_id`` (for the message about a conflicting repeat)."""
    for number, line in _open_lines(path):
        cells = _split(line)
        if len(cells) in (3, 4) and cells[0] == query_id and cells[-2] == doc_id:
            return number
    return 0


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _all_finite(values: list) -> bool:
    """Every value a finite int or float (bools are not scores); vectorised for the common case."""
    if set(map(type, values)) <= {float, int}:
        return not values or bool(np.isfinite(np.asarray(values, dtype=np.float64)).all())
    return all(_finite(v) for v in values)


@overload
def _read_jsonl_run(path: PathLike, with_scores: Literal[True] = ...) -> Run: ...


@overload
def _read_jsonl_run(path: PathLike, with_scores: Literal[False]) -> dict[str, list[str]]: ...


def _read_jsonl_run(path: PathLike, with_scores: bool = True) -> Run | dict[str, list[str]]:
    source = str(path)
    run: dict = {}
    first_line: dict[str, int] = {}
    for number, line in _open_lines(path):
        record = json_line(line, source, number, lenient=True)  # NaN and integers beyond 64 bits as before
        if not isinstance(record, dict):
            raise DataError(f"{source}: line {number}: expected a JSON object, got {type(record).__name__}")
        query_id, ids, scores = record.get("query_id"), record.get("ids"), record.get("scores")
        if type(query_id) is int or type(query_id) is float:  # exact beyond 64 bits with the standard parser
            query_id = json.loads(line).get("query_id")
        if query_id is None or isinstance(query_id, (dict, list, bool)):
            raise DataError.at(source, number, "query_id", "missing or not a string")
        query_id = str(query_id)
        if query_id in first_line:
            raise DataError.at(source, number, "query_id", f"query '{query_id}' already ranked on line {first_line[query_id]}")
        if not isinstance(ids, list):
            raise DataError.at(source, number, "ids", "missing or not a list of document ids")
        if not set(map(type, ids)) <= {str}:  # fast path: every id already a string
            ids = json.loads(line).get("ids")  # the standard parser keeps integers beyond 64 bits exact
            if any(isinstance(i, (dict, list, bool)) or i is None for i in ids):
                raise DataError.at(source, number, "ids", "missing or not a list of document ids")
            ids = [str(i) for i in ids]
        if scores is None:  # runs without scores: rank order only
            scores = [float(-rank) for rank in range(len(ids))]
        elif not isinstance(scores, list) or len(scores) != len(ids) or not _all_finite(scores):
            raise DataError.at(source, number, "scores", f"expected {len(ids)} finite numbers, one per id")
        if len(set(ids)) != len(ids):
            _reject_duplicates(source, number, query_id, ids)
        first_line[query_id] = number
        run[query_id] = list(zip(ids, map(float, scores))) if with_scores else ids
    return run


def _reject_duplicates(source: str, number: int, query_id: str, ids: Iterable[str]) -> None:
    seen: set[str] = set()
    for doc_id in ids:
        if doc_id in seen:
            raise DataError.at(source, number, None, f"query '{query_id}' ranks document '{doc_id}' twice")
        seen.add(doc_id)


def _read_trec_run(path: PathLike) -> Run:
    source = str(path)
    rows: dict[str, list[tuple[int, float, int, str]]] = {}
    where: dict[tuple[str, str], int] = {}
    for number, line in _open_lines(path):
        cells = _split(line)
        if len(cells) != 6:
            hint = " (this looks like a qrels file, not a run)" if len(cells) in (3, 4) else _shape_hint(path, "run")
            raise DataError.at(source, number, None, f"expected 6 columns 'qid Q0 docid rank score tag', got {len(cells)}{hint}")
        query_id, _, doc_id, rank_text, score_text, _ = cells
        try:
            rank = int(rank_text)
        except ValueError:
            raise DataError.at(source, number, "rank", f"not an integer: {rank_text!r}") from None
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise DataError.at(source, number, "score", f"not a finite number: {score_text!r}")
        if (query_id, doc_id) in where:
            raise DataError.at(
                source, number, None,
                f"query '{query_id}' ranks document '{doc_id}' twice (lines {where[(query_id, doc_id)]} and {number})",
            )
        where[(query_id, doc_id)] = number
        rows.setdefault(query_id, []).append((rank, -score, number, doc_id))
    run: Run = {}
    for query_id, entries in rows.items():
        entries.sort()
        run[query_id] = [(doc_id, -neg_score) for _, neg_score, _, doc_id in entries]
    return run


def _shape_hint(path: PathLike, expected: str) -> str:
    """`` (this looks like CSV with columns …: read it with …)`` for a file of another shape."""
    from ragdiag.data.own_inputs import describe_wrong_shape

    note = describe_wrong_shape(Path(path), expected)
    flag = f"--{expected}-format csv|tsv|jsonl|json|parquet with --fields query_id=…,doc_id=…," + \
        ("relevance=…" if expected == "qrels" else "score=…")
    return f" ({note}; a {expected} table is read with {flag})" if note else ""


def read_run(path: PathLike, reading: Reading | None = None) -> Run:
    """query id → [(doc id, score)] best first, from a ragdiag ``run.jsonl``, a TREC run file or a run
    table (CSV, TSV, JSON, JSONL or Parquet rows of query id, doc id and score or rank:
    :func:`ragdiag.data.own_inputs.run_table`).

    A document ranked twice for one query is an error (it would count twice in recall).
    """
    from ragdiag.data.own_inputs import is_table, run_table

    if is_table(Path(path), "run", reading):
        run = run_table(Path(path), reading)
    else:
        run = _read_jsonl_run(path) if _is_jsonl(path) else _read_trec_run(path)
    if current_reading(reading).by_document:
        run = by_document(run)
    if not run:
        raise DataError(f"{path}: empty (no rankings)")
    return run


def read_run_ids(path: PathLike, reading: Reading | None = None) -> dict[str, list[str]]:
    """query id → ranked doc ids, best first: :func:`read_run` without the scores (same checks and
    errors; a run.jsonl is read without building (id, score) pairs)."""
    from ragdiag.data.own_inputs import is_table

    if is_table(Path(path), "run", reading) or current_reading(reading).by_document:
        return run_ids(read_run(path, reading))
    run = _read_jsonl_run(path, with_scores=False) if _is_jsonl(path) else run_ids(_read_trec_run(path))
    if not run:
        raise DataError(f"{path}: empty (no rankings)")
    return run


def _is_jsonl(path: PathLike) -> bool:
    """A run file is run.jsonl when its first non-blank line starts with ``{``; empty files are an error."""
    first = next(_open_lines(path), None)
    if first is None:
        raise DataError(f"{path}: empty (no rankings)")
    return first[1].lstrip().startswith("{")


def by_document(run: Run) -> Run:
    """Each ranking of passages ``path#n`` as a ranking of their documents (:func:`ragdiag.io.fields.document_of`),
    a document at the rank of its best passage, with that passage's score (MaxP)."""
    out: Run = {}
    for query_id, pairs in run.items():
        seen: dict[str, float] = {}
        for doc_id, score in pairs:
            seen.setdefault(document_of(doc_id), score)
        out[query_id] = list(seen.items())
    return out


def run_ids(run: Run) -> dict[str, list[str]]:
    """query id → ranked doc ids (scores dropped)."""
    return {query_id: [doc_id for doc_id, _ in pairs] for query_id, pairs in run.items()}


def run_depth(run: Run) -> int:
    """The longest list in the run (0 for an empty run)."""
    return max((len(pairs) for pairs in run.values()), default=0)


def _trec_lines(run: Run, tag: str) -> Iterator[str]:
    for query_id, pairs in run.items():
        for rank, (doc_id, score) in enumerate(pairs, start=1):
            yield f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {tag}\n"


# What splits a row or a column of each written layout: any whitespace in a TREC run (space-separated
# columns); a tab or any line break str.splitlines() honours in a tab-separated file (BEIR qrels TSV).
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LAYOUTS = {
    "trec": ("a TREC run file", "empty or contains whitespace", lambda v: any(ch.isspace() for ch in v)),
    "trec-qrels": ("TREC qrels", "empty or contains whitespace", lambda v: any(ch.isspace() for ch in v)),
    "tsv": ("a tab-separated file", "empty or contains a tab or a line break",
            lambda v: any(ch == "\t" or ch in _LINE_BREAKS for ch in v)),
}


def check_ids_fit(layout: Literal["trec", "trec-qrels", "tsv"], named: Iterable[tuple[str, Iterable[str]]], fix: str = "") -> None:
    """Refuse an id that would split a row or a column of ``layout`` (the one check of every TREC and
    TSV writer, run before any paid call); ``named`` pairs a description (``"document id in
    corpus.jsonl"``) with its ids; ``fix`` is the way out added to the message."""
    target, problem, splits = _LAYOUTS[layout]
    for what, values in named:
        for value in values:
            if not value or splits(value):
                raise RagdiagError(f"{what} {value!r} cannot be written to {target} ({problem}){'; ' + fix if fix else ''}")


def run_file_text(run: Run, fmt: RunFormat | str = "jsonl", tag: str = "ragdiag") -> str:
    """``run`` as the text of a ``run.jsonl`` file (one ``{"query_id", "ids", "scores"}`` object a line)
    or of a TREC run file (``qid Q0 docid rank score tag``, rank from 1; ids and the tag must not
    contain whitespace). The command writes it through :mod:`ragdiag.io.writer`."""
    if fmt == "jsonl":
        return "".join(json.dumps({"query_id": q, "ids": [d for d, _ in p], "scores": [float(s) for _, s in p]},
                                  ensure_ascii=False) + "\n" for q, p in run.items())
    if fmt != "trec":
        raise RagdiagError(f"unknown run format '{fmt}': expected jsonl or trec")
    check_ids_fit("trec", [("tag", [tag]), ("query id", run), ("document id", (d for p in run.values() for d, _ in p))],
                  "use the jsonl format")
    return "".join(_trec_lines(run, tag))
