"""What a batch puts into the cache (:mod:`ragdiag.llm.batch`, ``ragdiag batch collect``): the run's own
cache wherever collect runs, a vLLM output collected in parts, replies cut as the synchronous path
cuts them, and logprob replies kept with their logprobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.llm.client import MAX_REPLY_CHARS
from ragdiag.remote.call_cache import CACHE_FILE, CallCache
from tests.llm.test_batch import FAST, _vllm_output, _write, cli, generate


def entries(cache: Path) -> int:
    return CallCache(cache / CACHE_FILE).stats()["entries"] if (cache / CACHE_FILE).exists() else 0


def test_collect_from_another_folder_fills_the_runs_relative_cache(tiny, server, tmp_path, monkeypatch):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    args = ["--batch", "openai", "--batch-dir", tmp_path / "b", *FAST]
    first = generate(tiny, tmp_path / "a.jsonl", server, Path("cache"), *args, "--batch-wait", "0")
    assert first.exit_code == 4, first.output
    assert json.loads((tmp_path / "b" / "batches.json").read_text())["cache_dir"] == str(work / "cache")
    monkeypatch.chdir(elsewhere)
    for _ in range(3):
        got = cli("batch", "collect", tmp_path / "b")
        assert got.exit_code == 0, got.output
    assert entries(work / "cache") == 11 and not (elsewhere / "cache").exists()
    monkeypatch.chdir(work)
    again = generate(tiny, tmp_path / "a.jsonl", server, Path("cache"), *args)
    assert again.exit_code == 0, again.output
    assert server.uploads == server.batches_created == 1, "the rerun finds the collected replies: nothing uploaded again"


def test_a_vllm_output_collected_in_two_parts_closes_the_file(tiny, server, tmp_path):
    args = ["--batch", "vllm-file", "--batch-dir", tmp_path / "b", "--no-progress"]
    assert generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args).exit_code == 4
    rows = _vllm_output(tmp_path / "b" / "requests-0001.jsonl", server)
    rows[7] = {**rows[7], "response": {"status_code": 500, "body": {"error": {"message": "test failure"}}}}
    first = cli("batch", "collect", tmp_path / "b", "--from", _write(tmp_path / "part1.jsonl", rows[:6]),
                "--format", "json")
    assert first.exit_code == 0 and json.loads(first.output)["open"] == 1
    second = cli("batch", "collect", tmp_path / "b", "--from", _write(tmp_path / "part2.jsonl", rows[6:]))
    assert second.exit_code == 2 and "1 of 5 results are failures" in second.output
    state = json.loads((tmp_path / "b" / "batches.json").read_text())["entries"][0]
    assert state["collected"] is True and state["status"] == "collected" and "seen" not in state
    failures = (tmp_path / "b" / state["failures"]).read_text().splitlines()
    assert [json.loads(f)["custom_id"] for f in failures] == [rows[7]["custom_id"]]
    rerun = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
    assert rerun.exit_code == 4 and "1 requests written to 1 file(s)" in rerun.output  # only the failed one


def test_a_huge_batch_reply_is_cut_like_a_synchronous_one(tiny, server, tmp_path):
    args = ["--batch", "vllm-file", "--batch-dir", tmp_path / "b", "--no-progress"]
    assert generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args).exit_code == 4
    rows = _vllm_output(tmp_path / "b" / "requests-0001.jsonl", server)
    rows[0]["response"]["body"]["choices"][0]["message"]["content"] = "x" * 1_000_000
    assert cli("batch", "collect", tmp_path / "b", "--from", _write(tmp_path / "out.jsonl", rows)).exit_code == 0
    reply = CallCache(tmp_path / "cache" / CACHE_FILE).get(rows[0]["custom_id"])["reply"]
    assert len(reply) < MAX_REPLY_CHARS + 200 and reply.startswith("x" * MAX_REPLY_CHARS)
    assert "reply cut at 100,000 of 1,000,000 characters" in reply


def _answers(tiny, server, tmp_path) -> Path:
    texts, ranked = tiny
    answers = tmp_path / "answers.jsonl"
    res = cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2,5", "--out", answers, "--base-url",
              server.base_url, "--cache-dir", tmp_path / "gen-cache", "--no-progress")
    assert res.exit_code == 0, res.output
    return answers


def test_logprob_grades_through_the_batch_equal_the_synchronous_ones(tiny, server, tmp_path):
    answers = _answers(tiny, server, tmp_path)
    common = ["grade", "--answers", answers, "--base-url", server.base_url, "--grade-mode", "logprobs", "--no-progress"]
    sync = cli(*common, "--out", tmp_path / "sync.json", "--cache-dir", tmp_path / "sync-cache")
    assert sync.exit_code == 0, sync.output
    batch = cli(*common, "--out", tmp_path / "batch.json", "--cache-dir", tmp_path / "cache", "--batch", "openai",
                "--batch-dir", tmp_path / "b", "--batch-poll", "0.01")
    assert batch.exit_code == 0, batch.output
    graded = json.loads((tmp_path / "batch.json").read_text())
    assert all(r["grade"] is not None and len(r["grade_probs"]) == 5 for r in graded)
    assert graded == json.loads((tmp_path / "sync.json").read_text())


def test_a_batch_reply_without_logprobs_is_one_line_and_caches_nothing(tiny, server, tmp_path):
    answers = _answers(tiny, server, tmp_path)
    server.omit_logprobs = True
    res = cli("grade", "--answers", answers, "--base-url", server.base_url, "--grade-mode", "logprobs", "--no-progress",
              "--out", tmp_path / "batch.json", "--cache-dir", tmp_path / "cache", "--batch", "openai", "--batch-dir",
              tmp_path / "b", "--batch-poll", "0.01")
    errors = [line for line in res.output.splitlines() if line.startswith("ragdiag: error:")]
    assert res.exit_code == 2 and len(errors) == 1 and "returned no logprobs" in errors[0], res.output
    assert entries(tmp_path / "cache") == 0 and not (tmp_path / "batch.json").exists()


@pytest.mark.parametrize("mode", ["logprobs", "digit"])
def test_a_batch_reply_without_a_grade_is_asked_again_by_the_next_run(tiny, server, tmp_path, mode):
    answers = _answers(tiny, server, tmp_path)
    args = ["grade", "--answers", answers, "--base-url", server.base_url, "--grade-mode", mode, "--no-progress",
            "--cache-dir", tmp_path / "cache", "--batch", "openai", "--batch-dir", tmp_path / "b", "--batch-poll", "0.01"]
    server.script_judge(*["no grade here, only prose"] * 40)  # judge and repair replies of the first run
    first = cli(*args, "--out", tmp_path / "first.json")
    assert first.exit_code == 3 and all(r["grade"] is None for r in json.loads((tmp_path / "first.json").read_text()))
    server.judge_script.clear()  # the judge is fixed: the rerun sends the ungraded items again, as a batch
    created = server.batches_created
    again = cli(*args, "--out", tmp_path / "again.json")
    assert again.exit_code == 0, again.output
    records = json.loads((tmp_path / "again.json").read_text())
    assert all(r["grade"] is not None for r in records) and server.batches_created == created + 1
    assert json.loads((tmp_path / "again.json.manifest.json").read_text())["summary"]["retried_unparsed"] == len(records)


def test_batch_replies_keep_the_test_servers_mark(tiny, server, tmp_path):
    """A test server's provenance mark travels with its batch replies: cached with them, and counted
    in the run record, as on the synchronous path."""
    out = tmp_path / "a.jsonl"
    done = generate(tiny, out, server, tmp_path / "cache", "--batch", "openai", "--batch-dir", tmp_path / "b", *FAST)
    assert done.exit_code == 0, done.output
    record = json.loads((tmp_path / "a.jsonl.manifest.json").read_text())["run_record"]
    assert record["test_server_replies"] > 0
    cache = CallCache(tmp_path / "cache" / CACHE_FILE)
    origins = {row[0] for row in cache.store.query("SELECT origin FROM calls")}
    assert origins == {"ragdiag-test-server"}


def test_collect_fills_the_runs_cache_whatever_ragdiag_cache_dir_says(tiny, server, tmp_path, monkeypatch):
    """The cache a batch folder recorded wins over $RAGDIAG_CACHE_DIR (a default, not the run's choice)."""
    args = ["--batch", "openai", "--batch-dir", tmp_path / "b", *FAST]
    first = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "run-cache", *args, "--batch-wait", "0")
    assert first.exit_code == 4, first.output
    monkeypatch.setenv("RAGDIAG_CACHE_DIR", str(tmp_path / "other-cache"))
    for _ in range(3):
        got = cli("batch", "collect", tmp_path / "b")
        assert got.exit_code == 0, got.output
    assert entries(tmp_path / "run-cache") == 11 and not (tmp_path / "other-cache").exists()
