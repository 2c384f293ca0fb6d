"""Issue 9, retrieval inputs: broken index folders, empty corpora, index parameters faiss would
crash on, bad runs and qrels — each one stderr line, exit 2, no traceback, inputs untouched,
nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

runner = CliRunner()


def _refused(args: list[str], *needles: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture()
def files(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n"
                              for i, t in enumerate(["lava and volcanoes", "green tea", "barking dogs", "tea and lava"])))
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "volcano lava"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\t0\td0\t1\n")
    return tmp_path, corpus, queries, qrels


def _bm25_index(tmp: Path, corpus: Path) -> Path:
    result = runner.invoke(app, ["index", "build", "--corpus", str(corpus), "--embedder", "none", "--out-dir", str(tmp / "idx")])
    assert result.exit_code == 0, result.output
    return tmp / "idx"


@pytest.mark.parametrize("missing", ["doc_ids.json", "bm25/vocab.index.json", "bm25/indptr.csc.index.npy"])
def test_index_folder_missing_a_file_names_it(files, missing):
    tmp, corpus, queries, _ = files
    folder = _bm25_index(tmp, corpus)
    (folder / missing).unlink()
    _refused(["retrieve", "--index-dir", str(folder), "--queries", str(queries), "--mode", "bm25", "--k", "2",
              "--out", str(tmp / "run.jsonl")], "missing", missing)
    assert not (tmp / "run.jsonl").exists()


def test_corrupt_manifest_is_one_line(files):
    tmp, corpus, queries, _ = files
    folder = _bm25_index(tmp, corpus)
    (folder / "manifest.json").write_text("{not json")
    _refused(["retrieve", "--index-dir", str(folder), "--queries", str(queries), "--mode", "bm25", "--k", "2",
              "--out", str(tmp / "run.jsonl")], "manifest.json is not valid JSON")


def test_corpus_with_only_empty_texts(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(["", "  ", "the of"])))
    _refused(["index", "build", "--corpus", str(corpus), "--embedder", "none", "--out-dir", str(tmp_path / "idx")],
             "every passage is empty or only stopwords")
    assert not (tmp_path / "idx" / "manifest.json").exists()


@pytest.mark.parametrize("spec,needle", [
    ("hnsw:M=1", "M=1 is outside what faiss accepts"), ("hnsw_sq8:M=1", "M=1 is outside what faiss accepts"),
    ("hnsw:efSearch=0", "must be positive"), ("hnsw:efConstruction=99999999999", "outside what faiss accepts"),
    ("ivf:nlist=4,nprobe=8", "nprobe=8 exceeds nlist=4"), ("ivf:nlist=64", "nlist=64 exceeds the 4"),
])
def test_index_parameters_faiss_would_crash_on(files, spec, needle):
    tmp, corpus, _, _ = files
    base = tmp / "X.npy"
    np.save(base, np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
    _refused(["robustness", "--base-vectors", str(base), "--query-vectors", str(base), "--k", "2", "--index-spec", spec,
              "--latency-queries", "2", "--qps-repeats", "1"], needle)


def test_index_build_checks_the_spec_before_embedding(files):
    tmp, corpus, _, _ = files
    _refused(["index", "build", "--corpus", str(corpus), "--embedder", "openai:never-called", "--base-url",
              "http://127.0.0.1:9/v1", "--index-spec", "hnsw:M=1", "--out-dir", str(tmp / "idx")], "M=1")


@pytest.mark.parametrize("flag,value,needle", [
    ("--bm25", "bm25:tfidf", "unknown variant 'tfidf'"), ("--bm25", "lucene:b=2", "b must be between 0 and 1"),
    ("--bm25", "okapi:k1=nan", "k1 must be"), ("--chunk", "0", "TOKENS must be between"),
    ("--chunk", "64:64", "OVERLAP must be"),
])
def test_bad_bm25_and_chunk_options(files, flag, value, needle):
    tmp, corpus, _, _ = files
    _refused(["index", "build", "--corpus", str(corpus), "--out-dir", str(tmp / "idx"), flag, value], needle)
    assert not (tmp / "idx").exists()


def test_chunk_without_a_dense_index(files):
    tmp, corpus, _, _ = files
    _refused(["index", "build", "--corpus", str(corpus), "--embedder", "none", "--chunk", "64", "--out-dir", str(tmp / "idx")],
             "chunking splits documents for the dense index")


def test_retrieve_output_over_its_queries(files):
    tmp, corpus, queries, _ = files
    folder = _bm25_index(tmp, corpus)
    before = queries.read_bytes()
    _refused(["retrieve", "--index-dir", str(folder), "--queries", str(queries), "--mode", "bm25", "--k", "2",
              "--out", str(queries)], "overwrite")
    assert queries.read_bytes() == before


@pytest.mark.parametrize("run_text,args,needle", [
    ('{"query_id": "q1", "ids": ["d0", "d0"], "scores": [2, 1]}\n', ["--k", "2"], "ranks document 'd0' twice"),
    ("q1 Q0 d0 1 2.0 t\nq1 Q0 d0 2 1.0 t\n", ["--k", "2"], "ranks document 'd0' twice"),
    ('{"query_id": "q1", "ids": ["d0"], "scores": [1]}\n', ["--k", "10"], "k=10 is larger than the depth of run"),
    ("q1 d0 1\n", ["--k", "1"], "looks like a qrels file"),
    ('{"query_id": "q1", "ids": ["d0"], "scores": [Infinity]}\n', ["--k", "1"], "finite numbers"),
])
def test_bad_runs(files, run_text, args, needle):
    tmp, _, _, qrels = files
    run = tmp / "run.txt"
    run.write_text(run_text)
    _refused(["robustness", "--run", str(run), "--qrels", str(qrels), *args], needle)


def test_bad_qrels_line_is_named_one_based(files):
    tmp, _, _, _ = files
    run = tmp / "run.jsonl"
    run.write_text('{"query_id": "q1", "ids": ["d0"], "scores": [1]}\n')
    qrels = tmp / "bad.tsv"
    qrels.write_text("q1\t0\td0\t1\nq1\t0\td1\n")
    _refused(["robustness", "--run", str(run), "--qrels", str(qrels), "--k", "1"], "record 2", "expected 4 columns")


def test_runs_and_vectors_together(files):
    tmp, _, _, qrels = files
    run = tmp / "run.jsonl"
    run.write_text('{"query_id": "q1", "ids": ["d0"], "scores": [1]}\n')
    base = tmp / "X.npy"
    np.save(base, np.eye(4, dtype=np.float32))
    _refused(["robustness", "--base-vectors", str(base), "--query-vectors", str(base), "--run", str(run),
              "--qrels", str(qrels)], "one kind of input")


@pytest.mark.parametrize("value", ["0", "-5"])
def test_latency_queries_must_be_positive(files, value):
    tmp, _, _, _ = files
    base = tmp / "X.npy"
    np.save(base, np.eye(4, dtype=np.float32))
    _refused(["robustness", "--base-vectors", str(base), "--query-vectors", str(base), "--k", "1",
              "--latency-queries", value], "--latency-queries")


# ---------------------------------------------------------------- issue 18: bad bytes and deep JSON in every reader


def _break_line_2(path: Path, bad: bytes) -> int:
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1][:12] + bad + lines[1][12:]
    data = b"\n".join(lines)
    path.write_bytes(data)
    return data.index(bad)


@pytest.mark.parametrize("target", ["corpus", "queries", "qrels"])
def test_invalid_utf8_is_one_line_naming_file_line_and_byte(files, target):
    tmp, corpus, queries, qrels = files
    queries.write_text(queries.read_text() + json.dumps({"_id": "q2", "text": "green tea"}) + "\n")
    qrels.write_text("q1\t0\td0\t1\nq2\t0\td1\t1\n")
    path = {"corpus": corpus, "queries": queries, "qrels": qrels}[target]
    offset = _break_line_2(path, b"\xc3\x28")
    data = path.read_bytes()
    needle = f"{path}: line 2: not UTF-8 text (byte offset {offset}: invalid continuation byte)"
    if target == "corpus":
        _refused(["index", "build", "--corpus", str(corpus), "--embedder", "none", "--out-dir", str(tmp / "idx")], needle)
        assert not (tmp / "idx").exists()
    else:
        clean = tmp / "clean"
        clean.mkdir()
        (clean / "corpus.jsonl").write_bytes(corpus.read_bytes())
        index = _bm25_index(clean, clean / "corpus.jsonl")
        if target == "queries":
            _refused(["retrieve", "--index-dir", str(index), "--queries", str(queries), "--mode", "bm25", "--k", "2",
                      "--out", str(tmp / "run.jsonl")], needle)
            assert not (tmp / "run.jsonl").exists()
    _refused(["pipeline", "--corpus", str(corpus), "--queries", str(queries), "--qrels", str(qrels), "--retriever", "bm25",
              "--out-dir", str(tmp / "out"), "--cache", "replay", "--base-url", "http://127.0.0.1:9/v1", "--no-progress"],
             needle)
    assert path.read_bytes() == data and not (tmp / "out").exists()


def test_json_nested_past_the_recursion_limit_is_one_line(files):
    tmp, corpus, _, _ = files
    deep = "[" * 100_000 + "]" * 100_000
    corpus.write_text(corpus.read_text() + deep + "\n")
    _refused(["index", "build", "--corpus", str(corpus), "--embedder", "none", "--out-dir", str(tmp / "idx")],
             f"{corpus}: line 5: JSON nested too deeply")
    run = tmp / "run.jsonl"
    run.write_text('{"query_id": "q1", "ids": ["d0"], "scores": [1.0]}\n{"query_id": "q2", "ids": ' + deep + "}\n")
    _refused(["evaluate", "--run", str(run), "--qrels", str(tmp / "qrels.tsv")], f"{run}: line 2: JSON nested too deeply")


def _npy_claiming(path: Path, shape: tuple[int, ...], descr: str = "<f4", data: bytes = b"\0" * 64) -> None:
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": descr, "fortran_order": False, "shape": shape})
        handle.write(data)


def _npy_cases(tmp: Path) -> list[tuple[Path, str]]:
    huge, short, complex_, objects, text = (tmp / f"{n}.npy" for n in ("huge", "short", "complex", "objects", "text"))
    _npy_claiming(huge, (2**22, 2**22))  # 64 TiB claimed in a 1 kB file
    np.save(short, np.ones((8, 4), dtype=np.float32))
    short.write_bytes(short.read_bytes()[:-16])
    np.save(complex_, np.ones((3, 4), dtype=np.complex64))
    np.save(objects, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    text.write_text("not an array")
    return [(huge, "the header claims shape (4194304, 4194304) of float32 (70,368,744,177,664 bytes) but the file holds 64 data bytes"),
            (short, "the header claims shape (8, 4) of float32 (128 bytes) but the file holds 112 data bytes"),
            (complex_, "complex-valued vectors (dtype complex64)"),
            (objects, "holds Python objects (dtype object), which are never unpickled"),
            (text, "not a .npy array")]


def test_npy_headers_are_checked_against_the_file_before_allocating(files):
    tmp, _, _, _ = files
    good = tmp / "X.npy"
    np.save(good, np.eye(4, dtype=np.float32))
    for bad, needle in _npy_cases(tmp):
        data = bad.read_bytes()
        _refused(["robustness", "--base-vectors", str(bad), "--query-vectors", str(good), "--k", "1"], f"{bad}: {needle}")
        _refused(["robustness", "--base-vectors", str(good), "--query-vectors", str(bad), "--k", "1"], str(bad))
        assert bad.read_bytes() == data


def test_complex_vectors_are_refused_wherever_they_come_from():
    from ragdiag.errors import RagdiagError
    from ragdiag.retrieval.indexes import prepare_vectors

    with pytest.raises(RagdiagError, match=r"^embeddings: complex-valued vectors \(dtype complex128\)"):
        prepare_vectors(np.ones((2, 3)) * 1j, "l2", "embeddings")


def test_index_manifest_nested_too_deeply_is_one_line(files):
    tmp, corpus, queries, _ = files
    folder = _bm25_index(tmp, corpus)
    (folder / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    _refused(["retrieve", "--index-dir", str(folder), "--queries", str(queries), "--mode", "bm25", "--k", "1",
              "--out", str(tmp / "r.jsonl")], f"index folder {folder}: manifest.json is JSON nested too deeply")
