"""Import Ragas / DeepEval style evaluation datasets into ragdiag's texts, ranked, answers and graded files.

One input record is one question with its retrieved contexts (in ranked order), the system's
answer, the reference answer and the reference (relevant) contexts; optionally a score.

- texts:   ``{id, q, p, n}`` with p = the reference contexts, n = the retrieved contexts that are not
           among them (exact text match after whitespace normalisation);
- ranked:  ``{id, E, Nc, Np, K, P, R, rank}``: the retrieved order first, then the unretrieved
           reference contexts; K = [number retrieved]; E names the system (``--system``);
- answers: the ``ragdiag generate`` layout (meta line, ``ideal`` row = reference answer, ``topK`` row
           = the system's answer on its K retrieved contexts), ready for ``ragdiag grade``;
- graded:  with a score, the ``samples_graded`` schema for ``correlate``. The scale is decided once
           per file: every score in [0, 1] → 0–1 scores, grade = 1 + 4·score; any score above 1 →
           1–5 grades, kept as they are (``--score-scale`` forces either).
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.jsonl import read_jsonl_lines
from ragdiag.io.text_input import check_utf8


@dataclass(frozen=True)
class Fields:
    """Accepted spellings (first present wins) of each field, per tool."""

    question: tuple[str, ...]
    contexts: tuple[str, ...]
    answer: tuple[str, ...]
    reference: tuple[str, ...]
    reference_contexts: tuple[str, ...]


FORMATS = {
    "ragas": Fields(question=("user_input", "question"), contexts=("retrieved_contexts", "contexts"),
                    answer=("response", "answer"), reference=("reference", "ground_truth", "ground_truths"),
                    reference_contexts=("reference_contexts", "ground_truth_contexts")),
    "deepeval": Fields(question=("input",), contexts=("retrieval_context",), answer=("actual_output",),
                       reference=("expected_output",), reference_contexts=("context",)),
}
ID_FIELDS = ("id", "query_id", "qid", "_id")


def read_records(path: Path) -> list[dict[str, Any]]:
    """JSON list, ``{"test_cases"|"samples"|"data": [...]}``, JSONL, CSV, or Parquet (pyarrow) records."""
    path = Path(path)
    if not path.is_file():
        raise RagdiagError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".parquet", ".tsv"):
        from ragdiag.data.metric_table import _rows

        return [_decode_lists(row) for _, row in _rows(path)]
    raw = path.read_bytes()
    check_utf8(path, raw)
    if suffix == ".jsonl":
        return [record for _, record in read_jsonl_lines(path)]
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise DataError.at(str(path), None, None, f"not valid JSON ({err})") from None
    if isinstance(data, dict):
        for key in ("test_cases", "samples", "data", "goldens"):
            if isinstance(data.get(key), list):
                return data[key]
        raise DataError.at(str(path), None, None, "expected a list of records (or test_cases / samples / data)")
    if not isinstance(data, list):
        raise DataError.at(str(path), None, None, "expected a list of records")
    return data


def _decode_lists(row: dict[str, Any]) -> dict[str, Any]:
    """CSV cells holding lists become lists: JSON (``["a", "b"]``) or Python literals (``['a', 'b']``,
    what pandas' ``to_csv`` — and so Ragas' — writes for list columns)."""
    out = {}
    for key, value in row.items():
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                with contextlib.suppress(ValueError, SyntaxError):
                    value = ast.literal_eval(value)
        out[key] = value
    return out


def _pick(record: dict, names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if name in record and record[name] is not None:
            return name, record[name]
    return None, None


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def required_fields(tool: str) -> str:
    f = FORMATS[tool]
    return (f"{' or '.join(f.question)} (text), {' or '.join(f.contexts)} (list of texts, ranked), "
            f"{' or '.join(f.answer)} (text), {' or '.join(f.reference)} (text), "
            f"{' or '.join(f.reference_contexts)} (list of relevant texts)")


def _texts(record: dict, names: tuple[str, ...], source: str, index: int, tool: str, what: str) -> list[str] | str:
    name, value = _pick(record, names)
    if name is None:
        raise DataError.at(source, index, names[0], f"missing ({what}); {tool} records need: {required_fields(tool)}")
    if what.startswith("list"):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError.at(source, index, name, "expected a list of texts")
        return value
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):  # ground_truths: ["..."]
        value = value[0]
    if not isinstance(value, str):
        raise DataError.at(source, index, name, f"expected a text, got {type(value).__name__}")
    return value


SCORE_SCALES = ("0-1", "1-5")


def _score_value(score: Any, source: str, index: int, column: str) -> float | None:
    """A score as a float; None for a missing one (absent, empty, NaN); an error for anything else."""
    if score is None or score == "":
        return None
    if isinstance(score, bool):
        raise DataError.at(source, index, column, f"not a number: {score!r}")
    try:
        value = float(score)
    except (TypeError, ValueError):
        raise DataError.at(source, index, column, f"not a number: {str(score)[:40]!r}") from None
    if math.isnan(value):
        return None
    if math.isinf(value):
        raise DataError.at(source, index, column, f"{value} is not a finite score")
    return value


def score_scale(scores: list[float | None], source: str, column: str, forced: str | None = None) -> str:
    """The scale of a whole score column, decided once per file: every value in [0, 1] → ``0-1``,
    any value above 1 → ``1-5`` (``forced`` overrides the guess); a value outside the scale is an
    error naming its record. Deciding per value would read a 1–5 grade of 1 as a 0–1 score of 1.0."""
    if forced is not None and forced not in SCORE_SCALES:
        raise RagdiagError(f"--score-scale must be one of {', '.join(SCORE_SCALES)}, got '{forced}'")
    present = [(i, v) for i, v in enumerate(scores, start=1) if v is not None]
    scale = forced or ("1-5" if any(v > 1 for _, v in present) else "0-1")
    low, high = (0.0, 1.0) if scale == "0-1" else (1.0, 5.0)
    for index, value in present:
        if not low <= value <= high:
            how = "given with --score-scale" if forced else "guessed from the column: a value above 1 means 1-5"
            raise DataError.at(source, index, column, f"{value:g} does not fit the {scale} scale ({how}); the whole "
                               "column must be 0-1 scores or 1-5 grades (force one with --score-scale 0-1|1-5)")
    return scale


def grade_of(value: float | None, scale: str) -> float | None:
    """Grade 1–5 of a checked score: 1 + 4·score on the 0–1 scale, the value itself on 1–5."""
    if value is None:
        return None
    return 1 + 4 * value if scale == "0-1" else value


@dataclass
class Converted:
    """An imported dataset in ragdiag's files: texts, ranked, answers (without the meta line) and graded
    (empty without a score) records, and the score column's scale (None without a score)."""

    texts: list[dict[str, Any]]
    ranked: list[dict[str, Any]]
    answers: list[dict[str, Any]]
    graded: list[dict[str, Any]]
    score_scale: str | None


def convert(records: list[dict[str, Any]], tool: str, source: str, system: str = "imported", subset: str = "U",
            score_col: str | None = None, scale: str | None = None) -> Converted:
    """texts, ranked, answers (without the meta line) and graded (empty without a score) records.

    Ids become ``SUBSET-ID`` (``U-q1``) since ragdiag reads the subset from the id's prefix. The
    score column's scale is decided once for the file (:func:`score_scale`; ``scale`` forces it)."""
    if tool not in FORMATS:
        raise RagdiagError(f"unknown format '{tool}': expected {' or '.join(FORMATS)}")
    if not records:
        raise DataError(f"{source}: no records (an empty {tool} dataset): nothing to import")
    scores: list[float | None] = []
    if score_col:
        for index, record in enumerate(records, start=1):
            if not isinstance(record, dict):
                raise DataError.at(source, index, None, f"expected an object; {tool} records need: {required_fields(tool)}")
            if score_col not in record:
                raise DataError.at(source, index, score_col, "missing (the score column)")
            scores.append(_score_value(record[score_col], source, index, score_col))
        scale = score_scale(scores, source, score_col, scale)
    fields = FORMATS[tool]
    texts: list[dict[str, Any]] = []
    ranked: list[dict[str, Any]] = []
    ideal: list[dict[str, Any]] = []
    topk: list[dict[str, Any]] = []
    graded: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise DataError.at(source, index, None, f"expected an object; {tool} records need: {required_fields(tool)}")
        _, rid = _pick(record, ID_FIELDS)
        qid = f"{subset}-{rid if rid is not None else f'q{index}'}"
        if qid in seen:
            raise DataError.at(source, index, "id", f"'{qid}' appears twice")
        seen.add(qid)
        question = _texts(record, fields.question, source, index, tool, "text")
        retrieved = _texts(record, fields.contexts, source, index, tool, "list of texts")
        answer = _texts(record, fields.answer, source, index, tool, "text")
        reference = _texts(record, fields.reference, source, index, tool, "text")
        relevant = _texts(record, fields.reference_contexts, source, index, tool, "list of texts")
        if not relevant:
            raise DataError.at(source, index, fields.reference_contexts[0], "empty: at least one relevant context needed")
        if not retrieved:
            raise DataError.at(source, index, fields.contexts[0], "empty: no retrieved context")
        positives = list(dict.fromkeys(relevant))
        index_of = {_norm(p): i for i, p in enumerate(positives)}
        negatives = list(dict.fromkeys(c for c in retrieved if _norm(c) not in index_of))
        negative_of = {c: len(positives) + i for i, c in enumerate(negatives)}
        order = list(dict.fromkeys(index_of[_norm(c)] if _norm(c) in index_of else negative_of[c] for c in retrieved))
        nc, np_, k = len(positives) + len(negatives), len(positives), len(order)
        rank = order + [i for i in range(nc) if i not in order]
        in_k = [1 if i < np_ else 0 for i in order]
        hits = sum(in_k)
        texts.append({"id": qid, "q": question, "p": positives, "n": negatives})
        ranked.append({"id": qid, "E": system, "Nc": nc, "Np": np_, "K": [k], "P": [hits / k], "R": [hits / np_],
                       "rank": rank})
        ideal.append({"kind": "ideal", "id": qid, "q": question, "answer": reference})
        row = {"kind": "topK", "id": qid, "E": system, "Nc": nc, "Np": np_, "K": k, "rank": order, "inK": in_k,
               "P": hits / k, "R": hits / np_, "q": question, "answer": answer}
        topk.append(row)
        if score_col and scale is not None:  # score_scale decided it above
            grade = grade_of(scores[index - 1], scale)
            graded.append({"id": qid, "E": system, "Nc": nc, "Np": np_, "K": k, "rank": order, "inK": in_k,
                           "answer_ideal": reference, "answer_topK": answer, "grade": grade, "P": hits / k,
                           "R": hits / np_, "score": record[score_col]})
    return Converted(texts, ranked, ideal + topk, graded, scale if score_col else None)
