"""generate → grade → correlate against the local chat server, then offline replay; failure handling."""

from __future__ import annotations

import json

from ragdiag.answers.judging import GRADED_KEYS
from ragdiag.data.schema import GradedSample


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pipeline_then_replay_with_server_stopped_is_identical(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    args = ["pipeline", "--texts", texts, "--ranked", ranked, "--k", "2,3,5", "--segments", "nw", "--min-samples", "3"]
    live = run_cli(*args, "--out-dir", tmp_path / "live", "--base-url", server.base_url, "--workers", "8")
    assert live.exit_code == 0, live.output
    sent = server.requests
    # 4 ideal + 12 top-K generations (M-1 K=2 asks exactly the ideal request: sent once) + 12 judge calls
    assert sent == 4 + 11 + 12
    base_url = server.base_url
    server.stop()
    replay = run_cli(*args, "--out-dir", tmp_path / "replay", "--base-url", base_url, "--cache", "replay")
    assert replay.exit_code == 0, replay.output
    assert server.requests == sent
    for name in ("answers.jsonl", "graded.json"):
        assert (tmp_path / "live" / name).read_bytes() == (tmp_path / "replay" / name).read_bytes()
    live_corr, replay_corr = (json.loads((tmp_path / d / "correlation.json").read_text()) for d in ("live", "replay"))
    assert {k: v for k, v in live_corr.items() if k not in ("meta", "run_record")} == \
        {k: v for k, v in replay_corr.items() if k not in ("meta", "run_record")}
    assert live_corr["run_record"]["command"] == replay_corr["run_record"]["command"] == "ragdiag pipeline"
    assert live_corr["results"], "the correlation found no segment"
    manifest = json.loads((tmp_path / "replay" / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["calls"] == 0 and manifest["summary"]["cache_hits"] == 12
    assert manifest["run"]["cache"] == "replay"


def test_graded_file_has_the_samples_graded_schema(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2,5", "--out", answers,
                  "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    rows = _lines(answers)
    assert rows[0]["kind"] == "meta" and rows[0]["meta"]["prompts"] == ["generation@v2"]
    assert [r["kind"] for r in rows[1:]].count("ideal") == 4 and len(rows) == 1 + 4 + 8
    top = next(r for r in rows if r["kind"] == "topK" and r["id"] == "M-3" and r["K"] == 5)
    assert top["rank"] == [2, 3, 0, 4, 1] and top["inK"] == [0, 0, 1, 0, 1] and top["P"] == 0.4 and top["R"] == 1.0
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    records = json.loads(graded.read_text())
    assert len(records) == 8
    for index, record in enumerate(records):
        assert list(record)[: len(GRADED_KEYS)] == list(GRADED_KEYS)
        sample = GradedSample.from_json(record, "graded.json", index)
        assert sample.grade in (1, 2, 3, 4, 5) and record["grades"] == [record["grade"]]
    corr = run_cli("correlate", "--graded", graded, "--segments", "nw", "--min-samples", "3", "--format", "json")
    assert corr.exit_code == 0, corr.output


def test_judge_replies_without_a_grade_are_repaired_once_then_recorded_missing(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    # workers 1: the four judge calls run in file order (M-1..M-4, K=2)
    server.script_judge("I'd say four out of five", '{"grade": 4, "reason": "r"}',  # M-1: repaired
                        "{}", "The answer is fine.",                               # M-2: missing
                        "3",                                                        # M-3: bare digit
                        "Looks complete to me", "{}")                              # M-4: missing
    before = server.requests
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url, "--workers", "1")
    assert res.exit_code == 3, res.output
    assert "below --min-coverage 0.95" in res.output and "graded.json.manifest.json" in res.output
    assert server.requests - before == 7
    records = {r["id"]: r for r in json.loads(graded.read_text())}
    assert records["M-1"]["grade"] == 4.0 and "judge_reply" not in records["M-1"]
    assert records["M-3"]["grade"] == 3.0
    for sid, replies in (("M-2", ["{}", "The answer is fine."]), ("M-4", ["Looks complete to me", "{}"])):
        assert records[sid]["grade"] is None and records[sid]["grades"] == [None]
        assert records[sid]["judge_reply"] == [{"model": "gpt-4o-mini", "repeat": 0, "replies": replies}]
    manifest = json.loads((tmp_path / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["coverage"] == 0.5 and manifest["summary"]["missing_grades"] == 2
    assert [u["item"] for u in manifest["unparsed"]] == ["topK M-2 E=AM Nc=6 Np=2 K=2", "topK M-4 E=AM Nc=6 Np=2 K=2"]
    corr = run_cli("correlate", "--graded", graded, "--segments", "nw", "--min-samples", "1", "--format", "json")
    assert corr.exit_code == 0 and json.loads(corr.stdout)["meta"]["skipped_missing_grade"] == 2
    # the repaired and unparsed replies are cached too: with --no-retry-unparsed a rerun sends nothing
    sent = server.requests
    kept = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url,
                   "--min-coverage", "0.5", "--no-retry-unparsed")
    assert kept.exit_code == 0 and server.requests == sent and "retried" not in kept.stderr
    assert json.loads((tmp_path / "graded.json.manifest.json").read_text())["summary"]["retried_unparsed"] == 0


def test_rerun_retries_only_the_items_whose_cached_reply_did_not_parse(tiny, server, run_cli, tmp_path):
    """Issue 18: after the judge is fixed, a rerun asks again the two unparsed items (M-2, M-4) and
    nothing else; it says how many; a third run sends nothing."""
    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    server.script_judge('{"grade": 4}', "prose, no grade", '{"grade": NaN}', '{"grade": 3}', "no grade", "{}")
    args = ("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url, "--workers", "1",
            "--min-coverage", "0")
    assert run_cli(*args).exit_code == 0
    first = {r["id"]: r["grade"] for r in json.loads(graded.read_text())}
    assert first["M-2"] is None and first["M-4"] is None and first["M-1"] == 4.0
    sent = server.requests
    rerun = run_cli(*args)  # the script is used up: the test server now replies with its lookup grade
    assert rerun.exit_code == 0, rerun.output
    assert server.requests - sent == 2  # M-2 and M-4 asked once each (their first request parses now)
    assert "retried 2 item(s) whose cached judge reply held no grade (--no-retry-unparsed keeps them)" in rerun.stderr
    second = {r["id"]: r["grade"] for r in json.loads(graded.read_text())}
    assert None not in second.values() and {k: second[k] for k in ("M-1", "M-3")} == {"M-1": 4.0, "M-3": 3.0}
    manifest = json.loads((tmp_path / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["retried_unparsed"] == 2 and manifest["unparsed"] == []
    sent = server.requests
    third = run_cli(*args)
    assert third.exit_code == 0 and server.requests == sent and "retried" not in third.stderr
    assert {r["id"]: r["grade"] for r in json.loads(graded.read_text())} == second


def test_429_retry_after_then_success_counts_retries(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    server.fail_next(429, times=3, retry_after=0.05)
    out = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", out,
                  "--base-url", server.base_url, "--workers", "2")
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    assert manifest["summary"]["retries"] == 3 and manifest["summary"]["failures"] == 0
    assert manifest["summary"]["coverage"] == 1.0


def test_500_forever_fails_clearly_keeps_completed_calls_and_rerun_resumes(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    out = tmp_path / "answers.jsonl"
    args = ["generate", "--texts", texts, "--ranked", ranked, "--k", "2,3,5", "--out", out,
            "--base-url", server.base_url, "--workers", "1", "--max-retries", "2"]
    server.fail_after(5, 500, retry_after=0.01)
    res = run_cli(*args)
    assert res.exit_code != 0
    assert "items in a row failed after their retries" in res.output and "rerun to resume" in res.output
    assert "HTTP 500" in res.output
    ok_before = server.completed
    assert ok_before == 5
    server.fail_after(None)  # the server recovers
    res = run_cli(*args)
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    # 16 items, 15 distinct requests (M-1 K=2 asks exactly the ideal request): 5 cached before, 10 sent now
    assert manifest["summary"]["calls"] == 10 and manifest["summary"]["cache_hits"] == 6
    assert server.completed == 15


def test_partial_failure_is_listed_in_the_manifest_and_gated_by_min_coverage(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    out = tmp_path / "answers.jsonl"
    server.fail_next(400)
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", out,
                  "--base-url", server.base_url, "--workers", "1")
    assert res.exit_code == 3 and "coverage 0.875" in res.output
    manifest = json.loads((tmp_path / "answers.jsonl.manifest.json").read_text())
    assert manifest["failures"] == [{"item": "ideal M-1", "error": manifest["failures"][0]["error"]}]
    assert "HTTP 400" in manifest["failures"][0]["error"]
    rows = _lines(out)
    assert next(r for r in rows if r.get("id") == "M-1" and r["kind"] == "ideal")["answer"] is None
    graded = tmp_path / "graded.json"
    res = run_cli("grade", "--answers", out, "--out", graded, "--base-url", server.base_url, "--min-coverage", "0")
    assert res.exit_code == 0, res.output
    m1 = next(r for r in json.loads(graded.read_text()) if r["id"] == "M-1")
    assert m1["grade"] is None and m1["error"] == "no ideal answer"


def test_repeats_and_second_judge_report_agreement(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2,3,5", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    before = server.requests
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url, "--repeats", "3",
                  "--second-judge", "judge-b")
    assert res.exit_code == 0, res.output
    assert server.requests - before == 12 * 3 * 2  # each repeat and judge is a distinct request
    record = json.loads(graded.read_text())[0]
    assert len(record["grades"]) == 3 and record["grade_sd"] == 0.0 and set(record["judges"]) == {"gpt-4o-mini", "judge-b"}
    agreement = json.loads((tmp_path / "graded.json.manifest.json").read_text())["summary"]["agreement"]
    # the test server is deterministic: repeats and judges agree perfectly
    assert agreement["alpha_repeats_ordinal"] == 1.0 and agreement["alpha_judges_ordinal"] == 1.0
    assert agreement["item_sd_mean"] == 0.0
    assert "alpha repeats ordinal" in res.output


def test_bad_inputs_give_one_clear_error(tiny, run_cli, tmp_path):
    texts, ranked = tiny
    out = tmp_path / "a.jsonl"
    res = run_cli("generate", "--texts", texts, "--out", out)
    assert res.exit_code == 2 and "exactly one of --ranked FILE or --embedder EMBEDDER" in res.output
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "two", "--out", out)
    assert res.exit_code == 2 and "--ks: 'two': expected comma-separated integers" in res.output
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--out", out, "--cache", "maybe")
    assert res.exit_code == 2 and "--cache: 'maybe' is not one of" in res.output
    bad = json.loads(ranked.read_text())
    bad[1].update(Np=3, Nc=7, rank=list(range(7)))
    ranked.write_text(json.dumps(bad))
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--out", out, "--cache", "replay")
    assert res.exit_code == 2
    assert "samples_ranked.json: record 2: field 'Nc': Np=3, Nc=7 need more candidates than texts sample 'M-2'" in res.output
    res = run_cli("pipeline", "--texts", texts, "--ranked", ranked, "--out-dir", tmp_path / "p", "--segments", "wide")
    assert res.exit_code == 2 and "--segments: 'wide' is not one of" in res.output
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"kind": "topK", "id": "M-1"}\n')
    res = run_cli("grade", "--answers", answers, "--out", tmp_path / "g.json")
    assert res.exit_code == 2 and "answers.jsonl: line 1: field 'q': the question must be a string" in res.output


def test_replay_miss_names_the_request(tiny, run_cli, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    texts, ranked = tiny
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", tmp_path / "a.jsonl",
                  "--cache", "replay", "--workers", "1")
    assert res.exit_code == 2
    assert "--cache replay: no cached reply for request" in res.output and "ideal M-1" in res.output


def test_a_huge_judge_reply_is_stored_capped_with_its_length_and_hash(tiny, server, run_cli, tmp_path):
    """Issue 18: a 3 MB judge reply is neither copied whole into judge_reply nor into the cache."""
    import hashlib

    from ragdiag.llm.client import MAX_REPLY_CHARS
    from ragdiag.remote.call_cache import CACHE_FILE, CallCache

    texts, ranked = tiny
    answers, graded = tmp_path / "answers.jsonl", tmp_path / "graded.json"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    server.honour_limit = False  # a server ignoring max_tokens: the cap still bounds what is stored
    huge = "no grade, just words " * 150_000  # 3.15 MB
    server.script_judge(huge, "still no grade")
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url, "--workers", "1",
                  "--min-coverage", "0")
    assert res.exit_code == 0, res.output
    assert "capped replies" in res.stdout and "1 (over 100,000 characters" in res.stdout
    record = next(r for r in json.loads(graded.read_text()) if "judge_reply" in r)
    stored = record["judge_reply"][0]["replies"][0]
    note = (f"\n[ragdiag: reply cut at {MAX_REPLY_CHARS:,} of {len(huge):,} characters; "
            f"sha256 of the whole reply: {hashlib.sha256(huge.encode()).hexdigest()}]")
    assert stored == huge[:MAX_REPLY_CHARS] + note
    manifest = json.loads((tmp_path / "graded.json.manifest.json").read_text())
    assert manifest["summary"]["capped_replies"] == 1
    cache = CallCache(tmp_path / "cache" / CACHE_FILE)
    assert max(len(entry["reply"]) for entry in cache.export()) == len(stored)
    cache.close()
    assert graded.stat().st_size < 1_000_000 and (tmp_path / "graded.json.manifest.json").stat().st_size < 1_000_000
