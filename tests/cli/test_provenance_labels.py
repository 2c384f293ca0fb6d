"""Test-server and simulated output is labelled from provenance, not from a model name (issue 34):
the test servers mark their replies (``system_fingerprint``), the client reads the mark, the call
cache and the run record keep it, and the verdicts computed from marked replies say so; simulated
grades say ``"simulated_grades": true`` in every row."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.loaders import load_graded_file
from ragdiag.io.provenance import TEST_SERVER_MARK, origin_of
from ragdiag.remote.call_cache import CACHE_FILE, CallCache
from ragdiag.report.provenance import TEST_SERVER_LINE
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer

runner = CliRunner()


def test_the_test_server_marks_every_reply():
    body = ChatServer.completion({"model": "toy", "messages": [{"role": "user", "content": "hi"}]}, "hello")
    assert body["system_fingerprint"] == TEST_SERVER_MARK and origin_of(body) == TEST_SERVER_MARK
    assert origin_of({"system_fingerprint": "fp_44709d6fcb"}) == ""  # a real server's fingerprint


def test_a_toy_model_run_is_labelled_and_the_cache_and_run_record_keep_the_mark(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts, ranked = write_tiny(tmp_path / "data")
    cache, out = tmp_path / "cache", tmp_path / "out"
    with ChatServer() as server:
        url = server.base_url
        done = runner.invoke(app, ["pipeline", "--texts", str(texts), "--ranked", str(ranked), "--k", "2,5",
                                   "--out-dir", str(out), "--base-url", server.base_url, "--model", "toy",
                                   "--cache-dir", str(cache), "--no-progress", "--min-samples", "2"])
    assert done.exit_code == 0, done.output
    assert TEST_SERVER_LINE in " ".join(done.stdout.split()) and TEST_SERVER_LINE in " ".join(done.stderr.split())
    manifest = json.loads(next(out.glob("graded*.manifest.json")).read_text())
    assert manifest["run_record"]["test_server_replies"] > 0
    assert json.loads((out / "correlation.json").read_text())["run_record"]["test_server_replies"] > 0
    entries = list(CallCache(cache / CACHE_FILE).export())
    assert entries and {e["origin"] for e in entries} == {TEST_SERVER_MARK}
    # the verdict on the graded file, in another run: labelled from the manifest beside it
    again = runner.invoke(app, ["correlate", "--graded", str(out / "graded.json"), "--min-samples", "2"])
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("TEST SERVER:")
    # replayed from the cache without the server: the cache kept the mark
    replay = runner.invoke(app, ["grade", "--answers", str(out / "answers.jsonl"), "--out", str(tmp_path / "g.json"),
                                 "--model", "toy", "--base-url", url, "--cache-dir", str(cache), "--cache", "replay",
                                 "--no-progress"])
    assert replay.exit_code == 0, replay.output
    assert json.loads((tmp_path / "g.json.manifest.json").read_text())["run_record"]["test_server_replies"] > 0
    assert TEST_SERVER_LINE in " ".join(replay.stderr.split())


def test_a_cache_written_before_the_mark_is_upgraded(tmp_path):
    path = tmp_path / CACHE_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, prompt TEXT NOT NULL, request TEXT "
                     "NOT NULL, reply TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
                     "created REAL NOT NULL)")
        conn.execute("INSERT INTO calls VALUES ('k', 'm', 'p@v1', '{}', 'old reply', 1, 1, 0)")
    cache = CallCache(path)
    assert cache.get("k")["origin"] == "" and cache.get("k")["reply"] == "old reply"
    cache.put("k2", {"model": "m", "prompt": "p@v1"}, "new", 1, 1, TEST_SERVER_MARK)
    assert cache.get("k2")["origin"] == TEST_SERVER_MARK


def test_the_judge_noise_demo_writes_simulated_grades_in_every_row(tmp_path, monkeypatch):
    from tools import judge_noise_demo

    monkeypatch.setattr(sys, "argv", ["judge_noise_demo.py", str(tmp_path), "--labelled", "10"])
    judge_noise_demo.main()
    rows = json.loads((tmp_path / "graded.json").read_text())
    human = [json.loads(line) for line in (tmp_path / "human.jsonl").read_text().splitlines()]
    assert all(r["simulated_grades"] is True for r in rows + human)
    assert load_graded_file(tmp_path / "graded.json").source.simulated_grades is True


@pytest.mark.slow  # calibrate runs its bootstraps (about 15 s)
def test_calibrate_on_simulated_files_says_so(tmp_path):
    golden = Path(__file__).resolve().parent / "golden"
    graded = [{**row, "simulated_grades": True} for row in json.loads((golden / "calibrate_graded.json").read_text())]
    (tmp_path / "graded.json").write_text(json.dumps(graded))
    done = runner.invoke(app, ["calibrate", "--graded", str(tmp_path / "graded.json"), "--human",
                               str(golden / "calibrate_human.jsonl")], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"SIMULATED GRADES: {tmp_path / 'graded.json'} say \"simulated_grades\": true")
