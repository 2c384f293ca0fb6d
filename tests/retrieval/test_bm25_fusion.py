"""BM25 tokenisation and ranking (rank-bm25) and reciprocal rank fusion."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.retrieval.bm25 import BM25Index, fold_accents, tokenize, top_k_from_scores
from ragdiag.retrieval.fusion import reciprocal_rank_fusion


def test_tokenize_normalises_case_unicode_and_accents():
    assert tokenize("The Ｃａｔ sat on THE mat") == ["cat", "sat", "mat"]  # NFKC folds full-width letters
    assert tokenize("L'été à Paris", lang="fr") == ["été", "paris"]
    assert tokenize("L'été à Paris", lang="fr", accents=True) == ["ete", "paris"]
    assert fold_accents("Ångström Ñandú") == "Angstrom Nandu"
    # NFC and NFD spellings of the same word give the same token
    assert tokenize("caf\u00e9") == tokenize("cafe\u0301")


def test_bm25_ranks_matching_passages_first():
    texts = ["cats purr softly", "dogs bark loudly", "a cat and a dog", "quantum chromodynamics lecture"]
    index = BM25Index(texts)
    rows, scores = index.top_k("loud dogs barking", 2)
    assert rows[0] == 1 and scores[0] > scores[1]
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize("cat dog"))
    np.testing.assert_allclose(index.scores("cat dog"), reference)


def test_top_k_from_scores_orders_and_breaks_ties_by_position():
    rows, scores = top_k_from_scores(np.array([0.5, 2.0, 0.5, 3.0, 0.5]), 4)
    assert rows.tolist() == [3, 1, 0, 2] and scores.tolist() == [3.0, 2.0, 0.5, 0.5]


def test_rrf_formula_and_default_k():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]])
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["d"] == pytest.approx(1 / 63)
    assert [d for d, _ in fused] == ["a", "c", "b", "d"]
    assert [d for d, _ in reciprocal_rank_fusion([["x", "y"], ["y"]], k=0, top=1)] == ["y"]
