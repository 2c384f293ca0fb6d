"""The shipped example vectors (tests/docs/example-vectors, tests/docs/example_vectors.py) are the bundled
model's: texts the examples embed, re-embedded now, give the same vectors; and seeding a cache with
them makes the examples' embedder read them instead of embedding."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.remote.embedding_cache import text_key
from tests.docs import example_vectors
from tests.docs.examples import ROOT


def _shipped() -> dict[str, np.ndarray]:
    data = np.load(example_vectors.VECTORS)
    assert [json.loads(str(i))["model"] for i in data["identity"]] == [example_vectors.MODEL]
    return {h.decode("ascii"): v for h, v in zip(data["text_sha256"], data["vectors"])}


def _texts(path: str, count: int) -> list[str]:
    """The first ``count`` texts of a bundled JSONL set (queries, or documents, long ones truncated by the model)."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines[:count]]


def test_shipped_vectors_are_the_bundled_models():
    """English queries and a French document (longer than the model's window): equal to the model's
    vectors up to float32 rounding of a different batch. Its cost is the model's load and four texts:
    sentence-transformers' import (~5 s of CPU) is paid once per worker process, by whichever of the
    suite's many tests of the bundled model comes first."""
    pytest.importorskip("sentence_transformers")
    from ragdiag.retrieval.embedders import SentenceTransformerEmbedder

    shipped = _shipped()
    texts = _texts("fixtures/en-sample/queries.jsonl", 3) + _texts("fixtures/fr-sample/corpus.jsonl", 1)
    assert all(text_key(t) in shipped for t in texts)
    fresh = SentenceTransformerEmbedder("local", use_cache=False).encode(texts)
    np.testing.assert_allclose(fresh, np.stack([shipped[text_key(t)] for t in texts]), atol=2e-6)


def test_a_seeded_cache_serves_the_shipped_vectors(tmp_path):
    """After :func:`example_vectors.seed`, the bundled model's embedder finds every shipped vector in
    the cache (no model call) and returns it bit for bit."""
    from ragdiag.retrieval.embedders import SentenceTransformerEmbedder

    shipped = _shipped()
    assert example_vectors.seed(tmp_path) == len(shipped)
    texts = _texts("fixtures/en-sample/corpus.jsonl", 50)
    embedder = SentenceTransformerEmbedder("local", cache_dir=tmp_path)
    embedder.set_cache_mode("replay")  # a text without a cached vector is an error, not a model call
    vectors = embedder.encode(texts)
    assert embedder.stats.model_calls == 0 and embedder.stats.cache_hits == len(texts)
    assert np.array_equal(vectors, np.stack([shipped[text_key(t)] for t in texts]))
