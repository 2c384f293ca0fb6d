"""``ragdiag import traces``: span files written by the real exporter libraries (tests/data/trace_exports.py)
become questions, corpus and run, and with qrels texts, ranked and answers that ``grade`` reads."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.data.trace_exports import TURNS, console_export, otlp_json_export, phoenix_parquet_export

runner = CliRunner()
EXPORTS = {"openinference-console.json": console_export, "genai-otlp.json": otlp_json_export,
           "openinference-phoenix.parquet": phoenix_parquet_export}


def _import(*args: str):
    return runner.invoke(app, ["import", "traces", *args])


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_each_export_gives_questions_corpus_and_run_with_counts(tmp_path, name):
    spans = EXPORTS[name](tmp_path / name)
    done = _import(str(spans), "--out", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    assert "in 3 traces" in done.stderr and "kept 2, skipped 1" in done.stderr
    assert "skipped 1: no answer (no LLM span with output)" in done.stderr
    queries = [json.loads(line) for line in (tmp_path / "out" / "queries.jsonl").read_text().splitlines()]
    assert [q["text"] for q in queries] == [TURNS[0].question, TURNS[1].question]
    assert all(q["_id"].startswith("U-") and len(q["_id"]) == 2 + 32 for q in queries)
    corpus = [json.loads(line) for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()]
    assert [c["_id"] for c in corpus] == ["d1", "d2", "d3", "d4"]
    run = [json.loads(line) for line in (tmp_path / "out" / "run.jsonl").read_text().splitlines()]
    assert run[1]["ids"] == ["d3", "d4"] and run[1]["scores"] == [0.7, 0.6]
    manifest = json.loads((tmp_path / "out" / "import-traces.manifest.json").read_text())
    assert manifest["meta"]["kept"] == 2 and manifest["meta"]["skipped"] == {"no answer (no LLM span with output)": 1}
    assert not (tmp_path / "out" / "answers.jsonl").exists()


def test_traces_with_qrels_and_references_become_answers_that_grade_reads(tmp_path, monkeypatch):
    from tests.servers.chat_server import ChatServer

    spans = console_export(tmp_path / "spans.json")
    assert _import(str(spans), "--out", str(tmp_path / "first")).exit_code == 0
    ids = [json.loads(line)["_id"] for line in (tmp_path / "first" / "queries.jsonl").read_text().splitlines()]
    (tmp_path / "qrels.tsv").write_text(f"query-id\tcorpus-id\tscore\n{ids[0]}\td1\t1\n{ids[1]}\td4\t1\n")
    (tmp_path / "refs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": TURNS[0].question, "reference": "The Eiffel tower is in Paris."},
        {"id": ids[1], "reference": "It was built in 1889."}]))
    out = tmp_path / "out"
    done = _import(str(spans), "--out", str(out), "--qrels", str(tmp_path / "qrels.tsv"),
                   "--references", str(tmp_path / "refs.jsonl"))
    assert done.exit_code == 0, done.output
    assert "2 traces with a relevant document (answers), 0 without; 2 with a reference answer" in done.stderr
    rows = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    topk = [r for r in rows if r["kind"] == "topK"]
    assert [(r["inK"], r["rank"], r["answer"]) for r in topk] == [([1, 0], [0, 1], "It is in Paris."),
                                                                   ([0, 1], [1, 0], "In 1889.")]
    texts = json.loads((out / "texts.json").read_text())
    assert texts[1]["p"] == ["The tower was built in 1889."] and texts[1]["n"] == ["Lyon has two rivers."]
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ChatServer() as server:
        graded = runner.invoke(app, ["grade", "--answers", str(out / "answers.jsonl"), "--out", str(tmp_path / "g.json"),
                                     "--model", "ragdiag-test-server", "--base-url", server.base_url,
                                     "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert graded.exit_code == 0, graded.output
    result = json.loads((tmp_path / "g.json").read_text())
    assert len(result) == 2 and all(1 <= r["grade"] <= 5 for r in result)  # the test server's word overlap
    assert [r["answer_topK"] for r in result] == ["It is in Paris.", "In 1889."]


def test_a_file_that_is_not_spans_is_one_error_line(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"question": "q", "answer": "a"}\n')
    done = _import(str(bad), "--out", str(tmp_path / "out"))
    assert done.exit_code == 2
    assert done.stderr.startswith("ragdiag: error:") and "no context.trace_id" in done.stderr
    assert "Traceback" not in done.output and not (tmp_path / "out" / "queries.jsonl").exists()


def test_no_usable_trace_says_why_and_writes_nothing(tmp_path):
    spans = console_export(tmp_path / "spans.json", [TURNS[2]])
    done = _import(str(spans), "--out", str(tmp_path / "out"))
    assert done.exit_code == 2 and "1 × no answer (no LLM span with output)" in done.stderr
    assert not (tmp_path / "out" / "queries.jsonl").exists()


def test_references_without_qrels_is_refused_before_reading(tmp_path):
    spans = console_export(tmp_path / "spans.json")
    done = _import(str(spans), "--out", str(tmp_path / "out"), "--references", str(spans))
    assert done.exit_code == 2 and "--references needs --qrels" in done.stderr
