"""Index spec parsing and faiss index construction, search parameters, save/load."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.index_specs import parse_index_spec
from ragdiag.retrieval.indexes import (
    build_index,
    index_bytes,
    load_index,
    prepare_vectors,
    save_index,
    search,
    set_search_params,
)


def test_parse_sweep_and_defaults():
    spec = parse_index_spec("hnsw:M=16,efConstruction=100,efSearch=16|32|64")
    assert spec.kind == "hnsw" and spec.build == {"M": 16, "efConstruction": 100}
    assert spec.operating_points() == [{"efSearch": 16}, {"efSearch": 32}, {"efSearch": 64}]
    ivf = parse_index_spec("ivf:nlist=64")
    assert ivf.build == {"nlist": 64} and ivf.operating_points() == [{"nprobe": 8}]
    assert parse_index_spec("flat").operating_points() == [{}]


@pytest.mark.parametrize(
    "spec,message",
    [
        ("kdtree", "unknown kind"),
        ("hnsw:M=16,foo=3", "unknown parameter 'foo'"),
        ("hnsw:M=8|16", "build parameter and cannot be swept"),
        ("hnsw:efSearch=abc", "not an integer"),
        ("hnsw:efSearch=0", "must be positive"),
        ("hnsw:M", "expected name=value"),
        ("ivf:nprobe=1,nprobe=2", "given twice"),
        ("flat:M=3", "allowed: none"),
    ],
)
def test_malformed_specs(spec, message):
    with pytest.raises(RagdiagError, match=message):
        parse_index_spec(spec)


@pytest.fixture(scope="module")
def vectors():
    rng = np.random.default_rng(7)
    return rng.standard_normal((600, 16)).astype(np.float32), rng.standard_normal((20, 16)).astype(np.float32)


@pytest.mark.parametrize("metric", ["ip", "cosine", "l2"])
def test_flat_equals_brute_force(vectors, metric):
    base, queries = (prepare_vectors(v, metric, "x") for v in vectors)
    scores, ids = search(build_index(parse_index_spec("flat"), base, metric), queries, 5)
    if metric == "l2":
        brute = ((queries[:, None, :] - base[None]) ** 2).sum(-1)
        expected = np.argsort(brute, axis=1, kind="stable")[:, :5]
    else:
        brute = queries @ base.T
        expected = np.argsort(-brute, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(brute, expected, 1), rtol=1e-4, atol=1e-4)


def test_cosine_normalises_and_rejects_bad_vectors():
    x = np.array([[3.0, 4.0], [1.0, 0.0]])
    np.testing.assert_allclose(np.linalg.norm(prepare_vectors(x, "cosine", "x"), axis=1), 1.0, rtol=1e-6)
    with pytest.raises(RagdiagError, match="row 1 contains NaN"):
        prepare_vectors(np.array([[1.0, 2.0], [np.nan, 0.0]]), "ip", "base.npy")
    with pytest.raises(RagdiagError, match="zero vector"):
        prepare_vectors(np.array([[0.0, 0.0]]), "cosine", "base.npy")
    with pytest.raises(RagdiagError, match="no vectors"):
        prepare_vectors(np.zeros((0, 4)), "ip", "base.npy")
    with pytest.raises(RagdiagError, match="2-D"):
        prepare_vectors(np.zeros(4), "ip", "base.npy")
    with pytest.raises(RagdiagError, match="unknown metric"):
        prepare_vectors(x, "hamming", "x")


@pytest.mark.parametrize("text", ["hnsw:M=8,efSearch=8|64", "ivf:nlist=16,nprobe=1|16", "hnsw_sq8:M=8,efSearch=8|64"])
def test_search_parameters_change_results_and_roundtrip(vectors, text, tmp_path):
    base, queries = (prepare_vectors(v, "l2", "x") for v in vectors)
    spec = parse_index_spec(text)
    index = build_index(spec, base, "l2")
    _, exact = search(build_index(parse_index_spec("flat"), base, "l2"), queries, 10)
    found = []
    for params in spec.operating_points():
        set_search_params(index, params)
        _, ids = search(index, queries, 10)
        found.append(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, exact)]))
    assert found[-1] >= found[0] and found[-1] > 0.8  # the wider search finds more true neighbours
    save_index(index, tmp_path / "i.faiss")
    loaded = load_index(tmp_path / "i.faiss")
    np.testing.assert_array_equal(search(loaded, queries, 10)[1], search(index, queries, 10)[1])
    assert index_bytes(loaded) == index_bytes(index) > base.nbytes * (0.25 if "sq8" in text else 1)


def test_k_larger_than_index_and_nlist_too_big(vectors):
    base = prepare_vectors(vectors[0][:10], "ip", "x")
    with pytest.raises(RagdiagError, match="k=11 is larger"):
        search(build_index(parse_index_spec("flat"), base, "ip"), base, 11)
    with pytest.raises(RagdiagError, match="nlist=64 exceeds"):
        build_index(parse_index_spec("ivf:nlist=64"), base, "ip")
