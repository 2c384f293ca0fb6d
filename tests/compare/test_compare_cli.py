"""``ragdiag compare`` end to end on the bundled fixture (fixtures/compare: 60 queries, two runs, two
graded files with 3 repeats): exit codes 0/1/2, the JSON keys, --strict, --plan, --per-query,
--summary-md and $GITHUB_STEP_SUMMARY, tables with --id-col, and bad input (one line, exit 2,
nothing written)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.results.compare import CompareResult
from tests.golden import comparable

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
RUNS = ["--base", str(FIX / "base.jsonl"), "--new", str(FIX / "new.trec"), "--qrels", str(FIX / "qrels.tsv")]
GRADED = ["--base", str(FIX / "base_graded.json"), "--new", str(FIX / "new_graded.json")]
KEYS = ["metric", "n", "mean_base", "mean_new", "delta", "ci_low", "ci_high", "p", "p_adjusted", "d_z", "decision",
        "queries_needed"]
runner = CliRunner()


def _run(*args: str, env: dict | None = None):
    return runner.invoke(app, ["compare", *args], env=env)


def test_runs_gate_fails_on_the_regressed_metric(tmp_path):
    out = tmp_path / "compare.json"
    result = _run(*RUNS, "--out", str(out))
    assert result.exit_code == 1, result.output
    doc = json.loads(out.read_text())
    assert doc["decision"] == "fail" and doc["plan"] is None
    assert [m["metric"] for m in doc["metrics"]] == ["ndcg@10", "ra_nwg@10", "recall@20"]
    for entry in doc["metrics"]:
        assert list(entry)[:len(KEYS)] == KEYS and entry["n"] == 60
        assert entry["ci_low"] <= entry["delta"] <= entry["ci_high"]
        assert (entry["queries_needed"] is None) == (entry["decision"] != "inconclusive")
    decisions = {m["metric"]: m["decision"] for m in doc["metrics"]}
    assert decisions["ndcg@10"] == "regression" and "inconclusive" in decisions.values()
    first = result.output.splitlines()[0]
    assert first.startswith("GATE FAIL (exit 1): regression in nDCG@10")
    assert CompareResult.from_json(doc).to_json() == doc
    assert doc["run_record"]["seeds"] == {"compare": 0}


def test_a_wide_margin_passes_and_strict_fails_on_inconclusive(tmp_path):
    wide = _run(*RUNS, "--max-drop", "0.2")
    assert wide.exit_code == 0 and wide.output.startswith("GATE PASS: no metric regressed\n")
    middle = _run(*RUNS, "--max-drop", "0.03", "--out", str(tmp_path / "c.json"))
    doc = json.loads((tmp_path / "c.json").read_text())
    assert "regression" not in [m["decision"] for m in doc["metrics"]] and middle.exit_code == 0
    assert "inconclusive" in [m["decision"] for m in doc["metrics"]]
    strict = _run(*RUNS, "--max-drop", "0.03", "--strict")
    assert strict.exit_code == 1 and "inconclusive under --strict" in strict.output


def test_terminal_output_fits_80_columns():
    result = _run(*RUNS, "--plan")
    assert max(len(line) for line in result.output.splitlines()) <= 80


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_each_test_and_the_same_seed_gives_the_same_result(tmp_path, test):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _run(*RUNS, "--test", test, "--seed", "4", "--out", str(a))
    _run(*RUNS, "--test", test, "--seed", "4", "--out", str(b))
    one, two = json.loads(a.read_text()), json.loads(b.read_text())
    assert one["metrics"] == two["metrics"] and one["meta"]["test"] == test


def test_plan_on_one_run_uses_the_unpaired_bound(tmp_path):
    out = tmp_path / "plan.json"
    result = _run("--base", str(FIX / "base.jsonl"), "--qrels", str(FIX / "qrels.tsv"), "--plan", "--mde", "0.05",
                  "--max-drop", "0", "--out", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["decision"] is None and doc["metrics"] == []
    for entry in doc["plan"]:
        assert entry["sd_source"].startswith("unpaired bound")
        assert entry["queries_needed"] >= 2 and entry["mde"] == 0.05 and entry["power"] == 0.8
    assert result.output.startswith("base.jsonl alone: 60 queries (runs)\nplan — nDCG@10: ")


def test_graded_files_split_the_judge_noise(tmp_path):
    out = tmp_path / "graded.json"
    result = _run(*GRADED, "--plan", "--out", str(out))
    doc = json.loads(out.read_text())
    assert [m["metric"] for m in doc["metrics"]] == ["grade"]
    judge = doc["judge"][0]
    assert judge["k"] == 3 and judge["sigma2_judge_ci"][0] < judge["sigma2_judge"] < judge["sigma2_judge_ci"][1]
    assert judge["judge_part"] + judge["between_part"] == pytest.approx(judge["variance"])
    assert judge["advice"] in ("another query", "another repeat per query")
    assert judge["repeat_calls"] == 120 and judge["query_calls"] == 8  # both sides: 60 judge calls / 1 + 3 calls
    assert "judge noise — grade" in result.output


def test_per_query_and_summaries(tmp_path):
    deltas, summary, step = tmp_path / "deltas.jsonl", tmp_path / "summary.md", tmp_path / "step.md"
    step.write_text("## earlier step\n")
    result = _run(*RUNS, "--per-query", str(deltas), "--summary-md", str(summary),
                  env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 1
    rows = [json.loads(line) for line in deltas.read_text().splitlines()]
    assert len(rows) == 60 and rows[0]["query_id"] == "q01"
    assert rows[0]["ndcg@10"] == pytest.approx(rows[0]["ndcg@10:new"] - rows[0]["ndcg@10:base"])
    text = summary.read_text()
    assert text.startswith("## ragdiag compare\n\n**GATE FAIL")
    assert "| decision | metric |" in text
    assert step.read_text() == "## earlier step\n" + text


def _table(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _rows(ids, shift=0.0, column="ndcg@10"):
    return [{"qid": q, column: 0.5 + 0.05 * (i % 4) + shift, "recall@10": 0.7} for i, q in enumerate(ids)]


def test_tables_pair_by_the_id_column(tmp_path):
    base = _table(tmp_path / "base.csv", _rows([f"q{i}" for i in range(30)]))
    new = _table(tmp_path / "new.csv", _rows([f"q{i}" for i in reversed(range(30))], shift=0.0))
    out = tmp_path / "t.json"
    result = _run("--base", str(base), "--new", str(new), "--id-col", "qid", "--out", str(out))
    doc = json.loads(out.read_text())
    assert [m["metric"] for m in doc["metrics"]] == ["ndcg@10", "recall@10"]
    assert doc["metrics"][0]["n"] == 30 and result.exit_code in (0, 1)


def test_allow_missing_drops_and_counts(tmp_path):
    base = _table(tmp_path / "base.csv", _rows([f"q{i}" for i in range(30)]))
    new = _table(tmp_path / "new.csv", _rows([f"q{i}" for i in range(3, 33)]))
    refused = _run("--base", str(base), "--new", str(new), "--id-col", "qid")
    assert refused.exit_code == 2
    assert "3 only in" in refused.output and "(first: q0, q1, q2)" in refused.output and "--allow-missing" in refused.output
    out = tmp_path / "m.json"
    allowed = _run("--base", str(base), "--new", str(new), "--id-col", "qid", "--allow-missing", "--out", str(out))
    assert allowed.exit_code in (0, 1)
    assert json.loads(out.read_text())["meta"]["dropped"] == {"base_only": 3, "new_only": 3}


BAD = {
    "absent metric": (lambda t: ["--base", str(_table(t / "b.csv", _rows([f"q{i}" for i in range(9)]))),
                                 "--new", str(_table(t / "n.csv", _rows([f"q{i}" for i in range(9)], column="other"))),
                                 "--id-col", "qid", "--metrics", "ndcg@10"], "metric"),
    "NaN value": (lambda t: ["--base", str(_table(t / "b.csv", _rows([f"q{i}" for i in range(9)]))),
                             "--new", str(_table(t / "n.csv", [{**r, "ndcg@10": "nan"} if r["qid"] == "q4" else r
                                                                for r in _rows([f"q{i}" for i in range(9)])])),
                             "--id-col", "qid"], "not a finite number"),
    "four queries": (lambda t: ["--base", str(FIX.parent / "graded-utility" / "bm25.jsonl"),
                                "--new", str(FIX.parent / "graded-utility" / "dense.trec"),
                                "--qrels", str(FIX.parent / "graded-utility" / "qrels.tsv")], "at least 5"),
    "mde zero": (lambda t: [*RUNS, "--plan", "--mde", "0"], "--mde"),
    "power one": (lambda t: [*RUNS, "--power", "1"], "--power"),
    "alpha half": (lambda t: [*RUNS, "--alpha", "0.5"], "--alpha"),
    "unknown metric": (lambda t: [*RUNS, "--metrics", "ndgc@10"], "unknown metric 'ndgc'"),
    "no new": (lambda t: ["--base", str(FIX / "base.jsonl"), "--qrels", str(FIX / "qrels.tsv")], "--new"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, case):
    make, words = BAD[case]
    args = make(tmp_path)
    out, deltas = tmp_path / "out.json", tmp_path / "d.jsonl"
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    result = _run(*args, "--out", str(out), "--summary-md", str(tmp_path / "s.md"))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert words in result.output
    assert len(lines) == 1 or "Usage" in result.output  # typer's usage error for an out-of-range option
    assert not out.exists() and not deltas.exists() and not (tmp_path / "s.md").exists()
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


GOLDEN = Path(__file__).resolve().parent / "golden" / "compare.json"


def test_a_rerun_writes_the_golden_result_but_for_the_run_record(tmp_path, monkeypatch):
    """The golden file was written from the clone's root with relative paths; so is the rerun."""
    monkeypatch.chdir(FIX.parents[1])
    out = tmp_path / "compare.json"
    result = _run("--base", "fixtures/compare/base.jsonl", "--new", "fixtures/compare/new.trec", "--qrels",
                  "fixtures/compare/qrels.tsv", "--plan", "--test", "randomization", "--out", str(out))
    assert result.exit_code == 1
    golden, again = json.loads(GOLDEN.read_text()), json.loads(out.read_text())
    assert comparable(again) == comparable(golden)
    assert CompareResult.from_json(golden).to_json() == golden


def test_the_step_summary_that_is_the_summary_file_is_written_once(tmp_path):
    step = tmp_path / "step.md"
    step.write_text("## earlier step\n")
    result = _run(*RUNS, "--summary-md", str(step), env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 1, result.output
    text = step.read_text()
    assert text.startswith("## earlier step\n") and text.count("## ragdiag compare") == 1


def test_the_gate_says_what_it_compared_and_an_open_metric_in_words(tmp_path):
    """Issue 42: the names (--base-name / --new-name) on the terminal, in the JSON and the Markdown summary;
    a PASS with an inconclusive metric says so in words, with its interval, which way it leans and that
    --strict fails on it; each inconclusive metric gets its one "queries needed" figure, named."""
    out, summary = tmp_path / "c.json", tmp_path / "s.md"
    result = _run(*RUNS, "--max-drop", "0.03", "--base-name", "bm25 (main)", "--new-name", "dense v2", "--out", str(out),
                  "--summary-md", str(summary))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert (doc["meta"]["base_name"], doc["meta"]["new_name"]) == ("bm25 (main)", "dense v2")
    shown = " ".join(result.output.split())
    assert shown.startswith("GATE PASS: no metric shown worse than −0.030;")
    assert "— --strict fails on this" in shown.split("inconclusive —")[0]
    assert "dense v2 against bm25 (main)" in shown and "dense v2 against bm25 (main)" in summary.read_text()
    for entry in (m for m in doc["metrics"] if m["decision"] == "inconclusive"):
        assert isinstance(entry["queries_needed"], int)
        assert f"about {entry['queries_needed']:,} queries would show it" in shown
