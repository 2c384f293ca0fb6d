"""The judged loop with two retrievers on one corpus (``compare --sequential --corpus C --base-retriever A
--new-retriever B``) against the local chat test server (its replies and grades are the test server's,
never an LLM's): both rankings are made before any call, and the decision and n equal the two-ranked-files
judged loop replayed on the same rankings, every call then from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.compare.judged_corpus import CorpusSource, corpus_samples
from tests.compare.test_judged_loop import _cli

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "en-sample"
BASE, NEW = "bm25", "bm25:lucene:k1=5,b=1"


def _common(server, cache, out):
    return ("--k", 3, "--batch-size", 5, "--base-url", server.base_url, "--cache-dir", cache, "--no-progress",
            "--seed", 3, "--out", out)


def test_two_retrievers_equal_the_replay_of_their_rankings_as_files(server, tmp_path):
    cache = tmp_path / "cache"
    live = _cli("compare", "--sequential", "--corpus", CORPUS, "--base-retriever", BASE, "--new-retriever", NEW,
                *_common(server, cache, tmp_path / "live.json"))
    assert live.exit_code in (0, 1), live.output
    result = json.loads((tmp_path / "live.json").read_text())
    seq, meta = result["sequential"], result["meta"]
    assert (meta["base_name"], meta["new_name"]) == (BASE, NEW)
    assert meta["judged"]["base_retriever"] == BASE and meta["judged"]["new_retriever"] == NEW
    assert seq["calls"]["paid"] == server.requests > 0
    assert "cost before any call" in " ".join(live.output.split())
    # the same rankings written as a texts file and two ranked files, through the two-ranked-files loop
    samples = corpus_samples(CorpusSource(CORPUS, None, None, BASE, NEW), 3)
    assert len(samples.texts) == 40 and samples.base != samples.new
    files = tmp_path / "texts.json", tmp_path / "base.ranked.json", tmp_path / "new.ranked.json"
    for path, rows in zip(files, (samples.texts, samples.base, samples.new)):
        path.write_text(json.dumps(rows))
    sent = server.requests
    replay = _cli("compare", "--sequential", "--texts", files[0], "--base-ranked", files[1], "--new-ranked", files[2],
                  *_common(server, cache, tmp_path / "replay.json"))
    assert replay.exit_code == live.exit_code, replay.output
    assert server.requests == sent  # every call from the cache: the same prompts
    replayed = json.loads((tmp_path / "replay.json").read_text())
    assert replayed["sequential"]["stopped_at"] == seq["stopped_at"]
    assert replayed["sequential"]["metrics"] == seq["metrics"] and replayed["metrics"] == result["metrics"]
    assert replayed["sequential"]["calls"]["from_cache"] == seq["calls"]["paid"] + seq["calls"]["from_cache"]


@pytest.mark.parametrize(("args", "message"), [
    (("--base-retriever", "bm25", "--new-retriever", "bm25"), "the same retriever (bm25) answered by the same model"),
    (("--base-retriever", "bm25", "--new-retriever", "bm99"), "--new-retriever: retriever 'bm99': unknown kind"),
    (("--base-retriever", "bm25", "--new-retriever", "bm25:lucene:b=2"), "BM25 b must be between 0 and 1"),
    (("--base-retriever", "bm25"), "--corpus needs --new-retriever"),
    (("--new-retriever", "bm25"), "--corpus needs --base-retriever"),
    (("--base-retriever", "bm25", "--new-retriever", "bm25:okapi", "--base-ranked", CORPUS / "answers.jsonl"),
     "--corpus (two retrievers on one corpus) and --base-ranked"),
    (("--base-retriever", "bm25", "--new-retriever", "bm25:okapi", "--k", 400), "--k 400 is larger than the 369 passages"),
    (("--base-retriever", "bm25", "--new-retriever", "bm25:okapi", "--plan"), "--plan does not go with the judged loop"),
    (("--base-retriever", "bm25", "--new-retriever", "bm25:okapi", "--max-queries", 10),
     "before the asymptotic sequence's first look at --burn-in 20"),
])
def test_bad_corpus_sides_refused_in_one_line_before_any_call(server, tmp_path, args, message):
    res = _cli("compare", "--sequential", "--corpus", CORPUS, *args, "--base-url", server.base_url,
               "--cache-dir", tmp_path / "cache")
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split()) and "Traceback" not in res.output
    assert server.requests == 0


def test_a_retriever_without_corpus_refused(tmp_path):
    res = _cli("compare", "--sequential", "--base-retriever", "bm25", "--new-retriever", "bm25:okapi")
    assert res.exit_code == 2 and "--base-retriever goes with --corpus" in res.output


def test_one_retriever_two_models_named_by_their_models(server, tmp_path):
    server.words_by_model = {"small-model": 2}
    res = _cli("compare", "--sequential", "--sequence", "betting", "--corpus", CORPUS, "--base-retriever", BASE,
               "--model", "big-model", "--new-model", "small-model", "--max-queries", 10, *_common(server, tmp_path / "cache", tmp_path / "m.json"))
    assert res.exit_code in (0, 1), res.output
    meta = json.loads((tmp_path / "m.json").read_text())["meta"]
    assert (meta["base_name"], meta["new_name"]) == ("big-model", "small-model")
    assert meta["judged"]["base_retriever"] == meta["judged"]["new_retriever"] == BASE
    assert {b["model"] for b in server.bodies} == {"big-model", "small-model"}
