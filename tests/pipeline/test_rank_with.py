"""``--rank-with local``: the retrieval core ranks the texts' candidates first (loads the bundled model)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.data.schema import RankedSample


@pytest.mark.model
def test_generate_rank_with_local_embedder(tiny, server, run_cli, tmp_path):
    texts, _ = tiny
    out = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--rank-with", "local", "--k", "2,3", "--out", out,
                  "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    ranked = json.loads((tmp_path / "answers.ranked.json").read_text())
    samples = [RankedSample.from_json(r, "ranked", i) for i, r in enumerate(ranked)]
    assert [s.id for s in samples] == ["M-1", "M-2", "M-3", "M-4"]
    for s in samples:
        assert s.E == "L6" and s.K == [2, 3] and sorted(s.rank) == list(range(6))
        hits = np.cumsum(np.asarray(s.rank) < s.Np)
        assert [hits[1] / 2, hits[2] / 3] == s.P and [hits[1] / 2, hits[2] / 2] == s.R
    # the topic word is in the query and both positives only: the embedder puts them first
    assert all(set(s.rank[:2]) == {0, 1} for s in samples)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["meta"]["ranked"]["ranked_with"] == "local"
    assert sum(1 for r in rows if r["kind"] == "topK") == 8


@pytest.mark.model
def test_rank_with_local_reproduces_the_bundled_sample_rankings(tmp_path):
    """One ranking path: rank_texts (what --rank-with local runs) gives the shipped rankings, all 8
    (Nc, Np) variants of the first query, byte for byte once serialised (one query keeps every
    variant and the serialisation; more queries only add embedding time)."""
    from ragdiag.data.schema import TextsSample
    from ragdiag.pipeline.rank import rank_texts
    from ragdiag.resources import resource_path

    folder = resource_path("fixtures", "retrieval-response-sample")
    texts = json.loads((folder / "samples_texts.json").read_text())[:1]
    shipped = [r for r in json.loads((folder / "samples_ranked.json").read_text()) if r["id"] in {t["id"] for t in texts}]
    variants = [(nc, np_) for nc in (30, 50) for np_ in (2, 3, 4, 5)]
    try:
        ranked = rank_texts([TextsSample.from_json(t) for t in texts], "local", list(range(2, 16)), tmp_path, False,
                            variants)
    except Exception as err:
        if "cannot load" in str(err) or isinstance(err, (ImportError, OSError)):
            pytest.skip(f"local model unavailable: {err}")
        raise
    assert len(shipped) == 8
    assert json.dumps([r.to_json() for r in ranked]) == json.dumps(shipped)
