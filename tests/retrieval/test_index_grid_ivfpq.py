"""IVF-PQ with exact re-ranking, HNSW-SQ8, build-parameter grids: against faiss and numpy directly."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from ragdiag.bench.index_sweep import SweepOptions, run_sweep
from ragdiag.bench.recall import ann_recall, exact_ground_truth
from ragdiag.errors import RagdiagError
from ragdiag.retrieval.index_specs import (
    expand_build_grid,
    expand_specs,
    parse_index_spec,
)
from ragdiag.retrieval.indexes import build_index, search, set_search_params


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((16, 16))
    base = (centers[rng.integers(0, 16, 4000)] + 0.5 * rng.standard_normal((4000, 16))).astype(np.float32)
    queries = (centers[rng.integers(0, 16, 100)] + 0.5 * rng.standard_normal((100, 16))).astype(np.float32)
    return base, queries


def test_parse_ivfpq_and_refine():
    spec = parse_index_spec("ivfpq:nlist=32,m=4,nbits=6,nprobe=2|4,refine=10|40")
    assert spec.build == {"nlist": 32, "m": 4, "nbits": 6}
    assert spec.operating_points()[1] == {"nprobe": 2, "refine": 40}
    assert parse_index_spec("ivfpq:nlist=32").operating_points() == [{"nprobe": 8}]
    with pytest.raises(RagdiagError, match="allowed: nlist, m, nbits, nprobe, refine"):
        parse_index_spec("ivfpq:k_factor=3")
    with pytest.raises(RagdiagError, match="outside what faiss accepts"):
        parse_index_spec("ivfpq:nbits=17")


def test_build_grids_expand_and_keep_search_sweeps():
    assert expand_build_grid("hnsw:M=8|16,efSearch=16|64") == ["hnsw:M=8,efSearch=16|64", "hnsw:M=16,efSearch=16|64"]
    assert expand_build_grid("ivf:nlist=16|32,nprobe=1|2") == ["ivf:nlist=16,nprobe=1|2", "ivf:nlist=32,nprobe=1|2"]
    assert expand_build_grid("flat") == ["flat"]
    assert expand_specs(["pg-hnsw:m=8|16", "hnsw:M=4|8"]) == ["pg-hnsw:m=8|16", "hnsw:M=4", "hnsw:M=8"]


def test_refine_equals_ivfpq_candidates_reranked_exactly(data):
    base, queries = data
    k, candidates = 10, 40
    spec = parse_index_spec(f"ivfpq:nlist=16,m=4,nbits=6,nprobe=16,refine={candidates}")
    refined = build_index(spec, base, "l2", seed=3)
    set_search_params(refined, {"nprobe": 16, "refine": candidates}, k=k)
    assert faiss.downcast_index(refined).k_factor == candidates / k
    _, got = search(refined, queries, k)
    plain = build_index(parse_index_spec("ivfpq:nlist=16,m=4,nbits=6,nprobe=16"), base, "l2", seed=3)
    set_search_params(plain, {"nprobe": 16})
    _, pool = plain.search(queries, candidates)  # the PQ top-K' candidates, then exact distances in numpy
    exact = ((base[pool].astype(np.float64) - queries[:, None, :]) ** 2).sum(-1)
    expected = np.take_along_axis(pool, np.argsort(exact, axis=1, kind="stable")[:, :k], axis=1)
    assert np.mean([set(a) == set(b) for a, b in zip(got, expected)]) >= 0.99
    _, true_ids = exact_ground_truth(base, queries, k, "l2")
    _, pq_only = plain.search(queries, k)
    assert ann_recall(got, true_ids).mean() > ann_recall(pq_only, true_ids).mean() + 0.1


def test_refine_of_k_keeps_the_plain_ivfpq_set(data):
    base, queries = data
    refined = build_index(parse_index_spec("ivfpq:nlist=16,m=4,nbits=6,refine=10"), base, "ip", seed=1)
    set_search_params(refined, {"nprobe": 4, "refine": 10}, k=10)
    plain = build_index(parse_index_spec("ivfpq:nlist=16,m=4,nbits=6"), base, "ip", seed=1)
    set_search_params(plain, {"nprobe": 4})
    a, b = search(refined, queries, 10)[1], search(plain, queries, 10)[1]
    assert all(set(x) == set(y) for x, y in zip(a, b))


def test_hnsw_sq8_is_close_to_exact_at_high_ef(data):
    base, queries = data
    index = build_index(parse_index_spec("hnsw_sq8:M=16,efConstruction=80"), base, "l2")
    set_search_params(index, {"efSearch": 256})
    _, true_ids = exact_ground_truth(base, queries, 10, "l2")
    assert ann_recall(search(index, queries, 10)[1], true_ids).mean() >= 0.9


def test_ivfpq_checks_before_building(data):
    base, queries = data
    opts = SweepOptions(k=10, metric="l2", latency_queries=2, repeats=1)
    with pytest.raises(RagdiagError, match="refine=5 must be at least k=10"):
        run_sweep(base, queries, [parse_index_spec("ivfpq:nlist=8,m=4,refine=5|20")], opts)
    with pytest.raises(RagdiagError, match="m=5 does not divide the dimension 16"):
        run_sweep(base, queries, [parse_index_spec("ivfpq:nlist=8,m=5")], opts)
    with pytest.raises(RagdiagError, match="nbits=13 needs at least 8192 vectors"):
        run_sweep(base, queries, [parse_index_spec("ivfpq:nlist=8,m=4,nbits=13")], opts)
    index = build_index(parse_index_spec("ivfpq:nlist=8,m=4,nbits=4,refine=20"), base[:500], "l2")
    with pytest.raises(RagdiagError, match="needs k"):
        set_search_params(index, {"refine": 20})


def test_robustness_cli_expands_an_m_by_efsearch_grid(tmp_path, data):
    import json

    from typer.testing import CliRunner

    from ragdiag.bench.matched_recall import curves
    from ragdiag.cli import app

    base, queries = data
    np.save(tmp_path / "b.npy", base[:1500])
    np.save(tmp_path / "q.npy", queries[:40])
    done = CliRunner().invoke(app, ["robustness", "--base-vectors", str(tmp_path / "b.npy"), "--query-vectors",
                                    str(tmp_path / "q.npy"), "--k", "10", "--latency-queries", "2", "--qps-repeats", "1",
                                    "--bootstrap", "100", "--index-spec", "hnsw:M=4|8,efConstruction=16,efSearch=8|32",
                                    "--index-spec", "ivfpq:nlist=8,m=4,nbits=6,nprobe=1|8,refine=10|40",
                                    "--out", str(tmp_path / "r.json")])
    assert done.exit_code == 0, done.output
    points = json.loads((tmp_path / "r.json").read_text())["points"]
    assert [(p["params"]["M"], p["params"]["efSearch"]) for p in points[:4]] == [(4, 8), (4, 32), (8, 8), (8, 32)]
    assert len({p["spec"] for p in points}) == 3
    families = curves(points)  # one 1-D curve per M, and per nprobe for the nprobe × refine grid
    assert sorted(len(v) for v in families.values()) == [2, 2, 2, 2]
    assert any(name.endswith("[nprobe=1]") for name in families)


def test_index_build_refuses_refine_before_embedding(tmp_path):
    from typer.testing import CliRunner

    from ragdiag.cli import app

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "title": "", "text": "a"}\n')
    done = CliRunner().invoke(app, ["index", "build", "--corpus", str(corpus), "--index-spec", "ivfpq:nlist=4,refine=40",
                                    "--out-dir", str(tmp_path / "idx")])
    assert done.exit_code == 2 and "an index folder does not know k" in done.output
    assert not (tmp_path / "idx").exists()
