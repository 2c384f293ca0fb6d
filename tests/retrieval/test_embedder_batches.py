"""Batches of similar length go to the model; vectors come back in the caller's order, cached per batch."""

from __future__ import annotations

import numpy as np

from ragdiag.retrieval.embedder_base import Embedder


class LengthEmbedder(Embedder):
    """A model whose vector says which text it saw: (len(text), 1), and which records its batches."""

    identity = "test:length"

    def __init__(self, cache_dir, batch_size):
        super().__init__(cache_dir, use_cache=True, batch_size=batch_size)
        self.batches: list[list[str]] = []

    def _embed_batch(self, texts):
        self.batches.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_batches_are_sorted_by_length_and_results_keep_the_callers_order(tmp_path):
    texts = ["a" * n for n in (3, 40, 7, 1, 25, 12, 9)]
    model = LengthEmbedder(tmp_path, batch_size=3)
    vectors = model.encode(texts)
    expected = np.array([[n, 1.0] for n in (3, 40, 7, 1, 25, 12, 9)], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert [[len(t) for t in batch] for batch in model.batches] == [[40, 25, 12], [9, 7, 3], [1]]
    again = LengthEmbedder(tmp_path, batch_size=3)
    np.testing.assert_array_equal(again.encode(list(reversed(texts))), vectors[::-1])
    assert again.batches == []  # every vector came from the cache written batch by batch
