"""Typed records of the retrieval-response dataset (paper 003, appendix A.1; docs/methods.md#1-the-retrieval-response-dataset).

Validation errors name the file, the record number (1-based, as editors count) and the field.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from ragdiag.errors import DataError

SUBSET_OF_DATASET = {
    "msmarco": "M",
    "arxiv": "A",
    "hotpotqa-p": "Hp",
    "hotpotqa-s": "Hs",
    "nq": "N",
}
DATASET_NAMES = (*SUBSET_OF_DATASET, "all")


def subset_of(sample_id: str) -> str:
    """The subset of a sample id: the part before the first '-' ("Hp-e-5" → "Hp")."""
    return sample_id.split("-", 1)[0]


def _require(record: Any, source: str, index: int, name: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(record, dict):
        raise DataError.at(source, index, None, f"expected a JSON object, got {type(record).__name__}")
    if name not in record:
        raise DataError.at(source, index, name, "missing")
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DataError.at(source, index, name, f"expected {names}, got {type(value).__name__}")
    return value


def _int_list(record: dict, source: str, index: int, name: str) -> list[int]:
    values = _require(record, source, index, name, list)
    for pos, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise DataError.at(source, index, name, f"item {pos} is {v!r}, expected an integer")
    return values


def check_permutation(rank: list[int], nc: int, source: str, number: int) -> None:
    """``rank`` must order every candidate exactly once: a permutation of 0..Nc−1."""
    if len(rank) != nc:
        raise DataError.at(source, number, "rank", f"has {len(rank)} items, expected Nc = {nc}")
    seen = [False] * nc
    for pos, i in enumerate(rank):
        if not 0 <= i < nc:
            raise DataError.at(source, number, "rank", f"item {pos} is {i}, not a candidate index 0..{nc - 1}")
        if seen[i]:
            raise DataError.at(source, number, "rank", f"candidate {i} appears twice (item {pos}); rank must be "
                               f"a permutation of 0..{nc - 1}")
        seen[i] = True


@dataclass(frozen=True)
class TextsSample:
    """A query with its positives ``p`` and negatives ``n`` (extra keys such as c1/c2/q2 kept)."""

    id: str
    q: str
    p: list[str]
    n: list[str]
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, record: Any, source: str = "<texts>", index: int = 1) -> TextsSample:
        sid = _require(record, source, index, "id", str)
        q = _require(record, source, index, "q", str)
        p = _require(record, source, index, "p", list)
        n = _require(record, source, index, "n", list)
        for name, texts in (("p", p), ("n", n)):
            if not all(isinstance(t, str) for t in texts):
                raise DataError.at(source, index, name, "every item must be a string")
        extra = {k: v for k, v in record.items() if k not in {"id", "q", "p", "n"}}
        return cls(sid, q, p, n, extra)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "q": self.q, "p": self.p, "n": self.n, **self.extra}


@dataclass(frozen=True)
class RankedSample:
    """One ranking of Nc candidates (index i < Np is positive i, else negative i − Np)."""

    id: str
    E: str
    Nc: int
    Np: int
    K: list[int]
    P: list[float]
    R: list[float]
    rank: list[int]

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.id, self.E, self.Nc, self.Np)

    @classmethod
    def from_json(cls, record: Any, source: str = "<ranked>", index: int = 1) -> RankedSample:
        sid = _require(record, source, index, "id", str)
        emb = _require(record, source, index, "E", str)
        nc = _require(record, source, index, "Nc", int)
        np_ = _require(record, source, index, "Np", int)
        ks = _int_list(record, source, index, "K")
        p = _require(record, source, index, "P", list)
        r = _require(record, source, index, "R", list)
        rank = _int_list(record, source, index, "rank")
        if len(p) != len(ks) or len(r) != len(ks):
            raise DataError.at(source, index, "P", f"P and R need one value per cut-off in K ({len(ks)})")
        if not 1 <= np_ <= nc:
            raise DataError.at(source, index, "Np", f"{np_} is not between 1 and Nc = {nc}")
        if any(k < 1 for k in ks):
            raise DataError.at(source, index, "K", f"cut-offs must be positive, got {ks}")
        for name, values in (("P", p), ("R", r)):
            if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in values):
                raise DataError.at(source, index, name, "every item must be a finite number")
        check_permutation(rank, nc, source, index)
        return cls(sid, emb, nc, np_, ks, [float(x) for x in p], [float(x) for x in r], rank)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GradedSample:
    """One (ranked sample, K) with its answers and the judge's 1–5 grade (None if missing)."""

    id: str
    E: str
    Nc: int
    Np: int
    K: int
    rank: list[int]
    inK: list[int]
    answer_ideal: str
    answer_topK: str
    grade: float | None
    P: float
    R: float
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, record: Any, source: str = "<graded>", index: int = 1) -> GradedSample:
        check_graded_record(record, source, index)
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        extra = {k: v for k, v in record.items() if k not in known}
        grade = record["grade"]
        return cls(
            record["id"], record["E"], record["Nc"], record["Np"], record["K"], list(record.get("rank", [])),
            record["inK"], record.get("answer_ideal", ""), record.get("answer_topK", ""),
            None if grade is None else float(grade), float(record.get("P", 0.0)), float(record.get("R", 0.0)),
            extra,
        )

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        extra = record.pop("extra")
        return {**record, **extra}


def check_graded_record(record: Any, source: str, number: int, allow_missing_grade: bool = True) -> None:
    """Validate one graded record (``number`` is 1-based, as editors count): the fields correlate
    needs, with their invariants 1 ≤ Np ≤ Nc, 1 ≤ K ≤ Nc, len(inK) = K, inK ∈ {0, 1}, sum(inK) ≤ Np,
    and a finite grade in [1, 5].

    ``grade`` may be null (a judge reply that held no grade; correlate skips and counts it).
    """
    _require(record, source, number, "id", str)
    _require(record, source, number, "E", str)
    nc = _require(record, source, number, "Nc", int)
    np_ = _require(record, source, number, "Np", int)
    k = _require(record, source, number, "K", int)
    if nc < 1:
        raise DataError.at(source, number, "Nc", f"{nc} is not a positive candidate count")
    if np_ < 1:
        raise DataError.at(source, number, "Np", f"{np_} is not a positive count")
    if np_ > nc:
        raise DataError.at(source, number, "Np", f"{np_} positives exceed Nc = {nc} candidates")
    if k < 1:
        raise DataError.at(source, number, "K", f"{k} is not a positive cut-off")
    if k > nc:
        raise DataError.at(source, number, "K", f"cut-off {k} exceeds Nc = {nc} candidates")
    in_k = record.get("inK")
    if in_k is None:
        raise DataError.at(source, number, "inK", "missing")
    if not isinstance(in_k, list):
        raise DataError.at(source, number, "inK", f"expected list, got {type(in_k).__name__}")
    if len(in_k) != k:
        raise DataError.at(source, number, "inK", f"has {len(in_k)} items but K = {k}")
    if any(type(v) is not int or v not in (0, 1) for v in in_k):
        raise DataError.at(source, number, "inK", "items must be 0 or 1")
    if sum(in_k) > np_:
        raise DataError.at(source, number, "inK", f"{sum(in_k)} positives in the top K exceed Np = {np_}")
    if "grade" not in record:
        raise DataError.at(source, number, "grade", "missing")
    grade = record["grade"]
    if grade is None and allow_missing_grade:
        return
    if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not 1 <= grade <= 5:
        raise DataError.at(source, number, "grade", f"{grade!r} is not a finite grade between 1 and 5")


def graded_key(record: dict) -> tuple[str, str, int, int, int]:
    """The identity of a graded sample: (id, E, Nc, Np, K); two records may not share it."""
    return (record["id"], record["E"], record["Nc"], record["Np"], record["K"])
