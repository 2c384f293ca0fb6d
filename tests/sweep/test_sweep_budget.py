"""``ragdiag sweep`` and the toy model (test server, not an LLM): with a context limit and no budget the
long prompts fail in one line and the run names the option; with ``--max-prompt-tokens`` the
generation prompts are fitted and the cut is recorded per context. (The judge's prompt, ~220 words of
rubric, is longer than any limit that fails only K=5 generations here, so the budget run has no limit.)"""

from __future__ import annotations

import json

import pytest

HNSW = "hnsw:M=4,efConstruction=8,efSearch=2|16"


def _answers(out):
    return [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]


@pytest.fixture()
def limited(servers):
    toy = servers[0]
    toy.context_limit(150)  # words: a 5-passage context of the synthetic corpus exceeds it, a 1-passage one fits
    yield toy
    toy.context_limit(None)


def test_sweep_without_budget_reports_context_errors(workdir, corpus, sweep_cli, limited):
    out = workdir / "limited"
    res = sweep_cli("--corpus", corpus, "--index", HNSW, "--k", "5", "--bootstrap", "100", "--out-dir", out,
                    "--controls", "exact,empty", "--min-coverage", "0", "--max-queries", "8",
                    cache_dir=workdir / "cache-limited")
    assert res.exit_code == 0, res.output
    failed = [a for a in _answers(out) if a["error"] and a["error"].startswith("context length exceeded")]
    assert failed and all("the model's context is 150 tokens (HTTP 400)" in a["error"] for a in failed)
    assert "exceeded the model's context (model context 150 tokens" in res.output
    assert limited.context_rejections == len(failed)  # each sent once
    meta = json.loads((out / "sweep.json").read_text())["meta"]
    assert meta["answer_plan"]["context_exceeded"] == len(failed)  # answer or judge prompt too long


def test_sweep_with_budget_answers_every_context_and_records_the_cut(workdir, corpus, sweep_cli, servers):
    out = workdir / "budget"
    res = sweep_cli("--corpus", corpus, "--index", HNSW, "--k", "5", "--bootstrap", "100", "--out-dir", out,
                    "--controls", "exact,empty", "--max-queries", "8", "--max-prompt-tokens", "350",
                    cache_dir=workdir / "cache-budget")
    assert res.exit_code == 0, res.output
    answers = _answers(out)
    assert all(a["error"] is None for a in answers)
    cut = [a for a in answers if a.get("cut")]
    assert cut and all(a["cut"]["prompt_tokens_after"] <= 350 for a in cut)
    assert {a["lang"] for a in answers} == {"en"}
    meta = json.loads((out / "sweep.json").read_text())["meta"]
    assert meta["answer_plan"]["budget"]["max_prompt_tokens"] == 350 and meta["answer_plan"]["references_cut"] == len(cut)
