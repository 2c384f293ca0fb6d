"""Every LLM call carries an output limit (issue 28 §3): ``--max-answer-tokens`` for generation
(default 512, the prompt budget's answer reserve), a small fixed budget for the judge's one-line
JSON; both in the request (hence the cache key) and the manifest's meta; a reply that stopped at the
limit (``finish_reason: length``) is counted, kept with a marker line and flagged as the degenerate
kind ``truncated``. Replies are the chat test server's (it cuts a reply at the limit, in words), not
an LLM's."""

from __future__ import annotations

import json

from ragdiag.cli.options import DEFAULT_MAX_ANSWER_TOKENS
from ragdiag.data.reference_gate import TRUNCATED_MARK
from ragdiag.llm.context_budget import ANSWER_RESERVE
from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS, limit_param


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _generations(server):
    return [b for b in server.bodies if "response_format" not in b]


def test_default_answer_limit_is_the_budget_reserve_and_judges_have_their_own(tiny, server, run_cli, tmp_path):
    assert DEFAULT_MAX_ANSWER_TOKENS == ANSWER_RESERVE == 512
    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    assert run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url).exit_code == 0
    generations, judges = _generations(server), [b for b in server.bodies if "response_format" in b]
    assert generations and all(b["max_tokens"] == 512 for b in generations)
    assert judges and all(b["max_tokens"] == JUDGE_MAX_TOKENS for b in judges)
    meta = _lines(answers)[0]["meta"]
    assert meta["max_answer_tokens"] == 512 and meta["llm"]["output_limit_param"] == "max_tokens"
    grade_meta = json.loads((tmp_path / "graded.json.manifest.json").read_text())["meta"]
    assert grade_meta["judge_max_tokens"] == JUDGE_MAX_TOKENS


def test_an_answer_cut_at_the_limit_is_counted_flagged_and_keyed_by_the_limit(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", answers,
                  "--base-url", server.base_url, "--max-answer-tokens", "5")
    assert res.exit_code == 0, res.output
    assert all(b["max_tokens"] == 5 for b in _generations(server))
    rows = [r for r in _lines(answers) if r["kind"] != "meta"]
    assert rows and all(r["answer"].endswith("(finish_reason: length, max_tokens 5)]") for r in rows)
    assert all(TRUNCATED_MARK in r["answer"] for r in rows)
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    gate = manifest["summary"]["reference_gate"]
    assert gate["topK"]["truncated"] == 4 and gate["ideal"]["truncated"] == 4
    generated = server.requests
    assert manifest["summary"]["truncated"] == manifest["summary"]["calls"] == generated  # every call sent
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url, "--keep-degenerate")
    assert res.exit_code == 0, res.output
    assert all(r["topK_degenerate"] == "truncated" for r in json.loads(graded.read_text()))
    sent = server.requests
    again = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", tmp_path / "a6.jsonl",
                    "--base-url", server.base_url, "--max-answer-tokens", "6")
    assert again.exit_code == 0, again.output
    assert server.requests == sent + generated  # another limit is another request: nothing from the cache


def test_the_answer_limit_has_a_checked_range(tiny, run_cli, tmp_path):
    texts, ranked = tiny
    for value in ("0", "131073", "many"):
        res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", tmp_path / "a.jsonl",
                      "--base-url", "http://127.0.0.1:9/v1", "--max-answer-tokens", value)
        assert res.exit_code == 2 and "--max-answer-tokens" in res.output
        assert not (tmp_path / "a.jsonl").exists()


def test_openais_own_api_gets_max_completion_tokens():
    assert limit_param("https://api.openai.com/v1") == "max_completion_tokens"
    assert limit_param("http://127.0.0.1:8080/v1") == "max_tokens"
