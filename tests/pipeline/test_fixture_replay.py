"""The recorded call cache in fixtures/llm-cache replays the whole pipeline offline (no server, no key)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tools.record_llm_cache import REPLAY_BASE_URL, pipeline_args


def test_recorded_cache_replays_the_pipeline_offline(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fixture = resource_path("fixtures", "llm-cache")
    runner = CliRunner()
    cache = tmp_path / "cache"
    imported = runner.invoke(app, ["cache", "import", str(fixture / "calls.jsonl"), "--cache-dir", str(cache)])
    assert imported.exit_code == 0 and "imported" in imported.output
    stats = json.loads(runner.invoke(app, ["cache", "stats", "--json", "--cache-dir", str(cache)]).output)
    assert {g["model"] for g in stats["groups"]} == {"ragdiag-test-server"}
    assert {g["prompt"] for g in stats["groups"]} >= {"generation@v2", "grading@v2"}
    args = [*pipeline_args(fixture, tmp_path / "out", cache, REPLAY_BASE_URL), "--cache", "replay"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    graded = json.loads((tmp_path / "out" / "graded.json").read_text())
    assert graded == json.loads((fixture / "graded.json").read_text())
    assert all(r["grade"] is not None for r in graded)
    manifest = json.loads((tmp_path / "out" / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["calls"] == 0 and manifest["summary"]["coverage"] == 1.0
    correlation = json.loads((tmp_path / "out" / "correlation.json").read_text())
    assert correlation["results"] and correlation["meta"]["rows"] == len(graded)


def test_cache_export_import_prune_cli(tmp_path):
    runner = CliRunner()
    fixture = resource_path("fixtures", "llm-cache")
    cache = tmp_path / "c"
    assert runner.invoke(app, ["cache", "import", str(fixture / "calls.jsonl"), "--cache-dir", str(cache)]).exit_code == 0
    out = tmp_path / "export.jsonl"
    res = runner.invoke(app, ["cache", "export", "--out", str(out), "--cache-dir", str(cache)])
    assert res.exit_code == 0
    assert out.read_text() == (fixture / "calls.jsonl").read_text()  # export is sorted and complete
    res = runner.invoke(app, ["cache", "prune", "--prompt", "generation@v1", "--cache-dir", str(cache)])
    assert res.exit_code == 0 and "deleted" in res.output
    res = runner.invoke(app, ["cache", "prune", "--cache-dir", str(cache)])
    assert res.exit_code == 2 and "needs --model and/or --prompt" in res.output
    res = runner.invoke(app, ["cache", "stats", "--cache-dir", str(tmp_path / "empty")])
    assert res.exit_code == 2 and "no LLM call cache" in res.output
