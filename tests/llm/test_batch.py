"""``--batch``: the OpenAI Batch API loop against the local batch test server (real openai SDK),
the vLLM run-batch file path, resume without resubmitting, splitting, costs, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.remote.call_cache import CACHE_FILE, CallCache
from tests.servers.batch_server import BatchServer

FAST = ["--batch-poll", "0.01", "--no-progress"]


def cli(*args) -> object:
    return CliRunner().invoke(app, [str(a) for a in args])


def generate(tiny, out: Path, server, cache: Path, *extra) -> object:
    texts, ranked = tiny
    return cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2,5", "--out", out,
               "--base-url", server.base_url, "--cache-dir", cache, *extra)


def test_openai_batch_gives_the_synchronous_answers(tiny, server, tmp_path):
    sync = generate(tiny, tmp_path / "sync.jsonl", server, tmp_path / "sync-cache", "--no-progress")
    assert sync.exit_code == 0, sync.output
    chat_calls = server.requests
    batch = generate(tiny, tmp_path / "batch.jsonl", server, tmp_path / "cache", "--batch", "openai",
                     "--batch-dir", tmp_path / "b", *FAST)
    assert batch.exit_code == 0, batch.output
    assert server.requests == chat_calls, "a batch run sends no synchronous chat call"
    assert server.uploads == server.batches_created == 1
    assert (tmp_path / "sync.jsonl").read_text().splitlines()[1:] == (tmp_path / "batch.jsonl").read_text().splitlines()[1:]
    manifest = json.loads((tmp_path / "batch.jsonl.manifest.json").read_text())
    summary = manifest["summary"]
    # 12 rows, 11 distinct requests, all answered by the batch: calls of this run, not cache hits
    assert summary["batch_calls"] == summary["calls"] == 11 and summary["cache_hits"] == 0
    assert summary["requests"] == 12
    assert manifest["run"]["batch"] == "openai"
    lines = [json.loads(x) for x in (tmp_path / "b" / "requests-0001.jsonl").read_text().splitlines()]
    cache = CallCache(tmp_path / "cache" / CACHE_FILE)
    assert all(cache.get(line["custom_id"]) is not None and line["url"] == "/v1/chat/completions"
               and line["method"] == "POST" for line in lines)
    # a rerun finds everything in the cache: nothing uploaded again
    again = generate(tiny, tmp_path / "again.jsonl", server, tmp_path / "cache", "--batch", "openai",
                     "--batch-dir", tmp_path / "b", *FAST)
    assert again.exit_code == 0 and server.uploads == 1


def test_costs_side_by_side(tiny, server, tmp_path):
    res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--batch-dir",
                   tmp_path / "b", "--model", "gpt-4o-mini", *FAST)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "a.jsonl.manifest.json").read_text())["summary"]
    assert summary["cost_sync"] > 0 and summary["cost_batch"] == pytest.approx(summary["cost_sync"] / 2)
    assert summary["cost"] == pytest.approx(summary["cost_batch"])


def test_split_into_files_within_the_limits(tiny, server, tmp_path):
    res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--batch-dir",
                   tmp_path / "b", "--batch-max-requests", "4", *FAST)
    assert res.exit_code == 0, res.output
    files = sorted((tmp_path / "b").glob("requests-*[0-9].jsonl"))
    assert [len(f.read_text().splitlines()) for f in files] == [4, 4, 3] and server.batches_created == 3
    one = len((tmp_path / "b" / "requests-0001.jsonl").read_bytes().splitlines()[0]) + 1
    res = generate(tiny, tmp_path / "c.jsonl", server, tmp_path / "cache2", "--batch", "openai", "--batch-dir",
                   tmp_path / "b2", "--batch-max-bytes", str(2 * one + 1), *FAST)
    assert res.exit_code == 0, res.output
    assert all(f.stat().st_size <= 2 * one + 1 for f in (tmp_path / "b2").glob("requests-*[0-9].jsonl"))
    res = generate(tiny, tmp_path / "d.jsonl", server, tmp_path / "cache3", "--batch", "openai", "--batch-dir",
                   tmp_path / "b3", "--batch-max-bytes", "100", *FAST)
    assert res.exit_code == 2 and "over the 100-byte limit of one batch file" in res.output
    assert not (tmp_path / "cache3" / CACHE_FILE).exists() or CallCache(tmp_path / "cache3" / CACHE_FILE).stats()["entries"] == 0


def test_interrupt_then_rerun_resumes_without_resubmitting(tiny, server, tmp_path):
    args = ["--batch", "openai", "--batch-dir", tmp_path / "b", "--batch-poll", "0.01", "--no-progress"]
    first = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args, "--batch-wait", "0")
    assert first.exit_code == 4 and "rerun" in first.output and "ragdiag batch status" in first.output
    assert server.batches_created == 1 and not (tmp_path / "a.jsonl").exists()
    status = cli("batch", "status", tmp_path / "b", "--format", "json")
    assert status.exit_code == 0, status.output
    entry = json.loads(status.output)["entries"][0]
    assert entry["batch_id"] == "batch_1" and entry["requests"] == 11
    second = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
    assert second.exit_code == 0, second.output
    assert server.uploads == server.batches_created == 1, "nothing submitted twice"


def test_batch_collect_and_cancel_commands(tiny, server, tmp_path):
    args = ["--batch", "openai", "--batch-dir", tmp_path / "b", "--batch-poll", "0.01", "--no-progress"]
    generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args, "--batch-wait", "0")
    statuses, answered = [], 0
    for _ in range(3):  # validating -> in_progress -> finalizing -> completed: one step per retrieve
        got = cli("batch", "collect", tmp_path / "b", "--format", "json")
        assert got.exit_code == 0, got.output
        result = json.loads(got.output)
        statuses.append(result["entries"][0]["status"])
        answered += result["answered"]
    assert statuses == ["finalizing", "completed", "completed"] and answered == 11 and result["open"] == 0
    assert CallCache(tmp_path / "cache" / CACHE_FILE).stats()["entries"] == 11
    generate(tiny, tmp_path / "c.jsonl", server, tmp_path / "cache-c", "--batch", "openai", "--batch-dir",
             tmp_path / "c", "--batch-wait", "0", "--no-progress")
    cancel = cli("batch", "cancel", tmp_path / "c", "--format", "json")
    assert cancel.exit_code == 0 and json.loads(cancel.output)["cancelled"] == ["batch_2"]


@pytest.mark.parametrize("outcome, message", [
    ("failed", "failed: test server: the batch failed validation"),
    ("expired", "expired with 6 of 11 requests failed"),
])
def test_failed_and_expired_batches_are_one_line_and_cache_only_answers(tiny, tmp_path, monkeypatch, outcome, message):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with BatchServer(outcome=outcome) as server:
        res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--batch-dir",
                       tmp_path / "b", *FAST)
        assert res.exit_code == 2 and message in res.output
        assert res.output.count("ragdiag: error:") == 1 and "Traceback" not in res.output
        cached = CallCache(tmp_path / "cache" / CACHE_FILE).stats()["entries"]
        assert cached == (0 if outcome == "failed" else 5)
        failures = (tmp_path / "b" / "requests-0001.failures.jsonl").read_text().splitlines()
        assert len(failures) == 11 - cached
        server.outcome = "completed"  # the rerun sends only the failed requests again
        again = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--batch-dir",
                         tmp_path / "b", *FAST)
        assert again.exit_code == 0, again.output
        assert len((tmp_path / "b" / "requests-0002.jsonl").read_text().splitlines()) == 11 - cached


def test_partial_failures_error_file(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with BatchServer(fail_every=3) as server:
        res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--batch-dir",
                       tmp_path / "b", *FAST)
        assert res.exit_code == 2 and "completed with 3 of 11 requests failed" in res.output
        assert "HTTP 500: test server failure" in res.output
        assert CallCache(tmp_path / "cache" / CACHE_FILE).stats()["entries"] == 8


def _vllm_output(request_file: Path, server: BatchServer, drop: int = 0) -> list[dict]:
    """What ``vllm run-batch -o`` writes for the request file (replies from the test server's logic)."""
    rows = []
    for number, raw in enumerate(request_file.read_text().splitlines()[drop:]):
        line = json.loads(raw)
        _, body = server.reply(line["body"])
        rows.append({"id": f"vllm-{number}", "custom_id": line["custom_id"],
                     "response": {"status_code": 200, "request_id": f"vllm-batch-{number}", "body": body}, "error": None})
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_vllm_file_path(tiny, server, tmp_path):
    args = ["--batch", "vllm-file", "--batch-dir", tmp_path / "b", "--no-progress"]
    first = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
    assert first.exit_code == 4 and "vllm run-batch -i" in first.output and "ragdiag batch collect" in first.output
    requests = tmp_path / "b" / "requests-0001.jsonl"
    rows = _vllm_output(requests, server)
    # bad collect files: unknown and duplicated custom_ids; nothing reaches the cache
    unknown = _write(tmp_path / "unknown.jsonl", [*rows[:2], {**rows[2], "custom_id": "f" * 64}])
    res = cli("batch", "collect", tmp_path / "b", "--from", unknown)
    assert res.exit_code == 2 and "unknown.jsonl: line 3: custom_id 'ffffffffffffffff…' is not a request" in res.output
    twice = _write(tmp_path / "twice.jsonl", [*rows, rows[0]])
    res = cli("batch", "collect", tmp_path / "b", "--from", twice)
    assert res.exit_code == 2 and "line 12: custom_id" in res.output and "appears twice (first at" in res.output
    assert not (tmp_path / "cache" / CACHE_FILE).exists() or CallCache(tmp_path / "cache" / CACHE_FILE).stats()["entries"] == 0
    # rerun before collecting: the same file, not a second one
    again = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
    assert again.exit_code == 4 and not (tmp_path / "b" / "requests-0002.jsonl").exists()
    good = _write(tmp_path / "output.jsonl", rows)
    res = cli("batch", "collect", tmp_path / "b", "--from", good, "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["answered"] == 11
    done = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
    assert done.exit_code == 0, done.output
    assert server.requests == 0 and server.batches_created == 0


def test_bad_batch_options(tiny, server, tmp_path):
    res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--cache", "replay")
    assert res.exit_code == 2 and "--batch needs --cache rw" in res.output
    res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch-dir", tmp_path / "b")
    assert res.exit_code == 2 and "--batch-dir needs --batch" in res.output
    res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "openai", "--batch-wait", "nan")
    assert res.exit_code == 2
    res = cli("batch", "status", tmp_path / "nowhere")
    assert res.exit_code == 2 and "not a batch folder" in res.output


def test_pipeline_stages_wait_for_their_batches(tiny, server, tmp_path):
    """generate's batch, then grade's batch, then correlate on the Parquet graded table; the grades
    equal a synchronous run's."""
    texts, ranked = tiny
    common = ["pipeline", "--texts", texts, "--ranked", ranked, "--k", "2,3,5", "--segments", "nw", "--min-samples", "3",
              "--base-url", server.base_url, "--no-progress"]
    sync = cli(*common, "--out-dir", tmp_path / "sync", "--cache-dir", tmp_path / "sync-cache")
    assert sync.exit_code == 0, sync.output
    res = cli(*common, "--out-dir", tmp_path / "batch", "--cache-dir", tmp_path / "cache", "--batch", "openai",
              "--batch-dir", tmp_path / "b", "--batch-poll", "0.01", "--parquet")
    assert res.exit_code == 0, res.output
    assert server.batches_created == 2, "one batch for generate, then one for grade"
    import pyarrow.parquet as pq

    batch_grades = pq.read_table(tmp_path / "batch" / "graded.parquet").column("grade").to_pylist()
    assert batch_grades == [r["grade"] for r in json.loads((tmp_path / "sync" / "graded.json").read_text())]
    corr = [json.loads((tmp_path / d / "correlation.json").read_text())["results"] for d in ("sync", "batch")]
    assert corr[0] and corr[0] == corr[1]


def test_pipeline_stops_with_the_command_that_resumes(tiny, server, tmp_path):
    texts, ranked = tiny
    args = ["pipeline", "--texts", texts, "--ranked", ranked, "--k", "2,5", "--segments", "nw", "--min-samples", "3",
            "--base-url", server.base_url, "--no-progress", "--out-dir", tmp_path / "out", "--cache-dir",
            tmp_path / "cache", "--batch", "openai", "--batch-dir", tmp_path / "b", "--batch-poll", "0.01",
            "--batch-wait", "0"]
    stops = 0
    for _ in range(10):
        res = cli(*args)
        if res.exit_code == 0:
            break
        assert res.exit_code == 4 and "rerun" in res.output and "nothing is submitted twice" in res.output
        stops += 1
    assert res.exit_code == 0 and stops >= 2 and server.batches_created == 2
    assert (tmp_path / "out" / "correlation.json").exists()


def test_label_with_batch_gives_the_synchronous_labels(tmp_path, monkeypatch):
    from tests.evaluate.test_label import (
        PASSAGES,
        QUERIES,
        UtilityJudgeServer,
        label,
        read_tsv,
    )

    class LabelBatchServer(UtilityJudgeServer, BatchServer):
        """The label test judge behind the Files and Batches endpoints."""

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    corpus, queries, run = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl", tmp_path / "run.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, (t, _, _) in PASSAGES.items()))
    queries.write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    run.write_text("".join(json.dumps({"query_id": q, "ids": [d for d, (_, qq, _) in PASSAGES.items() if qq == q]}) + "\n"
                           for q in QUERIES))
    data = {"corpus": corpus, "queries": queries, "run": run, "dir": tmp_path}
    with LabelBatchServer() as server:
        sync = label(data, tmp_path / "sync.tsv", base_url=server.base_url)
        assert sync.exit_code == 0, sync.output
        sent = server.requests
        batch = label(data, tmp_path / "batch.tsv", "--cache-dir", str(tmp_path / "batch-cache"), "--batch", "openai",
                      "--batch-dir", str(tmp_path / "b"), "--batch-poll", "0.01", base_url=server.base_url)
        assert batch.exit_code == 0, batch.output
        assert server.requests == sent and server.batches_created == 1
    assert read_tsv(tmp_path / "batch.tsv") == read_tsv(tmp_path / "sync.tsv")
