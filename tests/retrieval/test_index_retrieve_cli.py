"""``ragdiag index build``, ``ragdiag retrieve`` and ``robustness --run --qrels`` end to end.

Dense embeddings come from the local OpenAI-compatible test server (no torch), so these
tests are fast; one test uses the bundled local model on a handful of texts.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.embeddings_server import EmbeddingsServer

runner = CliRunner()
SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "scifact"

DOCS = [
    ("d1", "Cats", "Cats purr and sleep most of the day."),
    ("d2", "Dogs", "Dogs bark at the postman and love long walks."),
    ("d3", "Volcanoes", "Lava flows from erupting volcanoes in Iceland."),
    ("d4", "Tea", "Green tea contains caffeine and antioxidants."),
    ("d5", "Rivers", "The Seine river flows through Paris to the sea."),
]
QUERIES = [("q1", "why do dogs bark"), ("q2", "volcano lava eruption"), ("q3", "caffeine in green tea")]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def server():
    with EmbeddingsServer(dim=16) as srv:
        yield srv


@pytest.fixture()
def env(tmp_path, monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGDIAG_CACHE_DIR", str(tmp_path / "cache"))
    corpus = _jsonl(tmp_path / "corpus.jsonl", [{"_id": i, "title": t, "text": x} for i, t, x in DOCS])
    queries = _jsonl(tmp_path / "queries.jsonl", [{"_id": i, "text": x} for i, x in QUERIES])
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t1\nq3\td4\t1\nq3\td1\t0\n")
    return tmp_path, corpus, queries, qrels


def _build(tmp, corpus, server, *extra):
    return runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--embedder", "openai:m", "--base-url",
                               server.base_url, "--index-spec", "hnsw:M=8,efSearch=16|32", "--out-dir", str(tmp / "idx"), *extra])


def test_second_build_makes_no_embedding_calls(env, server):
    tmp, corpus, _, _ = env
    first = _build(tmp, corpus, server)
    assert first.exit_code == 0, first.output
    assert "embedding: 1 model calls, 5 texts embedded, 0 cache hits, 0 retries" in first.stdout
    assert "dense hnsw:M=8,efSearch=16|32 (faiss, cosine, dim 16" in first.stdout and "None" not in first.stdout
    requests = server.requests
    second = _build(tmp, corpus, server)
    assert "embedding: 0 model calls, 0 texts embedded, 5 cache hits" in second.stdout
    assert server.requests == requests
    manifest = json.loads((tmp / "idx" / "manifest.json").read_text())
    assert manifest["meta"]["params"] == {"M": 8, "efConstruction": 100, "efSearch": 16}
    assert manifest["meta"]["corpus_sha256"] and manifest["n_docs"] == 5


def test_retrieve_modes_and_labelled_robustness(env, server):
    tmp, corpus, queries, qrels = env
    assert _build(tmp, corpus, server).exit_code == 0
    runs = {}
    for mode in ("dense", "bm25", "hybrid"):
        out = tmp / f"{mode}.jsonl"
        result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp / "idx"), "--queries", str(queries), "--k", "3",
                                     "--mode", mode, "--out", str(out), "--base-url", server.base_url])
        assert result.exit_code == 0, result.output
        runs[mode] = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["query_id"] for r in runs[mode]] == ["q1", "q2", "q3"]
        if mode == "bm25":  # only passages sharing a term with the query, never zero-score fillers
            assert all(1 <= len(r["ids"]) <= 3 and min(r["scores"]) > 0 for r in runs[mode])
        else:
            assert all(len(r["ids"]) == 3 and len(set(r["ids"])) == 3 for r in runs[mode])
        meta = json.loads(Path(f"{out}.meta.json").read_text())
        assert meta["meta"]["mode"] == mode and meta["run_record"]["command"] == "ragdiag retrieve"
    assert [r["ids"][0] for r in runs["bm25"]] == ["d2", "d3", "d4"]
    assert json.loads(Path(f"{tmp / 'bm25.jsonl'}.meta.json").read_text())["meta"]["short_lists"] == 3
    for d, b, h in zip(runs["dense"], runs["bm25"], runs["hybrid"]):  # hybrid = RRF(k=60) of the two lists
        fused = {}
        for ranking in (d["ids"], b["ids"]):
            for rank, doc in enumerate(ranking, start=1):
                fused[doc] = fused.get(doc, 0) + 1 / (60 + rank)
        assert h["scores"][0] == pytest.approx(max(fused.values()))
    result = runner.invoke(app, ["robustness", "--run", str(tmp / "bm25.jsonl"), "--qrels", str(qrels), "--k", "1",
                                 "--format", "json", "--per-query", str(tmp / "pq.jsonl")])
    assert result.exit_code == 0, result.output
    point = json.loads(result.stdout)["points"][0]
    assert point["recall_mean"] == 1.0 and point["n_queries"] == 3 and point["recall_kind"] == "labelled (n/Np)"


def test_bad_inputs(env, server, tmp_path):
    tmp, corpus, queries, _ = env
    empty = tmp / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(app, ["index", "build", "--corpus", str(empty), "--out-dir", str(tmp / "x")])
    assert result.exit_code != 0 and "empty (no records)" in result.stderr
    broken = tmp / "broken.jsonl"
    broken.write_text('{"_id": "a", "text": "ok"}\n{"_id": "b"}\n')
    result = runner.invoke(app, ["index", "build", "--corpus", str(broken), "--out-dir", str(tmp / "x")])
    assert result.exit_code != 0 and "record 2: field 'text': missing" in result.stderr
    folder = tmp / "beir"  # --corpus takes a BEIR folder, as its help says; an empty one is no folder of documents
    folder.mkdir()
    result = runner.invoke(app, ["index", "build", "--corpus", str(folder), "--embedder", "none", "--out-dir", str(tmp / "x")])
    assert result.exit_code == 2 and f"{folder}: no documents (.txt, .md, .html, .pdf) in this folder" in result.stderr
    (folder / "corpus.jsonl").write_text(corpus.read_text())
    result = runner.invoke(app, ["index", "build", "--corpus", str(folder), "--embedder", "none", "--out-dir", str(tmp / "x")])
    assert result.exit_code == 0 and "indexed 5 documents" in result.stdout and "no dense index" in result.stdout
    assert _build(tmp, corpus, server).exit_code == 0
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp / "idx"), "--queries", str(queries), "--k", "6",
                                 "--mode", "bm25", "--out", str(tmp / "r.jsonl")])
    assert result.exit_code != 0 and "k=6 is larger than the 5 passages" in result.stderr
    (tmp / "not_an_index").mkdir()
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp / "not_an_index"), "--queries", str(queries),
                                 "--out", str(tmp / "r.jsonl")])
    assert result.exit_code != 0 and "not an index directory" in result.stderr
    result = _build(tmp, corpus, server, "--index-spec", "ivf:nlist=0")
    assert result.exit_code != 0 and "nlist must be positive" in result.stderr


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="../shared/data/scifact is absent")
def test_scifact_bm25_run_against_qrels(tmp_path, monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGDIAG_CACHE_DIR", str(tmp_path / "cache"))
    result = runner.invoke(app, ["index", "build", "--corpus", str(SCIFACT / "corpus.jsonl"), "--embedder", "openai:m",
                                 "--base-url", server.base_url, "--out-dir", str(tmp_path / "idx")])
    assert result.exit_code == 0, result.output
    lines = (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()
    test_ids = sorted({line.split("\t")[0] for line in lines[1:]}, key=int)[:100]  # 100 claims keep it fast
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("\n".join([lines[0], *[row for row in lines[1:] if row.split("\t")[0] in test_ids]]) + "\n")
    queries = _jsonl(tmp_path / "q.jsonl", [json.loads(row) for row in (SCIFACT / "queries.jsonl").read_text().splitlines()
                                            if json.loads(row)["_id"] in test_ids])
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp_path / "idx"), "--queries", str(queries), "--mode", "bm25",
                                 "--k", "10", "--out", str(tmp_path / "run.jsonl")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["robustness", "--run", str(tmp_path / "run.jsonl"), "--qrels", str(qrels),
                                 "--format", "json"])
    point = json.loads(result.stdout)["points"][0]
    # BM25 on SciFact finds a relevant abstract in the top 10 for most claims (BEIR reports R@100 ≈ 0.9)
    assert point["n_queries"] == 100 and 0.6 < point["recall_mean"] < 0.95
    assert point["robustness"]["0.1"] > point["robustness"]["0.9"] and point["zero_recall_queries"] > 0


@pytest.mark.model
def test_local_model_corpus_texts_robustness(env):
    tmp, corpus, queries, _ = env
    result = runner.invoke(app, ["robustness", "--corpus", str(corpus), "--queries", str(queries), "--embedder",
                                 "local", "--k", "2", "--metric", "cosine", "--index-spec", "hnsw:M=4,efSearch=8",
                                 "--format", "json", "--latency-queries", "3", "--qps-repeats", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["meta"]["embedder"] == "st:all-MiniLM-L6-v2" and data["meta"]["dim"] == 384
    assert data["points"][0]["recall_mean"] == 1.0  # 5 passages: HNSW is exact at this size
    from ragdiag.retrieval.embedders import load_embedder

    vectors = load_embedder("local").encode([x for _, _, x in DOCS[:2]])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


def test_trec_output_refuses_whitespace_ids_before_any_embedding_call(env, server):
    tmp, corpus, _, _ = env
    assert _build(tmp, corpus, server).exit_code == 0
    spaced = _jsonl(tmp / "spaced.jsonl", [{"_id": "q 1", "text": "why do dogs bark"}])
    before = server.requests
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp / "idx"), "--queries", str(spaced), "--k", "2",
                                 "--format", "trec", "--out", str(tmp / "r.trec")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert f"query id in {spaced} 'q 1' cannot be written to a TREC run file" in result.stderr
    assert server.requests == before and not (tmp / "r.trec").exists()


def _tampered_refusal(tmp, queries, server, needle: str, mode: str = "dense") -> None:
    before = server.requests
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp / "idx"), "--queries", str(queries), "--k", "2",
                                 "--mode", mode, "--out", str(tmp / "r.jsonl"), "--base-url", server.base_url])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "Traceback" not in result.output and needle in result.stderr, result.stderr
    assert server.requests == before and not (tmp / "r.jsonl").exists()  # refused before any embedding call


@pytest.mark.parametrize("content", [b"garbage" * 100, pickle.dumps({"ids": list(range(50))}), b""],
                         ids=["garbage", "pickle", "empty"])
def test_tampered_faiss_file_is_one_line_naming_it(env, server, content):
    tmp, corpus, queries, _ = env
    assert _build(tmp, corpus, server).exit_code == 0
    (tmp / "idx" / "index.faiss").write_bytes(content)
    _tampered_refusal(tmp, queries, server, f"{tmp / 'idx' / 'index.faiss'}: not a readable faiss index")


@pytest.mark.parametrize("mode", ["dense", "hybrid", "bm25"])
def test_doc_id_list_shorter_than_the_index_is_one_line(env, server, mode):
    tmp, corpus, queries, _ = env
    assert _build(tmp, corpus, server).exit_code == 0
    ids = tmp / "idx" / "doc_ids.json"
    ids.write_text(json.dumps(json.loads(ids.read_text())[:3]))
    needle = ("index.faiss holds 5 vectors but doc_ids.json lists 3" if mode != "bm25"
              else "the BM25 index holds 5 documents but doc_ids.json lists 3")
    _tampered_refusal(tmp, queries, server, needle, mode)
