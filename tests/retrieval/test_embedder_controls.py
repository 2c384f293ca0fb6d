"""Embedder controls: spec options (prefixes, backend), device choice, truncation count, chunking
with max-pooling, and progress lines for logs."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.errors import RagdiagError
from ragdiag.io.progress import LineProgress, progress_reporter
from ragdiag.retrieval.chunking import (
    check_fits,
    parse_chunk,
    pool_max,
    split_documents,
)
from ragdiag.retrieval.embedders import (
    SentenceTransformerEmbedder,
    load_embedder,
    parse_st_options,
    resolve_device,
)


def test_spec_options_keep_trailing_spaces_and_decode_percent():
    name, options = parse_st_options("intfloat/e5-small-v2?query=query: &passage=passage: ")
    assert name == "intfloat/e5-small-v2" and options == {"query": "query: ", "passage": "passage: "}
    assert parse_st_options("BAAI/bge-small-en-v1.5?query=Represent this sentence%3A ")[1]["query"] == "Represent this sentence: "
    assert parse_st_options("local?backend=torch")[1] == {"backend": "torch"}


@pytest.mark.parametrize("spec,message", [
    ("m?prefix=x", "key in query, passage"), ("m?backend=tensorrt", "backend 'tensorrt' is not one of torch$"),
    ("m?quantize=int8", "key in query, passage, backend, got 'quantize=int8'"),
    ("m?backend=onnx", "the ONNX Runtime backend was removed.*see BENCHMARKS.md"),
])
def test_bad_spec_options(spec, message):
    with pytest.raises(RagdiagError, match=message):
        parse_st_options(spec)


def test_prefix_is_chosen_by_role_and_keyed_in_the_cache_params(tmp_path):
    spec = "local?query=query: &passage=passage: "
    query = load_embedder(spec, tmp_path, role="query")
    passage = load_embedder(spec, tmp_path, role="passage")
    plain = load_embedder("local", tmp_path, role="query")
    assert query.prefix == "query: " and passage.prefix == "passage: "
    assert query.cache_params() == {"prefix": "query: "} and plain.cache_params() == {}
    keys = {e._vector_keys().key("0" * 64) for e in (query, passage, plain)}
    assert len(keys) == 3  # three different cache keys for the same text
    assert load_embedder("local?backend=torch", tmp_path).cache_params() == {}  # the default, same keys


def test_devices():
    import torch

    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert resolve_device("auto") == expected and resolve_device("cpu") == "cpu"
    with pytest.raises(RagdiagError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    with pytest.raises(RagdiagError, match="batch size must be ≥ 1"):
        SentenceTransformerEmbedder("local", use_cache=False, batch_size=0)


def test_truncation_is_counted_with_the_model_tokenizer():
    embedder = load_embedder("local", use_cache=False)
    assert embedder.window == 256
    assert embedder.count_truncated(["word " * 300, "short text", "word " * 250]) == 1  # 250 words + 2 specials fit


def test_truncation_count_from_tokenizer_json_equals_the_transformers_tokenizer():
    """The light path (``tokenizers`` on tokenizer.json) and transformers' tokenizer agree at the window's edge."""
    texts = ["word " * n for n in (252, 253, 254, 255)] + ["Ünïcödé café naïve " * 60, "short"]
    light = load_embedder("local?passage=passage: ", use_cache=False)
    wrapped = load_embedder("local?passage=passage: ", use_cache=False)
    wrapped.tokenizer()  # loaded: count_truncated goes through transformers
    for cut in range(1, len(texts) + 1):
        assert light.count_truncated(texts[:cut]) == wrapped.count_truncated(texts[:cut])
    assert light.count_truncated(texts) == 3  # 'passage: ' is 2 tokens: 253, 254, 255 words + 2 + 2 specials > 256


def test_chunks_cover_the_document_by_character_offsets():
    tokenizer = load_embedder("local", use_cache=False).tokenizer()
    long_text = " ".join(f"token{i % 7} alpha" for i in range(150))
    n_tokens = len(tokenizer(long_text, add_special_tokens=False)["input_ids"])
    spec = parse_chunk("64:16")
    passages, owners = split_documents(["short text", long_text], tokenizer, spec)
    assert passages[0] == "short text" and owners.tolist()[0] == 0
    long_parts = [p for p, o in zip(passages, owners) if o == 1]
    assert len(long_parts) == -(-(n_tokens - 64) // 48) + 1
    assert all(len(tokenizer(p, add_special_tokens=False)["input_ids"]) <= 64 for p in long_parts)
    assert long_text.startswith(long_parts[0]) and long_text.endswith(long_parts[-1])
    assert all(p in long_text for p in long_parts)


def test_chunk_spec_and_window_checks():
    assert parse_chunk("200") == parse_chunk("200:0")
    for bad in ("0", "200:200", "abc", "200:-1"):
        with pytest.raises(RagdiagError, match="chunk"):
            parse_chunk(bad)
    with pytest.raises(RagdiagError, match="does not fit the model window of 256 tokens"):
        check_fits(parse_chunk("256"), 256)
    check_fits(parse_chunk("250"), 256, prefix_tokens=4)


def test_max_pooling_keeps_each_documents_best_passage():
    owners = np.array([0, 0, 1, 2, 2, 3])
    rows, scores = np.array([1, 4, 0, 3, 2, -1]), np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.0])
    assert pool_max(rows, scores, owners, 2) == [(0, 0.9), (2, 0.8)]
    assert pool_max(rows, scores, owners, 10) == [(0, 0.9), (2, 0.8), (1, 0.5)]


def test_line_progress_for_logs():
    now = [0.0]
    out = io.StringIO()
    lines = LineProgress("embedding", 1000, every=5, stream=out, clock=lambda: now[0])
    for _ in range(10):
        now[0] += 1.0
        lines.advance(50)
    lines.close()
    text = out.getvalue().splitlines()
    assert text[0] == "embedding: 250/1,000 (25%), 50.0/s, ETA 0:15"
    assert text[1] == "embedding: 500/1,000 (50%), 50.0/s, ETA 0:10" and len(text) == 3
    quiet = io.StringIO()
    with progress_reporter("short job", 10, stream=quiet) as bar:
        bar.advance(10)
    assert quiet.getvalue() == ""  # short jobs stay silent in logs


@pytest.mark.model
def test_chunked_index_retrieves_documents_by_their_best_passage(tmp_path, monkeypatch):
    from ragdiag.cli import app

    monkeypatch.setenv("RAGDIAG_CACHE_DIR", str(tmp_path / "cache"))
    filler = " ".join(["the municipal council met on tuesday to discuss the annual budget"] * 30)
    docs = [("long", filler + " Volcanic lava flows destroyed the village near the crater."),
            ("tea", "Green tea contains caffeine and antioxidants."), ("dogs", "Dogs bark at the postman.")]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs))
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"_id": "q", "text": "lava from a volcano destroyed a village"}) + "\n")
    runner = CliRunner()
    built = runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--out-dir", str(tmp_path / "idx"),
                                "--chunk", "32:8", "--embedder", "local", "--device", "auto", "--batch-size", "4"])
    assert built.exit_code == 0, built.output
    assert "loading model st:all-MiniLM-L6-v2" in built.stderr
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["meta"]["chunk"] == "32:8" and manifest["n_passages"] > 3 and manifest["truncated_texts"] == 0
    result = runner.invoke(app, ["retrieve", "--index-dir", str(tmp_path / "idx"), "--queries", str(queries), "--k", "3",
                                 "--out", str(tmp_path / "run.jsonl")])
    assert result.exit_code == 0, result.output
    row = json.loads((tmp_path / "run.jsonl").read_text())
    assert row["ids"][0] == "long" and sorted(row["ids"]) == ["dogs", "long", "tea"]
    whole = runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--out-dir", str(tmp_path / "idx2"),
                                "--embedder", "local"])
    assert whole.exit_code == 0 and "1 of 3 documents are longer than the model window of 256 tokens" in whole.stderr
    assert "Loading weights" not in whole.stderr


def test_corrupt_tokenizer_json_is_one_clear_error(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "trunc')
    embedder = SentenceTransformerEmbedder(str(tmp_path), use_cache=False)
    with pytest.raises(RagdiagError, match=r"cannot load the tokenizer of '.*' \(.*tokenizer.json\): EOF while parsing"):
        embedder.count_truncated(["a text"])


def test_a_model_is_loaded_once_per_process():
    first = SentenceTransformerEmbedder("local", use_cache=False, device="cpu")
    second = SentenceTransformerEmbedder("local", use_cache=False, device="cpu", batch_size=8)
    assert first._load() is second._load()  # one load: the second embedder takes the loaded model
    assert np.array_equal(first.encode(["a query"]), second.encode(["a query"]))
