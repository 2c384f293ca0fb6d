"""``ragdiag triage`` with neither qrels nor reference answers (issue 41) on the bundled synthetic set, against
the fault-model test server, whose sufficient-context rater and reference-free judge follow its fault model
(test-server replies, never an LLM's).

Without a reference or qrels two injected faults do not exist (a degenerate reference; a missing qrels line)
and two are seen as what they are from the passages alone, so the truth the tree must find is
:data:`TRUTH`: ``reference`` queries pass (nothing else is wrong with them); the ``qrels-gap`` answer sits
unjudged at rank 8 (``ranking``); the ``generator`` and ``parametric`` models decline with the answer in the
top K (``over-abstains``: that the parametric model knows the code closed-book cannot be seen without a
reference).

The tests triage the first :data:`PER_CAUSE` queries of each of the nine faults and of the controls: the set is
built without randomness (tools/make_triage_synthetic.py), so the 30 queries of a fault share one layout and
one fault model and differ only in their topic token and code; more of them would take the same paths to the
same cause (benchmarks/bench_triage_reference_free.py triages all 300)."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer, load_model

FIXTURE = resource_path("fixtures", "triage-synthetic")
TRUTH = {"reference": "passed", "qrels-gap": "ranking", "parametric": "over-abstains", "generator": "over-abstains",
         "retrieval-miss": "retrieval-miss", "ranking": "ranking", "position": "position", "distractors": "distractors",
         "context-size": "context-size", "ok": "passed"}
PER_CAUSE = 5  # the first queries of each fault (and of the controls) in the unjudged set


def _faults() -> dict[str, str]:
    return {r["query_id"]: r["fault"] for r in map(json.loads, (FIXTURE / "faults.jsonl").read_text().splitlines())}


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, (out / "per_query.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def unjudged(tmp_path_factory) -> Path:
    """The synthetic set without qrels and without reference answers: the corpus, and the first
    :data:`PER_CAUSE` queries of each of the nine faults and of the controls (q001–q300, 30 each)."""
    folder = tmp_path_factory.mktemp("unjudged")
    (folder / "corpus.jsonl").write_text((FIXTURE / "corpus.jsonl").read_text())
    kept = {f"q{i:03d}" for i in range(1, 301) if (i - 1) % 30 < PER_CAUSE}
    (folder / "queries.jsonl").write_text("".join(line + "\n" for line in (FIXTURE / "queries.jsonl").read_text().splitlines()
                                                  if json.loads(line)["_id"] in kept))
    return folder


def triage(server: FaultServer, corpus: Path, out: Path, cache: Path, *args: object):
    return CliRunner().invoke(app, ["triage", "--corpus", str(corpus), "--model", "test-model", "--base-url",
                                    server.base_url, "--out-dir", str(out), "--cache-dir", str(cache), "--workers",
                                    "8", "--no-progress", "--bootstrap", "200", *map(str, args)])


@pytest.fixture(scope="module")
def free_run(server, unjudged, tmp_path_factory):
    work = tmp_path_factory.mktemp("free")
    before = server.completed
    # the nine original fault types and the controls (q001–q300); the six later types (q301–q480: repeats,
    # long contexts, split answers …) are triaged with references in test_triage_beyond.py
    res = triage(server, unjudged, work / "out", work / "cache")
    assert res.exit_code == 0, res.output
    return work, res, server.completed - before


def test_primary_cause_matches_the_fault_without_qrels_or_references(free_run):
    work, res, completed = free_run
    faults, rows = _faults(), _rows(work / "out")
    confusion = collections.Counter((faults[q], r["cause"] if r["triaged"] else "passed") for q, r in rows.items())
    for fault in ("ok", "reference"):  # every control passes (and so do the queries whose only fault was the reference)
        assert confusion[(fault, "passed")] == PER_CAUSE, confusion
    faulty = [q for q in rows if TRUTH[faults[q]] != "passed"]
    right = sum(rows[q]["cause"] == TRUTH[faults[q]] for q in faulty)
    assert right / len(faulty) >= 0.9, confusion
    for fault, cause in TRUTH.items():
        n = sum(v for (f, _), v in confusion.items() if f == fault)
        assert confusion[(fault, cause)] / n >= 0.9, (fault, confusion)
    assert all(r["evidence"] == ["sufficient-context"] for r in rows.values() if r["triaged"] and r["cause"] != "passed")
    result = json.loads((work / "out" / "triage.json").read_text())
    calls = result["calls"]
    assert calls["paid_per_triaged_query"] <= 10 and calls["paid"] == completed
    assert f"{calls['paid_per_triaged_query']:.2f} paid calls per triaged query" in res.stdout
    abstains = 2 * PER_CAUSE  # the generator and parametric faults
    assert result["causes"]["over-abstains"]["evidence"] == {"sufficient-context": abstains}
    assert f"rests on: sufficient-context {abstains}/{abstains}" in res.stdout and "reference-free" in result["meta"]["graded_against"]
    assert result["run_record"]["prompts"]["sufficient-context"] == "sufficient-context@v1"


def test_rater_agrees_with_the_fault_models_truth_per_cause(free_run):
    """Truth: the top K (or the pool: every passage BM25 can find, all ten of the query's) holds the code."""
    work, _, _ = free_run
    texts = {r["_id"]: r["text"] for r in map(json.loads, (FIXTURE / "corpus.jsonl").read_text().splitlines())}
    model, faults = load_model(FIXTURE / "model.json"), _faults()
    questions = {r["_id"]: r["text"] for r in map(json.loads, (FIXTURE / "queries.jsonl").read_text().splitlines())}
    agree: dict[str, list[bool]] = collections.defaultdict(list)
    for qid, row in _rows(work / "out").items():
        rating = row.get("sufficient_context")
        if rating is None:
            continue
        code = model[questions[qid]]["code"]
        holds = [d for d in row["contexts"]["baseline"] if code in texts[d]]
        agree[faults[qid]].append(rating["top_k"]["sufficient"] == bool(holds) and rating["top_k"]["needed"] ==
                                  (holds if holds else []))
        if rating["pool"] is not None:
            in_pool = any(code in t for d, t in texts.items() if d.startswith(f"{qid}-d"))
            agree[faults[qid]].append(rating["pool"]["sufficient"] == in_pool)
    assert set(agree) == {f for f, c in TRUTH.items() if c != "passed"}
    assert {f: sum(a) / len(a) for f, a in agree.items()} == dict.fromkeys(agree, 1.0)


def test_a_rerun_pays_nothing(server, unjudged, free_run):
    work, _, _ = free_run
    before = server.requests
    res = triage(server, unjudged, work / "again", work / "cache", "--max-queries", str(4 * PER_CAUSE))
    assert res.exit_code == 0, res.output
    assert server.requests == before
    first = _rows(work / "out")
    assert all(first[q]["cause"] == r["cause"] for q, r in _rows(work / "again").items())


def test_unsupported_and_generator_with_a_model_that_answers_anyway(unjudged, tmp_path, monkeypatch):
    """Retrieval misses whose model makes a code up are unsupported; a model that answers the trap with the
    answer in the top K, whatever the context, is the generator."""
    model = load_model(FIXTURE / "model.json")
    made_up, wrong = [f"t{n}" for n in range(121, 124)], [f"t{n}" for n in range(181, 184)]
    for topic in made_up:
        model[f"What is the code of {topic}?"]["hallucinates"] = True
    for topic in wrong:
        model[f"What is the code of {topic}?"]["wrong"] = True
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    ids = [f"q{t[1:]}" for t in made_up + wrong]
    with FaultServer(model) as fault:
        res = triage(fault, unjudged, tmp_path / "out", tmp_path / "c", "--ids", ",".join(ids))
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "out")
    assert {q: rows[q]["cause"] for q in ids} == {**dict.fromkeys(ids[:3], "unsupported"),
                                                  **dict.fromkeys(ids[3:], "generator")}
    assert all(rows[q]["abstained"]["baseline"] is False for q in ids)


class ProseRater(FaultServer):
    """The fault server, but the sufficient-context rater replies prose (never a verdict)."""

    def _reference_free(self, user: str) -> str | None:
        if "Rate whether these passages are sufficient" in user or "Rate whether the <passage> elements" in user:
            return "These passages look fine to me."
        return super()._reference_free(user)


def test_a_rater_reply_that_is_no_verdict_is_asked_again_then_undecided(unjudged, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ProseRater(load_model(FIXTURE / "model.json")) as fault:
        res = triage(fault, unjudged, tmp_path / "out", tmp_path / "c", "--ids", "q151")
        assert res.exit_code == 0, res.output
        assert fault.completed == 4  # baseline answer and grade; the rater's call and its repair
    row = _rows(tmp_path / "out")["q151"]
    assert row["cause"] == "unexplained" and row["calls"] == 4
    assert row["sufficient_context"]["top_k"]["sufficient"] is None
    assert "no verdict" in row["sufficient_context"]["top_k"]["error"]


@pytest.mark.parametrize("args, message", [
    (("--pool-k", "5"), "--pool-k must be above --k 5"),
    (("--pool-k", "50", "--depth", "20"), "at most the candidate pool (20"),
    (("--reference-free", "--answers", FIXTURE / "answers.jsonl"), "give --answers or --reference-free, not both"),
    (("--pool-k", "8", "--answers", FIXTURE / "answers.jsonl"), "--pool-k is the sufficient-context rater's pool"),
    (("--repeats", "3"), "grades each context once; leave out --repeats there"),
])
def test_bad_input_stops_in_one_line_before_any_call(server, unjudged, tmp_path, args, message):
    before = server.requests
    corpus = FIXTURE if "--answers" in args else unjudged
    res = triage(server, corpus, tmp_path / "out", tmp_path / "c", *args)
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("ragdiag: error: "), res.output
    assert message in lines[0] and server.requests == before
    assert not (tmp_path / "out" / "triage.json").exists()


def test_reference_free_on_request_with_qrels_present(server, tmp_path):
    res = triage(server, FIXTURE, tmp_path / "out", tmp_path / "c", "--reference-free", "--ids", "q151,q211",
                 "--pool-k", "10")
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "out")
    assert rows["q151"]["cause"] == "ranking" and rows["q211"]["cause"] == "distractors"
    assert rows["q151"]["sufficient_context"]["pool"]["passages"] == 10


def test_exhaustive_keeps_the_primary_cause_and_fills_also(server, unjudged, free_run, tmp_path):
    """Position faults: moving the needed passage first fixes them, and so do the needed passages alone."""
    ids = ["q181", "q182", "q211", "q241"]
    res = triage(server, unjudged, tmp_path / "out", free_run[0] / "cache", "--ids", ",".join(ids), "--exhaustive")
    assert res.exit_code == 0, res.output
    rows, first = _rows(tmp_path / "out"), _rows(free_run[0] / "out")
    assert all(rows[q]["cause"] == first[q]["cause"] for q in ids)
    assert rows["q181"]["also"] == ["distractors"] and "drop-distractors" in rows["q181"]["grades"]
