"""BM25 on bm25s (Lucene and Okapi variants), tokenisation with Snowball stemming, tie order,
no zero-score hits, storage without pickle; reciprocal rank fusion."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.retrieval.bm25 import (
    BM25_FILES,
    Bm25Config,
    BM25Index,
    Tokenizer,
    fold_accents,
    load_bm25,
    parse_bm25_spec,
    save_bm25,
    tokenize,
    top_k_from_scores,
)
from ragdiag.retrieval.fusion import reciprocal_rank_fusion

TEXTS = ["cats purr softly", "dogs bark loudly", "a cat and a dog", "quantum chromodynamics lecture",
         "the cat sat with the cat", "dog days of summer", "barking dogs seldom bite", "lecture notes"]


def test_tokenize_normalises_case_unicode_accents_and_stems():
    assert tokenize("The Ｃａｔ sat on THE mat", stem=False) == ["cat", "sat", "mat"]  # NFKC folds full-width letters
    assert tokenize("L'hiver à Paris", lang="fr", stem=False) == ["hiver", "paris"]  # elision "l'" is a stopword
    assert tokenize("L'hôpital de Paris", lang="fr", accents=True, stem=False) == ["hopital", "paris"]
    assert fold_accents("Ångström Ñandú") == "Angstrom Nandu"
    assert tokenize("caf\u00e9") == tokenize("cafe\u0301")  # NFC and NFD spellings agree


def test_stemming_makes_percolating_match_percolate():
    texts = ["water percolate through the soil", "coffee brewing methods"]
    stemmed = BM25Index.build(texts, parse_bm25_spec("lucene"))
    rows, scores = stemmed.top_k("percolating", 2)
    assert rows.tolist() == [0] and scores[0] > 0
    plain = BM25Index.build(texts, parse_bm25_spec("lucene", stem=False))
    assert plain.top_k("percolating", 2)[0].tolist() == []  # the relevant passage scores 0 without stemming


def test_french_stemming_groups_inflections():
    tok = Tokenizer("fr")
    assert tok("impôts")[0] == tok("impôt")[0]
    assert tok("déclarations")[0] == tok("déclaration")[0]


def test_lucene_scores_follow_the_formula_on_a_hand_example():
    # two docs, N=2; "cat" appears once in doc 0 (len 2) and not in doc 1 (len 2): avgdl=2, df=1
    index = BM25Index.build(["cat purr", "dog bark"], Bm25Config(k1=0.9, b=0.4, stem=False))
    idf = np.log(1 + (2 - 1 + 0.5) / (1 + 0.5))  # ln 2
    expected = idf * 1 / (1 + 0.9 * (1 - 0.4 + 0.4 * 2 / 2))
    np.testing.assert_allclose(index.scores("cat"), [expected, 0.0], rtol=1e-6)


def test_okapi_matches_rank_bm25_scores():
    rank_bm25 = pytest.importorskip("rank_bm25")
    tok = Tokenizer("en", stem=True)
    index = BM25Index.build(TEXTS, parse_bm25_spec("bm25:okapi"))
    reference = rank_bm25.BM25Okapi([tok(t) for t in TEXTS])
    for query in ["cat dog", "loud dogs barking", "cat cat lecture", "quantum summer notes"]:
        np.testing.assert_allclose(index.scores(query), reference.get_scores(tok(query)), rtol=1e-9, atol=1e-12)
    custom = BM25Index.build(TEXTS, parse_bm25_spec("okapi:k1=1.2,b=0.5,epsilon=0.1"))
    reference = rank_bm25.BM25Okapi([tok(t) for t in TEXTS], k1=1.2, b=0.5, epsilon=0.1)
    np.testing.assert_allclose(custom.scores("cat dog bite"), reference.get_scores(tok("cat dog bite")), rtol=1e-9)


def test_no_zero_score_hits_and_lists_may_be_short():
    index = BM25Index.build(TEXTS, Bm25Config())
    rows, scores = index.top_k("quantum", 5)
    assert rows.tolist() == [3] and scores[0] > 0
    assert index.top_k("unknownword", 5)[0].size == 0
    assert index.top_k("the of and", 5)[0].size == 0  # only stopwords


def test_ties_go_to_lower_corpus_position_even_at_the_cut_off():
    texts = ["filler text"] * 3 + ["apple"] * 6  # six identical hits at positions 3..8
    index = BM25Index.build(texts, Bm25Config())
    for k in range(1, 7):
        assert index.top_k("apple", k)[0].tolist() == list(range(3, 3 + k))
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=2000).astype(float)  # many ties
    for k in (1, 7, 500, 1999):
        best, _ = top_k_from_scores(scores, k)
        expected = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        assert best.tolist() == expected


def test_empty_corpus_texts_is_one_line():
    with pytest.raises(RagdiagError, match="every passage is empty or only stopwords"):
        BM25Index.build(["", "   ", "the of"], Bm25Config(), source="corpus.jsonl")


@pytest.mark.parametrize("spec,message", [
    ("bm25:tfidf", "unknown variant 'tfidf'"), ("lucene:k1=-1", "k1 must be"), ("lucene:b=1.5", "b must be between 0 and 1"),
    ("lucene:k1=nan", "k1 must be"), ("lucene:epsilon=0.2", "name in k1, b"), ("okapi:k1=x", "is not a number"),
])
def test_bad_specs(spec, message):
    with pytest.raises(RagdiagError, match=message):
        parse_bm25_spec(spec)


def test_spec_defaults():
    assert parse_bm25_spec("bm25") == Bm25Config("lucene", 0.9, 0.4)
    assert parse_bm25_spec("bm25:okapi") == Bm25Config("okapi", 1.5, 0.75, 0.25)
    assert parse_bm25_spec("bm25:lucene:k1=1.2,b=0.75", lang="fr").to_json()["lang"] == "fr"


@pytest.mark.parametrize("variant", ["lucene", "okapi"])
def test_save_load_round_trip_without_pickle(tmp_path, variant):
    index = BM25Index.build(TEXTS, parse_bm25_spec(variant))
    save_bm25(index, tmp_path / "bm25")
    assert sorted(p.name for p in (tmp_path / "bm25").iterdir()) == sorted(BM25_FILES)
    for name in BM25_FILES[:3]:
        assert (tmp_path / "bm25" / name).read_bytes()[:6] == b"\x93NUMPY"
    loaded = load_bm25(tmp_path / "bm25", index.config)
    for query in ["cat dog", "lecture"]:
        np.testing.assert_array_equal(loaded.scores(query), index.scores(query))
    (tmp_path / "bm25" / "vocab.index.json").unlink()
    with pytest.raises(RagdiagError, match="missing bm25/vocab.index.json"):
        load_bm25(tmp_path / "bm25", index.config)


def test_rrf_formula_and_default_k():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]])
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["d"] == pytest.approx(1 / 63)
    assert [d for d, _ in fused] == ["a", "c", "b", "d"]
    assert [d for d, _ in reciprocal_rank_fusion([["x", "y"], ["y"]], k=0, top=1)] == ["y"]
