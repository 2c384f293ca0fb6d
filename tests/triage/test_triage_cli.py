"""``ragdiag triage`` end to end on the bundled synthetic set (one injected fault per query, 30 per
cause) against the fault-model test server (test-server replies, never an LLM's): the primary cause
equals the injected one for ≥ 95% of the queries, the default interventions cost ≤ 8 paid calls per
triaged query, a rerun pays nothing, an interrupted run resumes without paying twice, bad input
stops in one line before any call, and the eRAG export equals its recomputation.

The tests triage the first :data:`PER_CAUSE` queries of each of the nine faults and of the controls: the
set is built without randomness (tools/make_triage_synthetic.py), so the 30 queries of a fault share one
layout and one fault model and differ only in their topic token and code; more of them would take the same
paths to the same cause (benchmarks/bench_triage.py measures all 300)."""

from __future__ import annotations

import collections
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer, load_model

FIXTURE = resource_path("fixtures", "triage-synthetic")
CAUSES = ("reference", "qrels-gap", "parametric", "generator", "retrieval-miss", "ranking", "position",
          "distractors", "context-size")
PER_CAUSE = 5  # the first queries of each fault (and of the controls) the tests triage


def _first_of_each(per_cause: int = PER_CAUSE) -> list[str]:
    """The first ``per_cause`` query ids of each of the nine faults and of the controls (q001–q300, 30 each)."""
    return [f"q{i:03d}" for i in range(1, 301) if (i - 1) % 30 < per_cause]


def _faults() -> dict[str, str]:
    return {r["query_id"]: r["fault"] for r in map(json.loads, (FIXTURE / "faults.jsonl").read_text().splitlines())}


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("triage")


def triage(server: FaultServer, out: Path, cache: Path, *args: str):
    full = ["triage", "--corpus", str(FIXTURE), "--answers", str(FIXTURE / "answers.jsonl"), "--model", "test-model",
            "--base-url", server.base_url, "--out-dir", str(out), "--cache-dir", str(cache), "--workers", "8",
            "--no-progress", "--bootstrap", "200", *map(str, args)]
    return CliRunner().invoke(app, full)


@pytest.fixture(scope="module")
def full_run(server, workdir):
    before = server.completed
    res = triage(server, workdir / "full", workdir / "cache", "--ids", ",".join(_first_of_each()))
    assert res.exit_code == 0, res.output
    return workdir / "full", res, server.completed - before


def test_primary_cause_matches_the_injected_fault(full_run):
    out, res, _ = full_run
    faults = _faults()
    rows = _rows(out)
    confusion = collections.Counter((faults[r["id"]], r["cause"]) for r in rows if r["triaged"])
    assert not any(r["triaged"] for r in rows if faults[r["id"]] == "ok")  # controls pass the baseline
    for cause in CAUSES:
        n = sum(v for (f, _), v in confusion.items() if f == cause)
        assert n == PER_CAUSE
        assert confusion[(cause, cause)] / n >= 0.95, (cause, confusion)
    result = json.loads((out / "triage.json").read_text())
    assert set(result["causes"]) == {*CAUSES, "unsupported", "over-abstains", "judge", "unexplained"}
    for cause in CAUSES:
        entry = result["causes"][cause]
        assert entry["count"] == confusion[(cause, cause)]
        assert entry["ci_low"] <= entry["share"] <= entry["ci_high"]
    first = res.stdout.splitlines()[0]  # the decision comes first
    assert "explains" in first and "[" in first and "cost before any call" in res.stderr


def test_default_interventions_cost_at_most_eight_paid_calls_per_triaged_query(full_run):
    out, _, completed = full_run
    result = json.loads((out / "triage.json").read_text())
    calls = result["calls"]
    assert calls["paid_per_triaged_query"] <= 8
    assert calls["paid"] == completed  # every paid call reached the server once
    assert result["cost"]["worst_case_calls"] >= calls["paid"]  # costed up front, before any call
    queries = {q["id"]: q for q in result["queries"]}
    assert sum(q["calls"] for q in queries.values()) == calls["paid_triaged"]
    assert set(queries["q001"]) >= {"id", "cause", "also", "grades", "calls"}


def test_tree_stops_once_the_cause_is_known(full_run):
    out, _, _ = full_run
    faults = _faults()
    for row in _rows(out):
        if faults[row["id"]] == "ranking":  # inject (two passages changed) is the smallest fix: only k = 3, of
            assert set(row["grades"]) == {"baseline", "inject", "k-sweep@3"}  # the same size, ran with it
            assert row["cause"] == "ranking" and row["also"] == []
        if faults[row["id"]] == "qrels-gap":
            assert set(row["grades"]) == {"baseline"}
        if faults[row["id"]] == "reference":
            assert row["calls"] == 0


def test_interrupted_run_resumes_without_paying_twice_and_a_rerun_pays_nothing(server, workdir, full_run):
    """The position and distractors faults of the full run (those that take the most interventions) are enough
    for a breakdown midway: the clean run pays well over twice the calls the server answers before it breaks."""
    queries = workdir / "subset.jsonl"
    kept = {i for i in _first_of_each() if 181 <= int(i[1:]) <= 240}
    subset = [line for line in (FIXTURE / "queries.jsonl").read_text().splitlines() if json.loads(line)["_id"] in kept]
    queries.write_text("\n".join(subset) + "\n")
    args = ("--queries", queries, "--max-retries", "0")
    clean_before = server.completed
    assert triage(server, workdir / "clean", workdir / "cache-clean", *args).exit_code == 0
    clean = server.completed - clean_before
    answered = 30  # the calls the server answers before it breaks down
    assert clean > 2 * answered, clean
    start = server.completed
    server.fail_after(answered)  # the server breaks down midway through the run
    broken = triage(server, workdir / "broken", workdir / "cache-resume", *args)
    server.fail_after(None)
    assert broken.exit_code != 0 and not (workdir / "broken" / "triage.json").exists()
    first = server.completed - start
    assert 0 < first < clean
    resumed = triage(server, workdir / "resumed", workdir / "cache-resume", *args)
    assert resumed.exit_code == 0, resumed.output
    second = server.completed - start - first
    assert first + second == clean  # nothing answered twice
    result = json.loads((workdir / "resumed" / "triage.json").read_text())
    assert result["calls"]["paid"] == second
    before = server.requests
    again = triage(server, workdir / "rerun", workdir / "cache-resume", *args)
    assert again.exit_code == 0 and server.requests == before  # a rerun pays nothing
    rerun = json.loads((workdir / "rerun" / "triage.json").read_text())
    assert rerun["calls"]["paid"] == 0
    assert [(q["id"], q["cause"]) for q in rerun["queries"]] == [(q["id"], q["cause"]) for q in result["queries"]]
    full = {q["id"]: q["cause"] for q in json.loads((full_run[0] / "triage.json").read_text())["queries"]}
    assert all(full[q["id"]] == q["cause"] for q in rerun["queries"])


def test_exhaustive_runs_every_intervention_and_keeps_the_primary_cause(server, workdir, full_run):
    """The queries of the full run, each fault and the controls (the stopping run's calls come from the cache)."""
    res = triage(server, workdir / "exhaustive", workdir / "cache", "--exhaustive", "--ids", ",".join(_first_of_each()))
    assert res.exit_code == 0, res.output
    stop = {r["id"]: r for r in _rows(full_run[0])}
    faults = _faults()
    rows = _rows(workdir / "exhaustive")
    assert len(rows) == 10 * PER_CAUSE and {faults[r["id"]] for r in rows if r["triaged"]} == set(CAUSES)
    for row in rows:
        if not row["triaged"]:
            continue
        assert row["cause"] == stop[row["id"]]["cause"]
        if faults[row["id"]] == "context-size":  # k=1 and k=3 both fix it; inject (rank 8 → 5) does not
            assert {"k-sweep@1", "k-sweep@3", "k-sweep@10", "inject"} <= set(row["grades"])
        if faults[row["id"]] == "position":  # moving it first fixes it; last, or one passage fewer, does not
            assert row["grades"]["position"] == 5 and row["grades"]["position@last"] == 1
            assert row["also"] == [] and row["grades"]["oracle"] == 5


def test_max_calls_is_a_hard_cap(server, workdir):
    before = server.completed
    res = triage(server, workdir / "capped", workdir / "cache-capped", "--max-calls", "100", "--max-queries", "120")
    assert res.exit_code == 0, res.output
    result = json.loads((workdir / "capped" / "triage.json").read_text())
    assert result["calls"]["paid"] == server.completed - before <= 100
    assert result["left_out"] and "--max-calls 100" in result["left_out"][0]["reason"]


def _one_line_error(res, server: FaultServer, before: int, out: Path) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), res.output
    assert server.requests == before  # nothing paid
    assert not out.exists() or not any(out.iterdir())
    return lines[0]


def test_bad_input_stops_before_any_call(server, workdir, tmp_path):
    before = server.requests
    out = tmp_path / "out"
    line = _one_line_error(triage(server, out, tmp_path / "c", "--interventions", "oracle,rerank"), server, before, out)
    assert "unknown intervention 'rerank'" in line
    line = _one_line_error(triage(server, out, tmp_path / "c", "--max-calls", "1"), server, before, out)
    assert "--max-calls 1 is below the cost of one query" in line
    qrels = tmp_path / "zero.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq001\tq001-d01\t0\n")
    line = _one_line_error(triage(server, out, tmp_path / "c", "--qrels", qrels), server, before, out)
    assert "none of the" in line and "ranking, position, distractors" in line


def test_ranked_file_without_passage_texts(server, tmp_path):
    texts, ranked = tmp_path / "texts.jsonl", tmp_path / "ranked.jsonl"
    texts.write_text(json.dumps({"id": "a", "q": "What is the code of t001?", "p": ["x"], "n": ["y"]}) + "\n")
    ranked.write_text(json.dumps({"id": "b", "E": "e", "Nc": 2, "Np": 1, "K": [1], "P": [1.0], "R": [1.0],
                                  "rank": [0, 1]}) + "\n")
    before, out = server.requests, tmp_path / "out"
    res = CliRunner().invoke(app, ["triage", "--texts", str(texts), "--ranked", str(ranked), "--model", "test-model",
                                   "--base-url", server.base_url, "--out-dir", str(out), "--cache-dir",
                                   str(tmp_path / "c"), "--no-progress"])
    line = _one_line_error(res, server, before, out)
    assert "sample 'b' has no passage texts" in line and str(ranked) in line


def test_texts_and_ranked_samples_are_triaged(server, tmp_path):
    model = load_model(FIXTURE / "model.json")
    question = "What is the code of t201?"  # a position fault: the model uses the answer only in the first two
    code = model[question]["code"]
    texts, ranked = tmp_path / "texts.jsonl", tmp_path / "ranked.jsonl"
    texts.write_text(json.dumps({"id": "s1", "q": question, "p": [f"Its key is {code}."],
                                 "n": [f"filler {i}" for i in range(5)]}) + "\n")
    ranked.write_text(json.dumps({"id": "s1", "E": "e", "Nc": 6, "Np": 1, "K": [5], "P": [0.2], "R": [1.0],
                                  "rank": [1, 2, 3, 0, 4, 5]}) + "\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"query_id": "s1", "answer": f"The key is {code}."}) + "\n")
    res = CliRunner().invoke(app, ["triage", "--texts", str(texts), "--ranked", str(ranked), "--answers", str(answers),
                                   "--model", "test-model", "--base-url", server.base_url, "--out-dir",
                                   str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c"), "--no-progress"])
    assert res.exit_code == 0, res.output
    (row,) = _rows(tmp_path / "out")
    assert row["cause"] == "position" and row["contexts"]["position"][0] == "s1#p0"


def test_single_passage_utility_labels_equal_their_recomputation(server, workdir):
    from scipy.stats import kendalltau

    from ragdiag.data.qrels_runs import read_qrels
    from tests.servers.fault_server import answer, grade

    queries = workdir / "erag.jsonl"  # controls (baseline right) and retrieval-miss, ranking, position, distractors
    keep = {*range(121, 124), *range(151, 154), *range(181, 184), *range(211, 214), *range(241, 244), *range(271, 281)}
    queries.write_text("".join(line + "\n" for line in (FIXTURE / "queries.jsonl").read_text().splitlines()
                               if int(json.loads(line)["_id"][1:]) in keep))
    out = workdir / "erag"
    res = triage(server, out, workdir / "cache", "--queries", queries, "--all",
                 "--interventions", "oracle,inject,position,drop-distractors,k-sweep,closed-book,single-passage")
    assert res.exit_code == 0, res.output
    model = load_model(FIXTURE / "model.json")
    texts = {r["_id"]: r["text"] for r in map(json.loads, (FIXTURE / "corpus.jsonl").read_text().splitlines())}
    asked = {r["_id"]: r["text"] for r in map(json.loads, queries.read_text().splitlines())}
    references = {r["query_id"]: r["answer"] for r in map(json.loads, (FIXTURE / "answers.jsonl").read_text().splitlines())}
    utility = read_qrels(out / "utility-qrels.tsv")  # TREC qrels, as evaluate --qrels reads them
    rows = {r["id"]: r for r in _rows(out)}
    assert set(utility) == set(asked) == set(rows)
    mean, best, end_to_end, rel_mean, rel_best = [], [], [], [], []
    for qid, row in rows.items():
        top = row["contexts"]["baseline"]
        expected = {d: grade(references[qid], answer(model[asked[qid]], [texts[d]])) for d in top}
        assert utility[qid] == expected  # each passage alone, answered and graded by the fault model
        assert row["erag"]["utility"] == {"p_at_k_mean": sum(expected.values()) / len(top),
                                          "success_at_k_max": max(expected.values())}
        mean.append(sum(expected.values()) / len(top))
        best.append(max(expected.values()))
        rel = [1.0 if d in row["relevant"] else 0.0 for d in top]
        rel_mean.append(sum(rel) / len(rel))
        rel_best.append(max(rel))
        end_to_end.append(row["baseline_grade"])
    erag = json.loads((out / "triage.json").read_text())["erag"]
    assert erag["queries"] == len(rows)
    for part, agg, values in (("utility", "p_at_k_mean", mean), ("utility", "success_at_k_max", best),
                              ("relevance", "p_at_k_mean", rel_mean), ("relevance", "success_at_k_max", rel_best)):
        expected_tau = kendalltau(values, end_to_end)
        assert not math.isnan(expected_tau.statistic)
        assert erag[part][agg]["tau"] == pytest.approx(expected_tau.statistic)
        assert erag[part][agg]["p_value"] == pytest.approx(expected_tau.pvalue)
    assert "eRAG, Kendall τ" in res.output
    passed = [q for q in json.loads((out / "triage.json").read_text())["queries"] if q["cause"] == "passed"]
    assert len(passed) == 10  # --all: the controls are triaged for base rates, with no failure to explain


def test_result_round_trips_and_the_report_leads_with_the_decision(full_run, tmp_path):
    from ragdiag.results.triage import TriageResult

    out = full_run[0]
    doc = json.loads((out / "triage.json").read_text())
    assert TriageResult.from_json(doc).to_json() == doc
    page = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["report", str(out / "triage.json"), "--out", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text()
    decision = html.index("Decision")
    assert decision < html.index("95% interval") and "of the failures" in html[decision:decision + 400]


def test_batch_mode_pays_the_same_calls_and_finds_the_same_causes(workdir, full_run):
    from tests.servers.batch_server import BatchServer

    class FaultBatchServer(FaultServer, BatchServer):
        """The fault model behind the Files and Batches APIs (test-server replies)."""

    queries = workdir / "batch.jsonl"  # ranking, position and context-size faults: several stages each
    queries.write_text("".join(line + "\n" for line in (FIXTURE / "queries.jsonl").read_text().splitlines()
                               if int(json.loads(line)["_id"][1:]) in {151, 152, 181, 182, 241, 242}))
    with FaultBatchServer(load_model(FIXTURE / "model.json")) as server:
        res = triage(server, workdir / "batched", workdir / "cache-batch", "--queries", queries, "--batch", "openai",
                     "--batch-dir", workdir / "batches", "--batch-poll", "0.01")
        assert res.exit_code == 0, res.output
        assert server.requests == 0 and server.batches_created >= 4  # baseline, then one batch per stage
    result = json.loads((workdir / "batched" / "triage.json").read_text())
    full = {q["id"]: q for q in json.loads((full_run[0] / "triage.json").read_text())["queries"]}
    for query in result["queries"]:
        assert query["cause"] == full[query["id"]]["cause"]
        assert query["calls"] == full[query["id"]]["calls"]  # answered by a batch still counts as paid


def test_without_reference_answers_the_oracle_is_skipped_and_said_so(server, workdir):
    queries = workdir / "ideal.jsonl"  # generator and ranking faults
    queries.write_text("".join(line + "\n" for line in (FIXTURE / "queries.jsonl").read_text().splitlines()
                               if int(json.loads(line)["_id"][1:]) in {91, 92, 151, 152}))
    out = workdir / "ideal"
    res = CliRunner().invoke(app, ["triage", "--corpus", str(FIXTURE), "--queries", str(queries), "--model",
                                   "test-model", "--base-url", server.base_url, "--out-dir", str(out), "--cache-dir",
                                   str(workdir / "cache"), "--no-progress", "--bootstrap", "100"])
    assert res.exit_code == 0, res.output
    result = json.loads((out / "triage.json").read_text())
    assert any("oracle skipped" in n and "(generator) is not tested: needs --answers" in n
               and "a retrieval miss rests on the qrels alone" in n for n in result["notes"])
    assert "note: oracle skipped" in res.stdout
    causes = {q["id"]: q["cause"] for q in result["queries"]}
    # the generator fault's ideal answer (from its relevant passage) is a refusal: the reference gate flags it;
    # the ranking fault is still found by inject, graded against the ideal answer
    assert causes == {"q091": "reference", "q092": "reference", "q151": "ranking", "q152": "ranking"}
    assert all("oracle" not in q["grades"] for q in result["queries"])
