"""The judged loop of ``compare --sequential`` against the local chat test server (its replies and
grades are the test server's, never an LLM's): decision and n equal the offline replay of the same
grades, calls saved are printed, a rerun replays from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

QUESTIONS = 40
# base: a positive (index 0 or 1) in the top 2 beside a negative; new: only negatives in the top 2
BASE_ORDERS = [[0, 2, 1, 3, 4, 5], [1, 3, 0, 2, 4, 5], [0, 1, 2, 3, 4, 5], [2, 0, 1, 3, 4, 5]]
NEW_ORDERS = [[2, 3, 0, 1, 4, 5], [4, 0, 2, 1, 3, 5], [3, 5, 0, 1, 2, 4], [2, 0, 1, 3, 4, 5]]


def _ranked(orders: list[list[int]]) -> list[dict]:
    rows = []
    for i in range(QUESTIONS):
        order = orders[i % len(orders)]
        hits = [sum(1 for x in order[:k] if x < 2) for k in (2, 3, 5)]
        rows.append({"id": f"Q-{i}", "E": "AM", "Nc": 6, "Np": 2, "K": [2, 3, 5],
                     "P": [h / k for h, k in zip(hits, (2, 3, 5))], "R": [h / 2 for h in hits], "rank": order})
    return rows


def write_fixture(folder: Path) -> tuple[Path, Path, Path]:
    """40 questions (two positives, four negatives each) and two rankings; the new one keeps the
    positives out of the top 2 more often, so its answers share fewer words with the ideal answers."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = [{"id": f"Q-{i}", "q": f"What does item{i} do?",
              "p": [f"item{i} opens valve{i} gently", f"item{i} closes gate{i} slowly"],
              "n": [f"filler{j} cooking pasta {i}{j}" for j in range(4)]} for i in range(QUESTIONS)]
    paths = folder / "texts.json", folder / "base.ranked.json", folder / "new.ranked.json"
    for path, rows in zip(paths, (texts, _ranked(BASE_ORDERS), _ranked(NEW_ORDERS))):
        path.write_text(json.dumps(rows))
    return paths


def _cli(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def _judged(texts, base, new, server, cache, out, *extra):
    return _cli("compare", "--sequential", "--sequence", "betting", "--texts", texts, "--base-ranked", base,
                "--new-ranked", new, "--k", 2, "--batch-size", 5, "--base-url", server.base_url,
                "--cache-dir", cache, "--no-progress", "--seed", 3, "--out", out, *extra)


def test_judged_loop_equals_offline_replay_and_reruns_free(server, tmp_path):
    texts, base, new = write_fixture(tmp_path / "data")
    cache = tmp_path / "cache"
    live = _judged(texts, base, new, server, cache, tmp_path / "live.json")
    assert live.exit_code == 1, live.output  # the new ranking is worse: the gate fails
    result = json.loads((tmp_path / "live.json").read_text())
    seq = result["sequential"]
    n = seq["stopped_at"]
    assert result["metrics"][0]["decision"] == "regression" and n < QUESTIONS
    calls = seq["calls"]
    assert calls["questions_judged"] <= n + 4 and calls["paid"] == server.requests > 0
    shown = " ".join(live.output.split())  # the terminal wraps lines
    assert calls["saved"] > 0 and f"{calls['saved']:,} requests saved" in shown
    assert f"LLM calls: {calls['paid']:,} paid" in shown
    assert "cost before any call: at most 7 new LLM calls per question" in shown
    # rerun: every call from the cache, the same decision at the same n
    sent = server.requests
    again = _judged(texts, base, new, server, cache, tmp_path / "again.json")
    assert again.exit_code == 1, again.output
    assert server.requests == sent
    rerun = json.loads((tmp_path / "again.json").read_text())
    assert rerun["sequential"]["calls"]["paid"] == 0
    assert rerun["sequential"]["calls"]["from_cache"] == calls["paid"] + calls["from_cache"]
    assert rerun["sequential"]["metrics"] == seq["metrics"] and rerun["metrics"] == result["metrics"]
    # offline: grade every question (the judged ones from the cache), then replay the graded files
    for side, ranked in (("base", base), ("new", new)):
        answers, graded = tmp_path / f"{side}.answers.jsonl", tmp_path / f"{side}.graded.json"
        for args in (("generate", "--texts", texts, "--ranked", ranked, "--ks", 2, "--out", answers),
                     ("grade", "--answers", answers, "--out", graded)):
            done = _cli(*args, "--base-url", server.base_url, "--cache-dir", cache, "--no-progress")
            assert done.exit_code == 0, done.output
    offline = _cli("compare", "--sequential", "--sequence", "betting", "--base", tmp_path / "base.graded.json",
                   "--new", tmp_path / "new.graded.json", "--seed", 3, "--look-every", 1, "--out", tmp_path / "off.json")
    assert offline.exit_code == 1, offline.output
    replayed = json.loads((tmp_path / "off.json").read_text())
    assert replayed["sequential"]["stopped_at"] == n
    assert [(m["decision"], m["decided_at"]) for m in replayed["sequential"]["metrics"]] == \
        [(m["decision"], m["decided_at"]) for m in seq["metrics"]]
    assert replayed["metrics"][0]["delta"] == pytest.approx(result["metrics"][0]["delta"])


def test_judged_flags_with_files_refused_in_one_line(tmp_path):
    texts, base, new = write_fixture(tmp_path / "data")
    res = _cli("compare", "--sequential", "--texts", texts, "--base-ranked", base, "--new-ranked", new,
               "--base", base)
    assert res.exit_code == 2
    assert "ragdiag: error: --texts (the judged loop) and --base (files already scored)" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize(("extra", "message"), [
    ((), "add --sequential"),
    (("--sequential", "--batch-size", "3", "--look-every", "2"), "must be a multiple of --look-every 2"),
    (("--sequential", "--max-calls", "4"), "nothing was sent"),
])
def test_judged_bad_options_refused_before_any_call(server, tmp_path, extra, message):
    texts, base, new = write_fixture(tmp_path / "data")
    res = _cli("compare", "--texts", texts, "--base-ranked", base, "--new-ranked", new, "--k", 2,
               "--base-url", server.base_url, "--cache-dir", tmp_path / "cache", *extra)
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert server.requests == 0


def test_docs_fixture_is_what_write_fixture_writes(tmp_path):
    bundled = Path(__file__).resolve().parents[2] / "fixtures" / "compare" / "judged"
    for path in write_fixture(tmp_path):
        assert (bundled / path.name).read_bytes() == path.read_bytes(), path.name


def test_max_calls_stops_before_a_batch_that_would_pass_it(server, tmp_path):
    texts, base, new = write_fixture(tmp_path / "data")
    res = _judged(texts, base, new, server, tmp_path / "cache", tmp_path / "capped.json", "--max-calls", 40)
    assert res.exit_code in (0, 1), res.output
    calls = json.loads((tmp_path / "capped.json").read_text())["sequential"]["calls"]
    assert calls["stopped_by"] == "max-calls" and calls["questions_judged"] == 5
    assert calls["paid"] == server.requests <= 40
    assert "stopped by --max-calls 40" in " ".join(res.output.split())


def _models(texts, ranked, server, cache, out, *extra):
    return _cli("compare", "--sequential", "--sequence", "betting", "--texts", texts, "--base-ranked", ranked,
                "--k", 2, "--batch-size", 5, "--base-url", server.base_url, "--cache-dir", cache, "--no-progress",
                "--seed", 3, "--model", "big-model", "--new-model", "small-model", "--out", out, *extra)


def test_two_models_equal_offline_replay_of_the_same_grades(server, tmp_path):
    """--new-model: one ranking answered by two models (the test server's "small-model" copies 2 words of
    each passage, "big-model" 12), both graded by --model against --model's ideal answers; the decision
    and n equal ``compare --sequential`` over graded files made offline from the same answers."""
    server.words_by_model = {"small-model": 2}
    texts, base, _ = write_fixture(tmp_path / "data")
    cache = tmp_path / "cache"
    live = _models(texts, base, server, cache, tmp_path / "live.json")
    assert live.exit_code == 1, live.output
    shown = " ".join(live.output.split())
    assert "base big-model, new small-model; big-model writes the ideal answers and grades both sides" in shown
    assert "a judge may favour its own answers" in shown
    result = json.loads((tmp_path / "live.json").read_text())
    assert (result["meta"]["base_name"], result["meta"]["new_name"]) == ("big-model", "small-model")
    assert result["meta"]["judged"]["new_model"] == "small-model"
    seq = result["sequential"]
    n, calls = seq["stopped_at"], seq["calls"]
    assert result["metrics"][0]["decision"] == "regression" and n < QUESTIONS
    assert calls["paid"] == server.requests and calls["saved"] > 0 and f"{calls['saved']:,} requests saved" in shown
    # the judge answered each judged question's ideal answer once, each model its side's answers
    models = [b["model"] for b in server.bodies]
    assert models.count("small-model") == calls["questions_judged"]
    sent = server.requests
    again = _models(texts, base, server, cache, tmp_path / "again.json")
    assert again.exit_code == 1 and server.requests == sent
    assert json.loads((tmp_path / "again.json").read_text())["sequential"]["metrics"] == seq["metrics"]
    # offline: each model answers every question; the small model's answers take big-model's ideal answers
    answers = {}
    for side, model in (("base", "big-model"), ("new", "small-model")):
        answers[side] = tmp_path / f"{side}.answers.jsonl"
        done = _cli("generate", "--texts", texts, "--ranked", base, "--ks", 2, "--out", answers[side], "--model", model,
                    "--base-url", server.base_url, "--cache-dir", cache, "--no-progress")
        assert done.exit_code == 0, done.output
    ideal = {r["id"]: r for r in map(json.loads, answers["base"].read_text().splitlines()) if r.get("kind") == "ideal"}
    rows = [json.loads(line) for line in answers["new"].read_text().splitlines()]
    answers["new"].write_text("".join(json.dumps(ideal[r["id"]] if r.get("kind") == "ideal" else r) + "\n"
                                      for r in rows))
    for side in ("base", "new"):
        done = _cli("grade", "--answers", answers[side], "--out", tmp_path / f"{side}.graded.json", "--model", "big-model",
                    "--base-url", server.base_url, "--cache-dir", cache, "--no-progress")
        assert done.exit_code == 0, done.output
    offline = _cli("compare", "--sequential", "--sequence", "betting", "--base", tmp_path / "base.graded.json",
                   "--new", tmp_path / "new.graded.json", "--seed", 3, "--out", tmp_path / "off.json")
    assert offline.exit_code == 1, offline.output
    replayed = json.loads((tmp_path / "off.json").read_text())
    assert replayed["sequential"]["stopped_at"] == n
    assert [(m["decision"], m["decided_at"]) for m in replayed["sequential"]["metrics"]] == \
        [(m["decision"], m["decided_at"]) for m in seq["metrics"]]


def test_a_third_judge_model_writes_the_ideal_answers_and_grades(server, tmp_path):
    server.words_by_model = {"small-model": 2}
    texts, base, _ = write_fixture(tmp_path / "data")
    res = _models(texts, base, server, tmp_path / "cache", tmp_path / "judge.json", "--judge-model", "judge-model",
                  "--max-queries", 10)
    assert res.exit_code in (0, 1), res.output
    assert "judge-model writes the ideal answers and grades both sides" in " ".join(res.output.split())
    assert "favour its own" not in res.output
    models = {b["model"] for b in server.bodies}
    assert models == {"big-model", "small-model", "judge-model"}


def test_the_same_ranking_and_model_on_both_sides_refused_before_any_call(server, tmp_path):
    texts, base, _ = write_fixture(tmp_path / "data")
    res = _cli("compare", "--sequential", "--texts", texts, "--base-ranked", base, "--new-model", "gpt-4o-mini",
               "--model", "gpt-4o-mini", "--base-url", server.base_url, "--cache-dir", tmp_path / "cache")
    assert res.exit_code == 2, res.output
    assert "the two sides are the same ranking answered by the same model" in res.output
    assert server.requests == 0 and "Traceback" not in res.output
