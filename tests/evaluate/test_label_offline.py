"""``ragdiag label`` offline against the toy model test server: its label replies are query-word
overlap grades (test-server output, never an LLM's judgement), so the command can be tried with no key."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.chat_server import label_reply
from tests.servers.toy_model import ToyModel


def test_label_reply_is_query_word_overlap():
    user = "<query>who painted the mona lisa</query>\n\n<passage>Leonardo painted the Mona Lisa.</passage>"
    assert json.loads(label_reply(user))["grade"] == 1 + int(5 * 4 / 5)  # painted, the, mona, lisa of 5 words
    assert json.loads(label_reply(user.replace("Leonardo painted the Mona Lisa.", "Pasta recipes.")))["grade"] == 1
    assert label_reply('<passage id="1">a generation prompt</passage>') is None


def test_label_runs_offline_on_the_toy_model(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    docs = ["Leonardo painted the Mona Lisa in Florence.", "The Eiffel tower is in Paris.",
            "Mona Lisa hangs in the Louvre in Paris.", "Pasta needs salted water."]
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(docs)))
    queries.write_text(json.dumps({"_id": "q1", "text": "who painted the mona lisa"}) + "\n")
    with ToyModel() as toy:
        args = ["label", "--corpus", str(corpus), "--queries", str(queries), "--pool", "bm25", "--pool-depth", "4",
                "--model", "ragdiag-test-server", "--base-url", toy.base_url, "--cache-dir", str(tmp_path / "cache"),
                "--no-progress", "--min-per-query", "4"]
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "qrels.tsv")], env={"COLUMNS": "100"})
        assert result.exit_code == 0, result.output
        sent = toy.judge_requests
        again = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "again.tsv"), "--cache", "replay"])
        assert again.exit_code == 0 and toy.judge_requests == sent
    rows = [line.split("\t") for line in (tmp_path / "qrels.tsv").read_text().splitlines()[1:]]
    grades = {doc: int(score) for _, doc, score in rows}
    # BM25 pools the two passages sharing words with the query: 4 and 3 of its 5 words
    assert grades == {"d0": 5, "d2": 4} and sent == 2
    assert (tmp_path / "again.tsv").read_text() == (tmp_path / "qrels.tsv").read_text()
    assert "TEST SERVER: the replies and grades are ragdiag's test-server output" in result.output
