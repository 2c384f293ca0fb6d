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
        (["probe", "names", "--format", "xml"], "--format: 'xml' is not one of 'table', 'json'"),
        (["probe", "names", "--n-queries", "500"], "500 queries requested, but 'en' has only 60 topics"),
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
    args = ["probe", "names", "--lang", "fr", *API, "--n-queries", "4", "--runs", "3", "--seed", "2",
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
    table = runner.invoke(app, [a for a in args if a not in ("--format", "json")], env={"COLUMNS": "200"})
    header = next(line for line in table.stdout.splitlines() if "Condition" in line)
    assert "openai:text-embedding-3-large" in header and "voyage:voyage-3.5" in header  # side by side


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


def test_noise_rewrite_goes_through_the_llm_layer(api_server, tmp_path, monkeypatch):
    from ragdiag.probes.noise import build_noise_texts
    from ragdiag.probes.probe_data import load_queries
    from tests.servers.chat_server import ChatServer

    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "Why is the sky blue?", "reference": "Rayleigh scattering."}) + "\n"
                       + json.dumps({"query": "What is CRISPR?", "reference": "A gene-editing tool."}) + "\n")
    with ChatServer() as chat:
        args = ["noise", "--lang", "en", "--embedder", "openai:text-embedding-3-small", "--queries", str(queries),
                "--levels", "0,2,4", "--variants", "2", "--rewrite", "--model", "rewriter-model",
                "--base-url", chat.base_url, "--format", "json", "--cache-dir", str(tmp_path)]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        texts = build_noise_texts("en", load_queries(queries), [0, 2, 4], 2, 0)
        distinct_noisy = {texts.unique[i] for i in texts.noisy.reshape(-1)}
        assert chat.completed == len(distinct_noisy) >= 8  # every distinct noisy query, once (clean ones too)
        user_messages = [b["messages"][-1]["content"] for b in chat.bodies]
        assert len(set(user_messages)) == len(user_messages)  # no text sent twice
        assert any("Why is the sky blue?" in m for m in user_messages)
        assert all(b["model"] == "rewriter-model" for b in chat.bodies)
        assert "core information need" in chat.bodies[0]["messages"][0]["content"]
        assert doc["meta"]["rewrite"][0]["prompt"].startswith("query-rewrite@v")
        level4 = doc["levels"][-1]
        assert {"rewritten_cosine_to_reference", "rewritten_drop_pct", "recovery_pct"} <= set(level4)
        # this test server answers every rewrite with the same text, so all rewrites coincide
        assert set(doc["rewritten_examples"].values()) == {"test server reply"}
        sent = chat.requests
        again = runner.invoke(app, args)
        assert again.exit_code == 0 and chat.requests == sent  # the LLM cache answers the rerun
        prompt = doc["meta"]["rewrite"][0]["prompt"]
        assert f"llm calls [en · rewriter-model · {prompt}]: 0 calls" in again.stderr


def test_model_without_rewrite_is_an_error(tmp_path):
    result = runner.invoke(app, ["noise", "--model", "m", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2 and "only apply with --rewrite" in result.stderr
