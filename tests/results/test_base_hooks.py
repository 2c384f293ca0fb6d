"""The hooks of JsonRecord: ``nested_map`` (an object of records), ``flat`` (a record's keys in its
parent's object), ``optional`` (which ``None`` fields a record built in code leaves out), ``layout``
(the keys it writes, computed ones included) and a file without a required key."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragdiag.results.base import JsonRecord, plain


@dataclass
class _Share(JsonRecord):
    value: float | None
    count: int
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass(kw_only=True)
class _Counts(JsonRecord):
    calls: int = 0
    cost: float | None = 0.0
    optional: ClassVar[frozenset[str] | None] = frozenset()


@dataclass
class _Doc(JsonRecord):
    name: str
    shares: dict[str, _Share]
    note: str | None = None
    counts: _Counts = field(default_factory=_Counts)
    meta: dict[str, Any] | None = None
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {"shares": _Share}
    flat: ClassVar[tuple[str, type[JsonRecord]] | None] = ("counts", _Counts)
    optional: ClassVar[frozenset[str] | None] = frozenset({"meta"})
    layout: ClassVar[tuple[str, ...] | None] = ("meta", "name", "shares", "note", "calls", "cost", "total")

    def field_value(self, key: str) -> Any:
        if key == "total":
            return sum(s.count for s in self.shares.values())
        return super().field_value(key)


def test_a_fresh_record_writes_its_layout_with_nulls_but_the_optional_ones():
    doc = _Doc("a", {"x": _Share(None, 2), "y": _Share(0.5, 3)}, counts=_Counts(calls=4, cost=None))
    assert json.dumps(doc.to_json()) == json.dumps(
        {"name": "a", "shares": {"x": {"value": None, "count": 2}, "y": {"value": 0.5, "count": 3}}, "note": None,
         "calls": 4, "cost": None, "total": 5})
    doc.meta = {"command": "x"}
    assert list(doc.to_json())[:2] == ["meta", "name"]


def test_nested_map_and_flat_keys_read_back_into_their_records():
    text = {"meta": {"k": 1}, "name": "b", "shares": {"x": {"value": 1.0, "count": 1}}, "calls": 7, "cost": 0.25,
            "total": 1, "later": True}
    doc = _Doc.from_json(text)
    assert isinstance(doc.shares["x"], _Share) and doc.shares["x"].value == 1.0
    assert doc.counts.calls == 7 and doc.counts.cost == 0.25 and doc.note is None and not doc.has("note")
    assert doc.extra == {"total": 1, "later": True}
    assert json.dumps(doc.to_json()) == json.dumps(text)


def test_a_file_without_a_required_key_reads_it_as_none():
    share = _Share.from_json({"count": 3})
    assert share.value is None and share.to_json() == {"count": 3}


def test_plain_turns_tuples_paths_and_records_into_json():
    assert plain({"a": (1, 2), "p": Path("x/y"), "r": [_Share(0.1, 1)]}) == {
        "a": [1, 2], "p": "x/y", "r": [{"value": 0.1, "count": 1}]}
