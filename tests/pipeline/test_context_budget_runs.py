"""Prompt budgets and context-length errors, end to end against the chat test server (its replies are
test-server output, not an LLM's): a 400 "context length exceeded" past its limit, ``max_model_len`` in
``/v1/models`` when asked."""

from __future__ import annotations

import json

from tests.pipeline.long_data import write_long

LIMIT_WORDS = 1200  # K=5 prompts of long_data (≈1,400 words) exceed it; K ≤ 3 (≤ 900 words) fit


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()][1:]


def _meta(path):
    return json.loads(path.read_text().splitlines()[0])["meta"]


def test_context_error_is_one_line_with_counts_never_retried_nor_cached(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 4)
    server.context_limit(LIMIT_WORDS)
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--out", answers,
                  "--base-url", server.base_url, "--workers", "1", "--max-retries", "3")
    assert res.exit_code == 3, res.output  # coverage 12/16 < 0.95, files written
    failed = [r for r in _rows(answers) if r["answer"] is None]
    assert [r["K"] for r in failed] == [5, 5, 5, 5]
    for row in failed:
        assert row["error"].startswith("context length exceeded: the prompt has ")
        assert f"the model's context is {LIMIT_WORDS} tokens (HTTP 400)" in row["error"]
        assert "--max-prompt-tokens" in row["error"] and "\n" not in row["error"]
    assert server.context_rejections == 4 and server.statuses.count(400) == 4  # each sent once: no retry
    assert "4 call(s) exceeded the model's context (model context 1200 tokens" in res.output
    assert "rerun with --max-prompt-tokens 688 (or auto)" in res.output
    assert "answered per K: K=2 100% (4/4), K=3 100% (4/4), K=5 0% (0/4)" in res.output
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    by_k = {e["K"]: e for e in manifest["summary"]["coverage_by_K"]["by_K"]}
    assert by_k[5]["coverage"] == 0.0 and by_k[2]["coverage"] == 1.0
    assert manifest["summary"]["coverage_by_K"]["uneven"] and manifest["summary"]["context_exceeded"] == 4
    # never cached: a rerun asks the server again for exactly the failed requests
    before = server.requests
    rerun = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--out", tmp_path / "again.jsonl",
                    "--base-url", server.base_url, "--workers", "1")
    assert rerun.exit_code == 3 and server.requests - before == 4 and server.context_rejections == 8


def test_budget_truncates_each_passage_proportionally_and_records_the_cut(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 4)
    server.context_limit(LIMIT_WORDS)
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--out", answers,
                  "--base-url", server.base_url, "--max-prompt-tokens", "3500")
    assert res.exit_code == 0, res.output
    assert server.context_rejections == 0
    rows = _rows(answers)
    assert all(r["answer"] for r in rows)
    cut = [r for r in rows if r.get("cut")]
    assert sorted({r["K"] for r in cut}) == [5] and len(cut) == 4  # only K=5 needed cutting
    for row in cut:
        record = row["cut"]
        assert record["fit"] == "truncate" and record["max_prompt_tokens"] == 3500
        assert record["counted_with"] == "estimate: 3 characters per token"
        assert record["prompt_tokens_before"] > 3500 >= record["prompt_tokens_after"]
        shares = [t["kept_tokens"] / t["tokens"] for t in record["truncated"]]
        assert len(shares) == 5 and max(shares) - min(shares) < 0.01  # the same share of every passage
    meta = _meta(answers)
    assert meta["budget"] == {"setting": 3500, "max_prompt_tokens": 3500, "source": "--max-prompt-tokens",
                              "fit": "truncate", "counted_with": "estimate: 3 characters per token"}
    assert "references cut in 4 of 16 items" in res.output


def test_fit_drop_leaves_out_the_lowest_ranked_passages(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 4)
    server.context_limit(LIMIT_WORDS)
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "5", "--out", answers,
                  "--base-url", server.base_url, "--max-prompt-tokens", "3500", "--fit", "drop")
    assert res.exit_code == 0, res.output
    for row in (r for r in _rows(answers) if r["kind"] == "topK"):
        assert row["cut"]["dropped_ranks"] == [4, 5] and "truncated" not in row["cut"]
        assert row["answer"].count("fact") == 3  # the test server echoes each reference it got: three left


def test_auto_budget_from_the_servers_model_list(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 2)
    server.context_limit(LIMIT_WORDS, report=True)
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,5", "--out", answers,
                  "--base-url", server.base_url, "--max-prompt-tokens", "auto")
    assert res.exit_code == 0, res.output
    assert "the server reports a 1200-token context for gpt-4o-mini; prompt budget 688 tokens" in res.output
    assert server.context_rejections == 0 and all(r["answer"] for r in _rows(answers))
    assert _meta(answers)["budget"]["source"] == "server /models: context 1200 tokens − 512 kept for the answer"


def test_auto_budget_learned_from_the_first_context_error_then_refit(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 2)
    server.context_limit(LIMIT_WORDS)  # /v1/models does not say
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,5", "--out", answers,
                  "--base-url", server.base_url, "--max-prompt-tokens", "auto", "--workers", "4")
    assert res.exit_code == 0, res.output
    assert "does not report gpt-4o-mini's context length" in res.output
    assert "the server's error says the context is 1200 tokens; each refused item is refit to 688 tokens" in res.output
    assert server.context_rejections == 2  # the two K=5 requests, each refit and sent once more
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    assert manifest["summary"]["context_refits"] == 2 and manifest["summary"]["context_exceeded"] == 0
    rows = _rows(answers)
    assert sorted(r["K"] for r in rows if r.get("cut")) == [5, 5]  # items that fit are sent whole
    assert _meta(answers)["budget"]["max_prompt_tokens"] is None
    assert all(r["answer"] for r in _rows(answers))
    rejected = next(b for b, s in zip(server.bodies, server.statuses) if s == 400)
    assert rejected not in server.bodies[server.bodies.index(rejected) + 1:]  # never resent unchanged


def test_replay_refuses_auto_budget_before_any_call(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 1)
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", tmp_path / "a.jsonl",
                  "--base-url", server.base_url, "--max-prompt-tokens", "auto", "--cache", "replay")
    assert res.exit_code == 2 and "--cache replay never reaches" in res.output
    assert server.requests == 0 and server.model_list_requests == 0
    assert not (tmp_path / "a.jsonl").exists()


def test_bad_budget_options_are_one_line_errors(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 1)
    base = ["generate", "--texts", texts, "--ranked", ranked, "--out", tmp_path / "a.jsonl", "--base-url", server.base_url]
    for extra, says in ((["--max-prompt-tokens", "0"], "between 1 and"), (["--max-prompt-tokens", "lots"], "auto"),
                        (["--fit", "drop"], "--fit applies only with --max-prompt-tokens"),
                        (["--chars-per-token", "nan"], "finite"),
                        (["--tokenizer", tmp_path], "--tokenizer applies only with --max-prompt-tokens"),
                        (["--max-prompt-tokens", "50", "--tokenizer", tmp_path / "none.json"], "no tokenizer.json")):
        res = run_cli(*base, *extra)
        assert res.exit_code == 2 and says in res.output, (extra, res.output)
    assert server.requests == 0


def test_pipeline_with_budget_answers_every_k_and_correlate_sees_full_coverage(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", 4)
    server.context_limit(LIMIT_WORDS)
    out = tmp_path / "run"
    res = run_cli("pipeline", "--texts", texts, "--ranked", ranked, "--ks", "2,5", "--out-dir", out,
                  "--base-url", server.base_url, "--max-prompt-tokens", "3500", "--segments", "pooled",
                  "--min-samples", "2")
    assert res.exit_code == 0, res.output
    correlation = json.loads((out / "correlation.json").read_text())
    assert [e["coverage"] for e in correlation["coverage"]["by_K"]] == [1.0, 1.0]
    assert not correlation["coverage"]["uneven"]
    graded = json.loads((out / "graded.json").read_text())
    assert {g["lang"] for g in graded} == {"en"} and sum(1 for g in graded if g.get("cut")) == 4
