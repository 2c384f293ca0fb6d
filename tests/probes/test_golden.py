"""Issue 17: the probe results are objects that write exactly the JSON written before them, and the
commands still write the same files (JSON and tables) on the same inputs (tests/probes/golden/)."""

from __future__ import annotations

import json

import pytest

from ragdiag.results.probes import NamesRealResult, NoiseResult, ProbeRun
from tests.golden import same_text
from tests.probes.golden_runs import GOLDEN, REPO, RUNS, golden_text, run_text, without_run_record


@pytest.mark.parametrize("name", ["names", "noise"])
def test_probe_objects_round_trip_the_golden_json(name):
    doc = json.loads((REPO / GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    probe = ProbeRun.from_json(doc)
    assert probe.to_json() == doc
    assert json.dumps(probe.to_json(), ensure_ascii=False, indent=2) + "\n" == (REPO / GOLDEN / f"{name}.json").read_text(encoding="utf-8")
    assert all(isinstance(r, NoiseResult) == (name == "noise") for r in probe.results)


def test_names_real_object_round_trips_the_golden_json():
    doc = json.loads((REPO / GOLDEN / "names_real.json").read_text(encoding="utf-8"))
    assert NamesRealResult.from_json(doc).to_json() == doc


@pytest.mark.parametrize("name", sorted(RUNS))
def test_rerun_writes_the_golden_json(name, tmp_path, monkeypatch):
    new = json.loads(run_text(name, tmp_path, monkeypatch, "json"))
    assert without_run_record(new) == without_run_record(json.loads(golden_text(f"{name}.json")))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_rerun_writes_the_golden_tables(name, tmp_path, monkeypatch):
    assert same_text(run_text(name, tmp_path, monkeypatch, "table"), golden_text(f"{name}.txt"))


def test_a_noise_rewrite_result_round_trips(tmp_path, monkeypatch):
    """--rewrite adds the rewritten columns, the recovery and the rewrite meta: all kept by the objects."""
    from typer.testing import CliRunner

    from ragdiag.cli import app
    from tests.servers.chat_server import ChatServer
    from tests.servers.embeddings_server import EmbeddingsServer

    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "Why is the sky blue?", "reference": "Rayleigh scattering."}) + "\n")
    corpus = REPO / GOLDEN / "corpus.jsonl"
    with EmbeddingsServer(dim=16) as server, ChatServer() as chat:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        done = CliRunner().invoke(app, ["noise", "--embedder", "openai:text-embedding-3-small", "--queries", str(queries),
                                        "--corpus", str(corpus), "--k", "3", "--levels", "0,4", "--variants", "1",
                                        "--rewrite", "--model", "m", "--base-url", chat.base_url, "--format", "json",
                                        "--cache-dir", str(tmp_path / "cache")])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    probe = ProbeRun.from_json(doc)
    assert probe.to_json() == doc
    level = probe.results[0].levels[-1]
    assert level.rewritten is not None and level.rewritten.retrieval is not None
    assert probe.results[0].meta.rewrite[0]["model"] == "m"
