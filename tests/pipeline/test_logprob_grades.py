"""--grade-mode logprobs: G-Eval expected grades from the judge's first-token logprobs (local chat test server)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragdiag.data.loaders import load_graded_file
from ragdiag.llm.logprobs import digit_probabilities, expected_grade
from tests.servers.chat_server import ChatServer


def test_digit_probabilities_renormalise_over_the_digits_only():
    top = [{"token": "4", "logprob": math.log(0.5)}, {"token": " 4", "logprob": math.log(0.1)},
           {"token": "3", "logprob": math.log(0.2)}, {"token": "The", "logprob": math.log(0.2)}]
    probs = digit_probabilities(top)
    assert probs == pytest.approx([0, 0, 0.25, 0.75, 0])  # 0.2/0.8 and (0.5+0.1)/0.8; "The" left out
    assert expected_grade(probs) == pytest.approx(3 * 0.25 + 4 * 0.75)
    assert digit_probabilities([{"token": "The", "logprob": -0.1}, {"token": "6", "logprob": -2.0}]) is None


def _answers(tiny, server, run_cli, tmp_path) -> Path:
    texts, ranked = tiny
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--out", answers,
                  "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    return answers


def test_logprob_grades_are_expected_values_kept_with_their_distribution(tiny, server, run_cli, tmp_path):
    answers = _answers(tiny, server, run_cli, tmp_path)
    graded = tmp_path / "graded.json"
    before = len(server.bodies)
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url,
                  "--grade-mode", "logprobs", "--top-logprobs", "5")
    assert res.exit_code == 0, res.output
    judge_bodies = server.bodies[before:]
    assert judge_bodies and all(b["logprobs"] is True and b["top_logprobs"] == 5 and b["max_tokens"] == 1
                                and "response_format" not in b for b in judge_bodies)
    records = json.loads(graded.read_text())
    for record in records:
        probs = record["grade_probs"]
        assert len(probs) == 5 and sum(probs) == pytest.approx(1.0) and min(probs) >= 0
        assert record["grade"] == pytest.approx(sum(d * p for d, p in zip(range(1, 6), probs)))
        assert record["grades"] == [record["grade"]]
    assert any(r["grade"] != round(r["grade"]) for r in records)  # probability-weighted, not a digit
    manifest = json.loads(Path(f"{graded}.manifest.json").read_text())
    assert manifest["meta"]["grade_mode"] == "logprobs" and manifest["meta"]["top_logprobs"] == 5
    assert manifest["meta"]["prompts"] == ["grading-logprobs@v1"]
    assert manifest["run_record"]["prompts"]["grading-logprobs"] == "grading-logprobs@v1"

    table = load_graded_file(graded)  # correlate reads the expected grade, a float
    assert sorted(table.grade.tolist()) == pytest.approx(sorted(r["grade"] for r in records))
    res = run_cli("correlate", "--graded", graded, "--segments", "nw", "--min-samples", "3")
    assert res.exit_code == 0, res.output

    sent = server.requests  # cached like every call; the logprob parameters are part of the key
    again = run_cli("grade", "--answers", answers, "--out", tmp_path / "again.json", "--base-url", server.base_url,
                    "--grade-mode", "logprobs", "--top-logprobs", "5")
    assert again.exit_code == 0 and server.requests == sent
    assert json.loads((tmp_path / "again.json").read_text()) == records
    wider = run_cli("grade", "--answers", answers, "--out", tmp_path / "wider.json", "--base-url", server.base_url,
                    "--grade-mode", "logprobs", "--top-logprobs", "6")
    assert wider.exit_code == 0 and server.requests == sent + len(records)
    digit = run_cli("grade", "--answers", answers, "--out", tmp_path / "digit.json", "--base-url", server.base_url)
    assert digit.exit_code == 0 and server.requests == sent + 2 * len(records)
    assert all("grade_probs" not in r for r in json.loads((tmp_path / "digit.json").read_text()))


def test_logprob_repeats_keep_each_distribution(tiny, server, run_cli, tmp_path):
    answers = _answers(tiny, server, run_cli, tmp_path)
    graded = tmp_path / "graded.json"
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url,
                  "--grade-mode", "logprobs", "--repeats", "3")
    assert res.exit_code == 0, res.output
    record = json.loads(graded.read_text())[0]
    assert len(record["grades"]) == 3 and len(record["grade_probs_repeats"]) == 3
    assert all(len(p) == 5 for p in record["grade_probs_repeats"]) and record["grade_sd"] == pytest.approx(0.0)
    assert record["grade_probs"] == pytest.approx(record["grade_probs_repeats"][0])
    agreement = json.loads(Path(f"{graded}.manifest.json").read_text())["summary"]["agreement"]
    assert agreement["alpha_repeats_interval"] == pytest.approx(1.0) and "alpha_repeats_ordinal" not in agreement


def test_interval_alpha_matches_krippendorff_and_scales():
    import krippendorff
    import numpy as np

    from ragdiag.answers.agreement import agreement_summary, interval_alpha

    rng = np.random.default_rng(0)
    small = np.round(rng.uniform(1, 5, (3, 40)), 3)
    small[rng.random(small.shape) < 0.2] = np.nan  # missing grades, some units rated once
    assert interval_alpha(small) == pytest.approx(
        krippendorff.alpha(reliability_data=small, level_of_measurement="interval"), abs=1e-12)
    truth = rng.uniform(1, 5, 200_000)  # 200,000 distinct floats: the package would need units × values² memory
    grades = np.stack([truth, truth + rng.normal(0, 0.3, truth.size)])[None]
    summary = agreement_summary(grades, ["judge"])
    assert 0.9 < summary["alpha_repeats_interval"] < 1.0


def test_a_server_without_logprobs_is_one_line_exit_2_nothing_written(tiny, server, run_cli, tmp_path):
    answers = _answers(tiny, server, run_cli, tmp_path)
    server.omit_logprobs = True
    graded = tmp_path / "graded.json"
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url,
                  "--grade-mode", "logprobs", "--workers", "1")
    assert res.exit_code == 2
    errors = [line for line in res.output.splitlines() if line.startswith("ragdiag: error:")]
    assert len(errors) == 1 and "returned no logprobs" in errors[0] and "--grade-mode digit" in errors[0]
    assert not graded.exists() and not Path(f"{graded}.manifest.json").exists()
    assert server.requests - 16 == 1  # stopped at the first judge call (16 generation calls before)


def test_pipeline_takes_the_grade_mode(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    res = run_cli("pipeline", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--segments", "nw",
                  "--min-samples", "3", "--out-dir", tmp_path / "out", "--base-url", server.base_url,
                  "--grade-mode", "logprobs")
    assert res.exit_code == 0, res.output
    records = json.loads((tmp_path / "out" / "graded.json").read_text())
    assert all(len(r["grade_probs"]) == 5 for r in records)
    correlation = json.loads((tmp_path / "out" / "correlation.json").read_text())
    assert correlation["run_record"]["prompts"]["grading-logprobs"] == "grading-logprobs@v1"
    assert correlation["meta"]["reference_gate"]["applied"] is True
    counts = correlation["meta"]["pipeline"]["reference_gate"]
    assert counts["generate"]["ideal"]["answers"] == 4 and counts["grade"]["skipped_rows"] == 0


def test_the_graded_loader_reads_grade_probs_and_names_a_bad_one(tmp_path):
    from ragdiag.errors import RagdiagError

    base = {"id": "M-1", "E": "e", "Nc": 3, "Np": 1, "K": 1, "inK": [1]}
    rows = [{**base, "grade": 4.3, "grade_probs": [0.0, 0.0, 0.1, 0.5, 0.4]},
            {**base, "K": 2, "inK": [1, 0], "grade": 2.0}]
    path = tmp_path / "graded.json"
    path.write_text(json.dumps(rows))
    table = load_graded_file(path)
    assert table.grade.tolist() == [4.3, 2.0]
    assert table.grade_probs[0].tolist() == [0.0, 0.0, 0.1, 0.5, 0.4] and all(math.isnan(x) for x in table.grade_probs[1])
    rows[0]["grade_probs"] = [0.5, 0.5, 0.5, 0.0, 0.0]
    path.write_text(json.dumps(rows))
    with pytest.raises(RagdiagError, match=r"record 1: field 'grade_probs': .* is not 5 probabilities"):
        load_graded_file(path)


class BrokenLogprobServer(ChatServer):
    """The chat test server, but its logprob replies carry ``top`` as their first-token top_logprobs
    (None: the normal deterministic ones) — a server printing logprobs that are not log-probabilities."""

    top: list[dict] | None = None

    def reply(self, body):
        if body.get("logprobs") and self.top is not None:
            reply = ChatServer.completion(body, self.top[0]["token"])
            reply["choices"][0]["logprobs"] = {"content": [{**self.top[0], "top_logprobs": self.top}]}
            return 200, reply
        return super().reply(body)


@pytest.mark.parametrize("broken", [
    [{"token": "4", "logprob": 1000.0}, {"token": "2", "logprob": -1.0}],  # was OverflowError, cached, every rerun
    [{"token": "4", "logprob": float("nan")}, {"token": "2", "logprob": float("nan")}],  # was a null grade for good
])
def test_broken_logprobs_are_not_grades_and_a_fixed_server_is_asked_again(tiny, run_cli, tmp_path, monkeypatch, broken):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with BrokenLogprobServer() as server:
        answers = _answers(tiny, server, run_cli, tmp_path)
        server.top = broken
        args = ["grade", "--answers", answers, "--base-url", server.base_url, "--grade-mode", "logprobs",
                "--max-retries", "0", "--workers", "1"]
        res = run_cli(*args, "--out", tmp_path / "broken.json")
        assert not isinstance(res.exception, OverflowError) and "Traceback" not in res.output, res.output
        errors = [line for line in res.output.splitlines() if line.startswith("ragdiag: error:")]
        assert res.exit_code == 2 and len(errors) == 1 and "not a log-probability" in errors[0], res.output
        assert not (tmp_path / "broken.json").exists()  # a server that keeps sending them stops the run
        server.top = None  # the server is fixed: the rerun asks every judge call again (none was cached)
        sent = server.requests
        res = run_cli(*args, "--out", tmp_path / "fixed.json")
        assert res.exit_code == 0, res.output
        records = json.loads((tmp_path / "fixed.json").read_text())
        assert server.requests - sent == len(records) and all(r["grade"] is not None for r in records)


def test_a_cached_reply_without_a_grade_is_asked_again(tiny, run_cli, tmp_path, monkeypatch):
    """A reply that yields no grade (no digit among its top tokens; or a broken logprob an earlier version
    cached) is re-asked by the next run instead of replaying as null."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with BrokenLogprobServer() as server:
        answers = _answers(tiny, server, run_cli, tmp_path)
        server.top = [{"token": "The", "logprob": -0.1}, {"token": "A", "logprob": -2.5}]
        args = ["grade", "--answers", answers, "--base-url", server.base_url, "--grade-mode", "logprobs"]
        res = run_cli(*args, "--out", tmp_path / "prose.json")
        assert res.exit_code == 3 and "below --min-coverage" in res.output  # written, with the gate's exit code
        rows = len(json.loads((tmp_path / "prose.json").read_text()))
        assert all(r["grade"] is None for r in json.loads((tmp_path / "prose.json").read_text()))
        server.top = None
        sent = server.requests
        res = run_cli(*args, "--out", tmp_path / "again.json")
        assert res.exit_code == 0, res.output
        assert server.requests - sent == rows
        assert all(r["grade"] is not None for r in json.loads((tmp_path / "again.json").read_text()))
        summary = json.loads((tmp_path / "again.json.manifest.json").read_text())["summary"]
        assert summary["retried_unparsed"] == rows
        sent = server.requests  # healed: a third run is answered from the cache
        assert run_cli(*args, "--out", tmp_path / "third.json").exit_code == 0 and server.requests == sent


def test_digits_below_exp_underflow_still_grade(tiny, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with BrokenLogprobServer() as server:
        answers = _answers(tiny, server, run_cli, tmp_path)
        server.top = [{"token": "4", "logprob": -800.0}, {"token": "2", "logprob": -801.0},
                      {"token": "The", "logprob": -803.0}]
        res = run_cli("grade", "--answers", answers, "--out", tmp_path / "g.json", "--base-url", server.base_url,
                      "--grade-mode", "logprobs")
        assert res.exit_code == 0, res.output
        assert {round(r["grade"], 3) for r in json.loads((tmp_path / "g.json").read_text())} == {3.462}


def test_a_broken_reply_an_earlier_version_cached_is_asked_again(tiny, server, run_cli, tmp_path):
    """Before the check, a digit at logprob +1000 was cached as is and every rerun crashed (OverflowError)."""
    from ragdiag.remote.call_cache import CACHE_FILE, CallCache

    answers = _answers(tiny, server, run_cli, tmp_path)
    args = ["grade", "--answers", answers, "--base-url", server.base_url, "--grade-mode", "logprobs"]
    assert run_cli(*args, "--out", tmp_path / "good.json").exit_code == 0
    cache = CallCache(tmp_path / "cache" / CACHE_FILE)
    broken = json.dumps({"content": "4", "top_logprobs": [{"token": "4", "logprob": 1000.0}]})
    judged = [e for e in cache.export() if e["request"]["params"].get("logprobs")]
    for entry in judged:
        cache.put(entry["key"], entry["request"], broken, 0, 0)
    cache.close()
    sent = server.requests
    res = run_cli(*args, "--out", tmp_path / "again.json")
    assert res.exit_code == 0, res.output
    assert server.requests - sent == len(judged)
    assert json.loads((tmp_path / "again.json").read_text()) == json.loads((tmp_path / "good.json").read_text())
