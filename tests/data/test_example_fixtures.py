"""The bundled example sets (fixtures/en-sample, fixtures/fr-sample) are what
tools/build_example_fixtures.py derives, and every file loads with ragdiag's own readers."""

from pathlib import Path

import pytest

from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import read_qrels
from ragdiag.data.reference_answers import load_reference_answers
from tools.build_example_fixtures import ROOT, build_en, build_fr

FIXTURES = ROOT / "fixtures"
SPF = ROOT.parent / "shared" / "data" / "spf-qr-fr"  # the shared data beside the clone


def _assert_same(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        assert (folder / name).read_text(encoding="utf-8") == text, name


def test_en_sample_is_what_the_script_derives():
    _assert_same(FIXTURES / "en-sample", build_en(FIXTURES / "retrieval-response-sample"))


@pytest.mark.skipif(not SPF.is_dir(), reason=f"SPF-QR-fr not found at {SPF}")
def test_fr_sample_is_what_the_script_derives():
    _assert_same(FIXTURES / "fr-sample", build_fr(SPF))


@pytest.mark.parametrize("name, n_queries, n_docs", [("en-sample", 40, 369), ("fr-sample", 65, 125)])
def test_sample_loads_and_every_query_is_judged_and_answered(name, n_queries, n_docs):
    folder = FIXTURES / name
    corpus = load_corpus(folder / "corpus.jsonl")[0]
    queries = load_queries(folder / "queries.jsonl")[0]
    qrels = read_qrels(folder / "qrels" / "test.tsv")
    answers = load_reference_answers(folder / "answers.jsonl")
    assert (len(queries), len(corpus)) == (n_queries, n_docs)
    assert set(qrels) == set(answers) == set(queries)
    assert {d for judged in qrels.values() for d in judged} <= set(corpus)
