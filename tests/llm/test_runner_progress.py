"""The LLM runner reports progress through ragdiag.io.progress: nothing for short work in a log,
a line every few seconds with done/total for long work (stderr)."""

from __future__ import annotations

from ragdiag.io import progress
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.runner import run_items


def _client(tmp_path) -> LLMClient:
    return LLMClient(ClientConfig(model="m", base_url="http://127.0.0.1:9/v1", cache="off", cache_dir=tmp_path, workers=2))


def test_short_work_is_silent_in_a_log(tmp_path, capsys):
    client = _client(tmp_path)
    outcome = run_items(client, lambda x: x * 2, [1, 2, 3], ["a", "b", "c"], "generating", progress=True)
    client.close()
    assert outcome.results == [2, 4, 6] and capsys.readouterr().err == ""


def test_long_work_prints_progress_lines(tmp_path, capsys, monkeypatch):
    # a line after every item (the default is one every LINE_EVERY_S seconds)
    monkeypatch.setattr(progress.LineProgress.__init__, "__defaults__", (0.0, None, progress.time.monotonic))
    client = _client(tmp_path)
    run_items(client, lambda x: x, list(range(4)), [str(i) for i in range(4)], "grading", progress=True)
    client.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("grading: 1/4 (25%)") and lines[-1].startswith("grading: 4/4 (100%)")
