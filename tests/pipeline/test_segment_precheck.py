"""Segment sizes are checked from the inputs before any model or LLM call: when every segment would
be dropped, ``pipeline`` falls back to pooled with a one-line notice, or stops at once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ragdiag.commands.pipeline import CorpusRunConfig, run_corpus_pipeline
from ragdiag.data.loaders import load_graded_file
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.metrics.segments import planned_sizes, segment_rows, segmentation_for
from tests.servers.embeddings_server import EmbeddingsServer
from tests.servers.toy_model import ToyModel
from tests.sweep.synthetic_corpus import write_corpus

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "retrieval-response-sample" / "samples_graded.json"


@pytest.mark.parametrize("mode", ["ratio", "nw", "pooled"])
def test_planned_sizes_match_the_segments_of_real_rows(mode):
    table = load_graded_file(SAMPLE)
    rows = [(table.embedder_names[e], table.subset_names[s], int(k), int(np_))
            for e, s, k, np_ in zip(table.embedder, table.subset, table.K, table.Np)]
    seg, keys, _ = segment_rows(table, mode)
    assert planned_sizes(rows, mode) == {keys[i]: int(n) for i, n in Counter(seg.tolist()).items()}


def test_fallback_to_pooled_or_stop():
    rows = [("L6", "M", k, np_) for k in (2, 3, 5) for np_ in (1, 2, 4, 8)] * 5  # 12 ratio segments of 5 rows, 60 rows
    assert segmentation_for(rows, "ratio", 5) == ("ratio", None)
    mode, notice = segmentation_for(rows, "ratio", 50)
    assert mode == "pooled" and notice.startswith("every ratio segment would have fewer than 50 rows (largest 5)")
    with pytest.raises(RagdiagError, match=r"even with --segments pooled: the largest, L6\^M, would have 60; "
                                           r"--min-samples 60 keeps it"):
        segmentation_for(rows, "ratio", 300)


def test_pipeline_texts_falls_back_before_any_call(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    args = ["pipeline", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--model", "m",
            "--base-url", server.base_url]
    result = run_cli(*args, "--out-dir", tmp_path / "run")  # default --min-samples 300: 12 rows in all
    assert result.exit_code == 2 and server.requests == 0
    assert "--min-samples 12 keeps it (checked before any model or LLM call)" in result.stderr
    result = run_cli(*args, "--min-samples", "10", "--out-dir", tmp_path / "run2")
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if "using --segments pooled" in line]
    assert len(notes) == 1
    correlation = json.loads((tmp_path / "run2" / "correlation.json").read_text())
    assert correlation["meta"]["segments"] == "pooled" and correlation["results"]


def test_corpus_pipeline_stops_before_embedding(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    corpus = write_corpus(tmp_path / "synthetic", n_docs=60, n_queries=6)
    with ToyModel() as toy, EmbeddingsServer(dim=32) as embed:
        cfg = CorpusRunConfig(corpus=corpus, retrievers=["dense:openai:toy-embed", "bm25"], ks=[1, 3], out_dir=tmp_path / "run",
                              embed_base_url=embed.base_url, min_samples=300)
        config = ClientConfig(model="toy", base_url=toy.base_url, cache_dir=tmp_path / "cache")
        with pytest.raises(RagdiagError, match="would have 12; --min-samples 12 keeps it"):
            run_corpus_pipeline(cfg, config, progress=False)
        assert embed.requests == 0 and toy.requests == 0
