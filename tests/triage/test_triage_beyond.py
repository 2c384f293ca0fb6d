"""``ragdiag triage`` on the six fault types beyond its first fault model (fixtures/triage-synthetic,
q301–q480) against the fault-model test server (test-server replies, never an LLM's): interventions that
change one thing name last-passage bias, long context, split answer and conflicting passage; ``--repeats``
and the judge check expose a generator right half the time and a judge that misgrades right answers;
repeat 0 keeps the cache keys of a run without repeats."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer

FIXTURE = resource_path("fixtures", "triage-synthetic")


def _truth() -> dict[str, tuple[str, str]]:
    rows = map(json.loads, (FIXTURE / "faults.jsonl").read_text().splitlines())
    return {r["query_id"]: (r["fault"], r.get("cause", r["fault"])) for r in rows}


def _ids(first: int, last: int) -> str:
    return ",".join(f"q{i:03d}" for i in range(first, last + 1))


def triage(server: FaultServer, out: Path, cache: Path, *args: str):
    full = ["triage", "--corpus", str(FIXTURE), "--answers", str(FIXTURE / "answers.jsonl"), "--model", "test-model",
            "--base-url", server.base_url, "--out-dir", str(out), "--cache-dir", str(cache), "--workers", "8",
            "--no-progress", "--bootstrap", "200", *args]
    return CliRunner().invoke(app, full)


def _causes(out: Path) -> collections.Counter:
    truth = _truth()
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    return collections.Counter((truth[r["id"]][0], truth[r["id"]][1], r["cause"]) for r in rows if r["triaged"])


def test_one_change_per_intervention_names_the_four_deterministic_types(server, tmp_path):
    ids = ",".join(_ids(b, b + 4) for b in (301, 331, 361, 391))  # last-passage, long-context, split, conflict
    res = triage(server, tmp_path / "out", tmp_path / "cache", "--ids", ids)
    assert res.exit_code == 0, res.output
    found = _causes(tmp_path / "out")
    assert sum(found.values()) == 20
    assert all(cause == truth for (_, truth, cause) in found), found


def test_repeats_and_the_judge_check_expose_a_flaky_generator_and_judge(server, tmp_path):
    ids = _ids(421, 480)  # 30 flaky-generator, 30 flaky-judge queries
    once = triage(server, tmp_path / "once", tmp_path / "cache", "--ids", ids)
    assert once.exit_code == 0, once.output
    before = server.requests
    res = triage(server, tmp_path / "out", tmp_path / "cache", "--ids", ids, "--repeats", "3")
    assert res.exit_code == 0, res.output
    assert "--repeats 3: the baseline of every failing query is asked 3 times" in res.stderr  # cost said first
    found = _causes(tmp_path / "out")
    for kind, cause in (("flaky-generator", "generator"), ("flaky-judge", "judge")):
        triaged = sum(v for (k, _, _), v in found.items() if k == kind)
        assert triaged >= 10 and found[(kind, cause, cause)] / triaged >= 0.9, found
    result = json.loads((tmp_path / "out" / "triage.json").read_text())
    assert result["meta"]["repeats"] == 3 and result["meta"]["intervals"] == "queries and repeats"
    for entry in result["causes"].values():
        if entry["count"]:
            assert entry["ci_low"] <= entry["share"] <= entry["ci_high"]
    # repeat 0 is the run without repeats: its calls all come from the cache, only repeats are paid
    assert result["calls"]["paid"] == server.requests - before
    again = json.loads((tmp_path / "once" / "triage.json").read_text())
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_query.jsonl").read_text().splitlines()]
    first = {r["id"]: r for r in map(json.loads, (tmp_path / "once" / "per_query.jsonl").read_text().splitlines())}
    for row in rows:
        assert row["baseline_grade"] == first[row["id"]]["baseline_grade"]
        if row["triaged"] and row["cause"] != "passed":
            assert 0 < row["cause_probability"] <= 1 and "judge_check" in row
    assert again["meta"]["intervals"] == "queries"


@pytest.mark.parametrize("value", ["0", "21"])
def test_repeats_out_of_range_is_one_line_before_any_call(server, tmp_path, value):
    before = server.requests
    res = triage(server, tmp_path / "out", tmp_path / "cache", "--ids", "q301", "--repeats", value)
    assert res.exit_code == 2 and server.requests == before
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: --repeats: ") and "out of range" in lines[0]
