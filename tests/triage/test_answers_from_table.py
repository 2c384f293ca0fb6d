"""Issue 39: the answers a team keeps (CSV, TSV, a JSON list, Parquet with a query id and an answer column)
are read by ``triage --answers-from`` through the one table reader, with field mapping; a table given where
generate's answers file is needed (``grade --answers``) is one error saying what it looks like and what reads it.
Pure reading: no server, no call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.errors import RagdiagError
from ragdiag.io.fields import reading
from ragdiag.triage.given_answers import GivenAnswer, read_given_answers

ROWS = [{"qid": "q1", "question": "What is the code of t1?", "response": "ZX1Q"},
        {"qid": "q2", "question": "What is the code of t2?", "response": "AB2C"}]


def _write(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".json":
        path.write_text(json.dumps(rows))
    elif path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        sep = "\t" if path.suffix == ".tsv" else ","
        columns = list(rows[0])
        path.write_text("\n".join([sep.join(columns), *(sep.join(str(r[c]) for c in columns) for r in rows)]) + "\n")
    return path


@pytest.mark.parametrize("name", ["answers.csv", "answers.tsv", "answers.json", "answers.parquet", "answers.export"])
def test_a_table_of_answers_is_read_by_its_common_names(tmp_path, name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path = _write(tmp_path / name, ROWS)
    assert read_given_answers(path, 5) == {"q1": GivenAnswer("What is the code of t1?", "ZX1Q"),
                                           "q2": GivenAnswer("What is the code of t2?", "AB2C")}


def test_field_mapping_names_the_id_and_the_answer_and_rows_at_other_k_are_left_out(tmp_path):
    rows = [{"item": "q1", "reply": "ZX1Q", "K": 5}, {"item": "q1", "reply": "old", "K": 3},
            {"item": "q2", "reply": "", "K": 5}]
    path = _write(tmp_path / "answers.csv", rows)
    with reading("query_id=item,answer=reply").activate():
        assert read_given_answers(path, 5) == {"q1": GivenAnswer(None, "ZX1Q")}  # q2's empty answer: left out


def test_a_table_without_an_answer_column_says_what_it_looks_like_and_the_flag(tmp_path):
    path = _write(tmp_path / "answers.csv", [{"qid": "q1", "reply": "ZX1Q"}])
    with pytest.raises(RagdiagError) as err:
        read_given_answers(path, 5)
    assert "no answer field (recognised: answer|response|output|actual_output)" in str(err.value)
    assert "this looks like CSV with columns qid, reply: read it with `--fields answer=reply`" in str(err.value)


def test_a_query_answered_twice_in_a_table_is_refused(tmp_path):
    path = _write(tmp_path / "answers.csv", [ROWS[0], ROWS[0]])
    with pytest.raises(RagdiagError, match="query 'q1' already has an answer \\(line 2\\)"):
        read_given_answers(path, 5)


def test_grade_given_a_table_says_what_it_looks_like_and_what_reads_it(tmp_path):
    path = _write(tmp_path / "answers.csv", ROWS)
    res = CliRunner().invoke(app, ["grade", "--answers", str(path), "--out", str(tmp_path / "graded.json"),
                                   "--model", "m", "--base-url", "http://127.0.0.1:9/v1"], env={"OPENAI_API_KEY": "x"})
    assert res.exit_code == 2, res.output
    assert res.output.count("ragdiag: error:") == 1 and "Traceback" not in res.output
    assert "this looks like CSV with columns qid, question, response, not the answers file of `ragdiag generate`" \
        in res.output
    assert "triage --answers-from" in res.output and not (tmp_path / "graded.json").exists()


def test_triage_takes_a_csv_of_production_answers_as_its_baseline(server, tmp_path):
    """End to end against the fault-model test server (test-server replies, never an LLM's): the CSV's
    answers are the baseline, read and graded, not generated; its questions are checked against the queries."""
    from tests.triage.test_triage_answers_from import _questions, _rows, _triage

    ids = ("q151", "q272")
    questions = _questions()
    path = _write(tmp_path / "production.csv", [{"query_id": q, "question": questions[q], "answer": "I do not know."}
                                                for q in ids])
    res = _triage(server, tmp_path / "out", tmp_path / "cache", "--answers-from", path, ids=ids)
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "out")
    assert {q: rows[q]["answers"]["baseline"] for q in ids} == dict.fromkeys(ids, "I do not know.")
    assert json.loads((tmp_path / "out" / "triage.json").read_text())["meta"]["baseline"] == \
        "read from --answers-from (not generated)"

    _write(path, [{"query_id": "q151", "question": "What is the code of somewhere else?", "answer": "x"}])
    before = server.completed
    res = _triage(server, tmp_path / "out2", tmp_path / "cache", "--answers-from", path, ids=("q151",))
    assert res.exit_code == 2 and "but the file's answer is to" in res.output and server.completed == before
