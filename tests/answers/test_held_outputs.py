"""A stage handed the previous stage's objects sees exactly what it would read from the file: the
answers rows (:meth:`AnswersFile.from_rows` vs :func:`read_answers`, errors included) and the bytes
whose sha256 the run records name (:func:`json_bytes` / :func:`jsonl_bytes` vs the writer's file)."""

from __future__ import annotations

import hashlib

import pytest

from ragdiag.answers.answers_file import AnswersFile, read_answers
from ragdiag.commands.llm_files import json_bytes, jsonl_bytes, write_held
from ragdiag.errors import DataError
from ragdiag.io.run_record import describe_input
from ragdiag.io.writer import write_json, write_jsonl

META = {"command": "generate", "llm": {"model": "toy", "temperature": 0.0}, "k": [1, 2]}
ROWS = [
    {"kind": "ideal", "id": "q1", "q": "Où est la gare ?", "lang": "fr", "answer": "Près du pont."},
    {"kind": "topK", "id": "q1", "E": "bm25", "Nc": 3, "Np": 1, "K": 2, "rank": [2, 0], "inK": [0, 1], "P": 0.5,
     "R": 1.0, "q": "Où est la gare ?", "lang": "fr", "answer": None, "error": "context length exceeded"},
    {"kind": "topK", "id": "q1", "E": "bm25", "Nc": 3, "Np": 1, "K": 1, "rank": [2], "inK": [0], "P": 0.0,
     "R": 0.0, "q": "Où est la gare ?", "lang": "fr", "answer": "Je ne sais pas.", "cut": {"passages": 1}},
]


def test_rows_in_memory_are_the_rows_of_the_file(tmp_path):
    path = write_jsonl(tmp_path / "answers.jsonl", [{"kind": "meta", "meta": META}, *ROWS])
    assert AnswersFile.from_rows(META, ROWS, path) == read_answers(path)
    assert read_answers(path).ideal == {"q1": "Près du pont."} and len(read_answers(path).rows) == 2


def test_rows_in_memory_are_checked_as_the_file_is(tmp_path):
    twice = [*ROWS, dict(ROWS[2])]
    path = write_jsonl(tmp_path / "answers.jsonl", [{"kind": "meta", "meta": META}, *twice])
    with pytest.raises(DataError) as from_file:
        read_answers(path)
    with pytest.raises(DataError) as from_memory:
        AnswersFile.from_rows(META, twice, path)
    assert str(from_memory.value) == str(from_file.value) and "line 5" in str(from_file.value)


@pytest.mark.parametrize("data", [ROWS, {"a": [1.5, None, "é"], "b": {"c": 2}}])
def test_held_bytes_are_the_writers_bytes(tmp_path, data):
    assert json_bytes(data) == write_json(tmp_path / "w.json", data).read_bytes()
    if isinstance(data, list):
        assert jsonl_bytes(data) == write_jsonl(tmp_path / "w.jsonl", data).read_bytes()
    held = write_held(tmp_path / "held.json", json_bytes(data), inputs=[])
    assert held.sha256 == hashlib.sha256(json_bytes(data)).hexdigest()
    assert dict(held.described()) == describe_input(held.path)  # what the run record would read back
