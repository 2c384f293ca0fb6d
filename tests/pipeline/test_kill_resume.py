"""SIGKILL in the middle of a grading run with 8 workers: the rerun (in the test's process) completes,
repeats no cached call, and the cache stays consistent. 20 queries (120 judge calls, 15 per worker): the
kill lands after a third of them, with ~0.5 s of calls still to go at 50 ms each, far beyond the 10 ms poll."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ragdiag.remote.call_cache import CACHE_FILE
from tests.pipeline.tiny_data import write_many

RAGDIAG = Path(sys.executable).with_name("ragdiag")
QUERIES = 20


def _cached_keys(cache_dir: Path) -> set[str]:
    with sqlite3.connect(cache_dir / CACHE_FILE) as conn:
        return {k for (k,) in conn.execute("SELECT key FROM calls")}


def test_sigkill_mid_run_then_rerun_resumes_without_repeats(server, run_cli, tmp_path):
    texts, ranked = write_many(tmp_path / "data", QUERIES)
    answers, graded, cache = tmp_path / "answers.jsonl", tmp_path / "graded.json", tmp_path / "cache"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--out", answers, "--base-url", server.base_url,
                   "--workers", "8", cache_dir=cache).exit_code == 0
    judge_calls = QUERIES * 3 * 2  # rows (3 ks a query) x repeats
    generation_entries = len(_cached_keys(cache))
    grade = ["grade", "--answers", str(answers), "--out", str(graded), "--base-url", server.base_url, "--workers", "8",
             "--repeats", "2"]
    cmd = [str(RAGDIAG), *grade, "--cache-dir", str(cache), "--no-progress"]
    env = {**os.environ, "OPENAI_API_KEY": "test"}
    server.latency = 0.05
    start_requests = server.requests
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while server.completed - start_requests < judge_calls // 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    time.sleep(0.2)  # requests of the dead process that were already on the wire are counted on arrival
    sent_first = server.requests - start_requests
    assert 0 < sent_first < judge_calls, "the kill did not land mid-run"
    kept = _cached_keys(cache)
    judge_kept = len(kept) - generation_entries
    assert 0 < judge_kept <= sent_first  # every completed call that reached the cache is still there

    # the rerun in this process (what it reads is the dead process's cache file; a second interpreter
    # start would only add its imports), without the latency that let the kill land mid-run
    server.latency = 0
    before = server.requests
    rerun = run_cli(*grade, cache_dir=cache)
    assert rerun.exit_code == 0, rerun.output
    sent_second = server.requests - before
    assert sent_second == judge_calls - judge_kept  # nothing already cached is sent again
    manifest = json.loads((tmp_path / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["cache_hits"] == judge_kept and manifest["summary"]["coverage"] == 1.0
    with sqlite3.connect(cache / CACHE_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == generation_entries + judge_calls
    assert len(json.loads(graded.read_text())) == QUERIES * 3
