"""``ragdiag triage --answers-from FILE`` (issue 41): the answers the user already has are the baseline —
read and graded, never generated — and an answers file for other queries is refused in one line, exit 2,
before any call. Against the fault-model test server (test-server replies, never an LLM's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer, load_model

FIXTURE = resource_path("fixtures", "triage-synthetic")
IDS = ("q151", "q152", "q181", "q182", "q271", "q272")  # ranking, position, two controls


def _questions() -> dict[str, str]:
    rows = map(json.loads, (FIXTURE / "queries.jsonl").read_text().splitlines())
    return {r["_id"]: r["text"] for r in rows}


def _answers_file(path: Path, answers: dict[str, str], k: int = 5) -> Path:
    """An answers file as ``import traces`` writes it: a meta line, then one topK row per query."""
    questions = {**_questions(), "q999": "What is the code of t999?", "u-7": "Who?"}
    rows = [{"kind": "meta", "meta": {"system": "production"}}]
    rows += [{"kind": "topK", "id": q, "E": "production", "Nc": k, "Np": 1, "K": k, "rank": list(range(k)),
              "inK": [1] + [0] * (k - 1), "P": 1 / k, "R": 1.0, "q": questions[q], "answer": a}
             for q, a in answers.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _triage(server: FaultServer, out: Path, cache: Path, *args: object, ids: tuple[str, ...] = IDS):
    return CliRunner().invoke(app, ["triage", "--corpus", str(FIXTURE), "--answers", str(FIXTURE / "answers.jsonl"),
                                    *(["--ids", ",".join(ids)] if ids else []), "--model", "test-model", "--base-url", server.base_url,
                                    "--out-dir", str(out), "--cache-dir", str(cache), "--no-progress",
                                    "--bootstrap", "100", *map(str, args)])


def _rows(out: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (out / "per_query.jsonl").read_text().splitlines())}


def test_the_baseline_is_read_not_generated(server, tmp_path):
    before = server.completed
    generated = _triage(server, tmp_path / "generated", tmp_path / "cache-a")
    assert generated.exit_code == 0, generated.output
    paid_generated = server.completed - before
    rows = _rows(tmp_path / "generated")
    production = {q: rows[q]["answers"]["baseline"] for q in IDS}
    production["q272"] = "I do not know."  # production got this control wrong: now it fails and is triaged
    answers = _answers_file(tmp_path / "answers.jsonl", production)

    before = server.completed
    read = _triage(server, tmp_path / "read", tmp_path / "cache-b", "--answers-from", answers)
    assert read.exit_code == 0, read.output
    paid_read = server.completed - before
    read_rows = _rows(tmp_path / "read")
    assert {q: r["answers"]["baseline"] for q, r in read_rows.items()} == production
    for q in ("q151", "q152", "q181", "q182"):
        assert read_rows[q]["cause"] == rows[q]["cause"]
    assert not rows["q272"]["triaged"] and read_rows["q272"]["triaged"] and read_rows["q272"]["baseline_grade"] == 1
    result = json.loads((tmp_path / "read" / "triage.json").read_text())
    assert result["meta"]["baseline"] == "read from --answers-from (not generated)"
    assert result["calls"]["paid"] == paid_read
    for q in IDS[:-1]:  # the same answers and grades, less the baseline's generation
        assert read_rows[q]["calls"] == rows[q]["calls"] - 1, q
    assert rows["q272"]["calls"] == 2 and read_rows["q272"]["calls"] > 1  # it fails now: interventions are paid
    assert paid_read == paid_generated - len(IDS) + read_rows["q272"]["calls"] - 1


@pytest.mark.parametrize("case, problem", [
    ("other", "the file answers other queries"),
    ("other-all", "the file answers other queries"),
    ("question", "but the file's answer is to"),
    ("k", "was answered on K = 3 passages"),
    ("missing-id", "no answer for query 'q181'"),
])
def test_an_answers_file_for_other_queries_is_refused_before_any_call(server, tmp_path, case, problem):
    answers = {q: "The answer is ZX1Q." for q in IDS}
    if case.startswith("other"):
        answers = {"q999": "x", "u-7": "y"}
    if case == "missing-id":
        del answers["q181"]
    path = _answers_file(tmp_path / "answers.jsonl", answers, k=3 if case == "k" else 5)
    if case == "question":
        lines = path.read_text().splitlines()
        row = json.loads(lines[1])
        lines[1] = json.dumps({**row, "q": "What is the code of somewhere else?"})
        path.write_text("\n".join(lines) + "\n")
    before = server.completed
    res = _triage(server, tmp_path / "out", tmp_path / "cache", "--answers-from", path,
                  ids=() if case == "other-all" else IDS)
    assert res.exit_code == 2, res.output
    assert problem in res.output and res.output.count("ragdiag: error:") == 1
    assert "Traceback" not in res.output and server.completed == before
    assert not (tmp_path / "out" / "triage.json").exists()


def test_with_qrels_and_no_references_retrieval_misses_are_never_unexplained(server, tmp_path):
    """Issue 41: no relevant passage in the pool is a retrieval miss on the qrels' evidence (no oracle without
    references); a relevant passage below K is ranking once inject fixes it; the summary says what each rests on."""
    misses, ranking = [f"q{n}" for n in range(121, 131)], ["q151", "q152"]
    res = CliRunner().invoke(app, ["triage", "--corpus", str(FIXTURE), "--ids", ",".join(misses + ranking),
                                   "--model", "test-model", "--base-url", server.base_url, "--out-dir",
                                   str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                                   "--bootstrap", "100"])
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "out")
    assert {q: rows[q]["cause"] for q in misses} == dict.fromkeys(misses, "retrieval-miss")
    assert all(rows[q]["evidence"] == ["qrels"] for q in misses)
    assert {rows[q]["cause"] for q in ranking} == {"ranking"} and rows["q151"]["grades"]["inject"] == 5
    result = json.loads((tmp_path / "out" / "triage.json").read_text())
    assert result["causes"]["retrieval-miss"]["evidence"] == {"qrels": len(misses)}
    assert result["causes"]["unexplained"]["count"] == 0
    assert "retrieval-miss" in res.stdout and "rests on: qrels 10/10" in res.stdout


def test_texts_and_ranked_take_the_answered_samples_only(server, tmp_path):
    model = load_model(FIXTURE / "model.json")
    questions = {"s1": "What is the code of t201?", "s2": "What is the code of t202?"}  # position faults
    texts, ranked = tmp_path / "texts.jsonl", tmp_path / "ranked.jsonl"
    texts.write_text("".join(json.dumps({"id": s, "q": q, "p": [f"Its key is {model[q]['code']}."],
                                         "n": [f"filler {i}" for i in range(5)]}) + "\n" for s, q in questions.items()))
    ranked.write_text("".join(json.dumps({"id": s, "E": "e", "Nc": 6, "Np": 1, "K": [5], "P": [0.2], "R": [1.0],
                                          "rank": [1, 2, 3, 0, 4, 5]}) + "\n" for s in questions))
    answers = tmp_path / "production.jsonl"
    answers.write_text(json.dumps({"kind": "topK", "id": "s2", "E": "production", "Nc": 6, "Np": 1, "K": 5,
                                   "rank": [1, 2, 3, 0, 4], "inK": [0, 0, 0, 1, 0], "P": 0.2, "R": 1.0,
                                   "q": questions["s2"], "answer": "The references are insufficient."}) + "\n")
    res = CliRunner().invoke(app, ["triage", "--texts", str(texts), "--ranked", str(ranked), "--answers-from",
                                   str(answers), "--model", "test-model", "--base-url", server.base_url, "--out-dir",
                                   str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c"), "--no-progress",
                                   "--bootstrap", "100"])
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "out")
    assert list(rows) == ["s2"] and rows["s2"]["answers"]["baseline"] == "The references are insufficient."
    assert rows["s2"]["cause"] == "position" and rows["s2"]["evidence"] == ["qrels"]
