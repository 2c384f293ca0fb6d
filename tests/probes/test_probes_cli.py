"""CLI: bad input gives one clear line and a non-zero exit; OpenAI and Voyage embedders run
through the same probe code against the local embeddings server (no model needed)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.embeddings_server import EmbeddingsServer

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["probe", "names", "--lang", "de"], "unknown language 'de': expected en, fr or en,fr"),
        (["probe", "names", "--ablations", "hard_name_mask,bogus"], "unknown ablation 'bogus'"),
        (["probe", "names", "--format", "xml"], "unknown format 'xml'"),
        (["probe", "names", "--queries", "500"], "--queries 500 exceeds the 60 topics for 'en'"),
        (["noise", "--lang", "es"], "unknown language 'es'"),
        (["noise", "--levels", "0-9"], "unknown noise level(s) [5, 6, 7, 8, 9]"),
        (["noise", "--embedder", "nope:x"], "unknown embedder 'nope:x'"),
    ],
)
def test_bad_input_one_line_nonzero_exit(args, message, tmp_path):
    result = runner.invoke(app, [*args, "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"ragdiag: error: {result.stderr.strip()[16:]}"]
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_empty_and_malformed_query_files(tmp_path):
    empty = tmp_path / "q.jsonl"
    empty.write_text("")
    result = runner.invoke(app, ["noise", "--queries", str(empty), "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2 and f"{empty}: no queries" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "fine"}\n{"query": 3}\n')
    result = runner.invoke(app, ["noise", "--queries", str(bad), "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2 and "record 1: field 'query': missing or empty" in result.stderr


@pytest.fixture()
def api_server(monkeypatch):
    with EmbeddingsServer(dim=16) as server:
        for prefix in ("OPENAI", "VOYAGE"):
            monkeypatch.setenv(f"{prefix}_API_KEY", "test-key")
            monkeypatch.setenv(f"{prefix}_BASE_URL", server.base_url)
        yield server


API = ["--embedder", "openai:text-embedding-3-large", "--embedder", "voyage:voyage-3.5"]


def test_names_probe_through_openai_and_voyage(api_server, tmp_path):
    args = ["probe", "names", "--lang", "fr", *API, "--queries", "4", "--runs", "3", "--seed", "2",
            "--format", "json", "--cache-dir", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    docs = json.loads(result.stdout)
    assert [d["embedder"].split("@")[0] for d in docs] == ["openai:text-embedding-3-large", "voyage:voyage-3.5"]
    unique = docs[0]["meta"]["texts"]["unique"]
    assert api_server.texts_embedded == 2 * unique  # each embedder embeds each distinct text once
    for doc in docs:
        assert doc["lang"] == "fr" and doc["meta"]["params"]["seed"] == 2
        abl = {a["name"]: a for a in doc["ablations"]}
        # random server vectors: Δ_name is noise, but the mask still makes C1, C2a, C2b identical
        assert abl["hard_name_mask"]["delta_name"] == 0.0 and abl["hard_name_mask"]["delta_name_sd"] == 0.0
        assert abl["hard_name_mask"]["abs_change"] == pytest.approx(-doc["base"]["delta_name"])
        assert doc["meta"]["embedding_calls"]["embedded"] == unique
    requests = api_server.requests
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and api_server.requests == requests  # all from the cache
    assert again.stderr.count("0 model calls, 0 texts embedded") == 2


def test_noise_probe_through_openai_and_voyage(api_server, tmp_path):
    result = runner.invoke(app, ["noise", "--lang", "en", *API, "--levels", "0,4", "--variants", "1",
                                 "--format", "json", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    docs = json.loads(result.stdout)
    assert len(docs) == 2
    for doc in docs:
        levels = doc["levels"]
        assert [lv["level"] for lv in levels] == [0, 4]
        assert levels[0]["cosine_to_clean"] == pytest.approx(1.0) and levels[0]["drop_pct"] == pytest.approx(0.0)
        assert levels[1]["cosine_to_clean"] < 0.9  # the server's vectors are unrelated for different texts
