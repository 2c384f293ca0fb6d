"""French questions get the French prompts and (test-server) French answers; the language is recorded per
row for generate and grade. The chat test server answers in French when the prompt asks for French."""

from __future__ import annotations

import json

from ragdiag.llm.prompts import load_prompt
from tests.pipeline.long_data import write_long


def _rows(path):
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return lines[0]["meta"], lines[1:]


def test_french_questions_get_french_prompts_answers_and_grades(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 2, [20, 20], french=True)
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,3", "--out", answers,
                  "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    assert "--lang auto: 2 question(s) detected as French (prompt generation-fr@v1), 0 as English" in res.output
    meta, rows = _rows(answers)
    assert meta["prompts"] == ["generation-fr@v1"] and meta["lang"] == "auto"
    assert {r["lang"] for r in rows} == {"fr"}
    assert all(r["answer"].startswith("D'après les références : ") for r in rows)  # test-server French
    sent = server.bodies[0]["messages"]
    assert sent[0]["content"] == load_prompt("generation-fr").system.strip() and "Références :" in sent[1]["content"]
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    assert manifest["run_record"]["prompts"] == {"generation-fr": "generation-fr@v1",
                                                 "degenerate-patterns": "degenerate-patterns@v1"}  # the gate's list
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    records = json.loads(graded.read_text())
    assert {r["lang"] for r in records} == {"fr"} and all(r["grade"] is not None for r in records)
    judge = server.bodies[-1]["messages"]
    assert judge[0]["content"] == load_prompt("grading-fr").system.strip() and "Réponse idéale :" in judge[1]["content"]
    grade_manifest = json.loads((tmp_path / "graded.json.manifest.json").read_text())
    assert grade_manifest["meta"]["prompts"] == ["grading-fr@v1", "grading-repair-fr@v1"]
    assert grade_manifest["summary"]["lang"] == {"setting": "auto", "en": 0, "fr": 4}


def test_lang_en_forces_english_prompts_for_french_questions(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 1, [20], french=True)
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", answers,
                  "--base-url", server.base_url, "--lang", "en")
    assert res.exit_code == 0, res.output
    meta, rows = _rows(answers)
    assert meta["prompts"] == ["generation@v2"] and {r["lang"] for r in rows} == {"en"}
    assert all(r["answer"].startswith("From the references: ") for r in rows)


def test_english_questions_keep_the_english_prompt_and_its_cache_entries(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 1, [20])
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", first,
                   "--base-url", server.base_url, "--lang", "en").exit_code == 0
    sent = server.requests
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", second,
                  "--base-url", server.base_url)  # --lang auto: detected English, same prompt, same cache keys
    assert res.exit_code == 0 and server.requests == sent
    assert _rows(first)[1] == _rows(second)[1]


def test_french_grading_reply_without_grade_is_repaired_in_french(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 1, [20], french=True)
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    server.script_judge("Je dirais quatre sur cinq", '{"grade": 4, "reason": "r"}')
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert json.loads(graded.read_text())[0]["grade"] == 4.0
    repair = server.bodies[-1]["messages"][-1]["content"]
    assert repair == load_prompt("grading-repair-fr").user.strip()
