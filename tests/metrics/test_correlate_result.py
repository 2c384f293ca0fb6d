"""``CorrelateResult`` reads and writes the correlate JSON exactly, and reruns reproduce the golden files.

The golden files under ``golden/`` were written by ``ragdiag correlate ... --format json`` before the
issue-17 refactor (commit "correlate: golden JSON results ..."), on the bundled sample, a real
graded file of /work/shared and ``--table``. A rerun must give the same JSON except the run record
(timestamps, durations, host) and ``meta.argv`` (a copy of the run record's command line).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.results.correlate import CorrelateResult
from tests.golden import comparable

GOLDEN = Path(__file__).resolve().parent / "golden"
REPO = Path(__file__).resolve().parents[2]
REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-llm-answers" / "msmarco.graded.json"

CASES = {
    "correlate_offline": ["--dataset", "msmarco", "--offline", "--alpha-grid", "l40^0.9", "--corr", "spearman,pearson"],
    "correlate_nw_bootstrap": ["--dataset", "msmarco", "--offline", "--segments", "nw", "--min-samples", "50",
                               "--alpha-grid", "l30^0.8", "--measures", "F,E,T,T',nDCG,P,R", "--bootstrap", "20",
                               "--seed", "3", "--compare", "T,F", "--by", "config", "--delta", "0.3,0.5",
                               "--corr", "spearman,kendall_b", "--grade-plot", "{tmp}/grades.png"],
    "correlate_real_repeats": ["--graded", str(REAL), "--segments", "pooled", "--min-samples", "1",
                               "--alpha-grid", "l20^0.8", "--bootstrap", "10", "--seed", "1", "--complete-cases"],
    "correlate_table": ["--table", "fixtures/retrieval-response-sample/samples_graded.json", "--grade-col", "grade",
                        "--measure-cols", "P,R", "--group-col", "K", "--bootstrap", "50", "--seed", "0",
                        "--compare", "P,R", "--corr", "spearman,pearson"],
}


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


def _without_run_record(doc: dict) -> dict:
    """The document as a golden comparison sees it (:func:`tests.golden.comparable`: no run record,
    argv or versions; a source under a ``shared/`` data folder named from that folder on)."""
    return comparable(doc)


@pytest.mark.parametrize("name", sorted(CASES))
def test_from_json_to_json_gives_the_golden_file_back(name):
    doc = _golden(name)
    result = CorrelateResult.from_json(doc)
    assert json.dumps(result.to_json()) == json.dumps(doc)  # same keys, same order, same values


def test_attributes_read_the_fields():
    result = CorrelateResult.from_json(_golden("correlate_nw_bootstrap"))
    assert result.meta.bootstrap == 20 and result.meta.compare == ["T", "F"]
    assert result.results[0].kinds["spearman"].ci is not None
    assert result.comparisons[0].kinds["kendall_b"].share_positive is not None
    assert result.coverage.by_K and result.system and result.grade_distribution
    assert result.shown_kinds() == ["spearman", "kendall_b"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_rerun_equals_the_golden_file(name, tmp_path, monkeypatch):
    if name == "correlate_real_repeats" and not REAL.is_file():
        pytest.skip(f"{REAL} absent (real graded answers of /work/shared)")
    monkeypatch.chdir(REPO)
    args = [a.replace("{tmp}", str(tmp_path)) for a in CASES[name]]
    run = CliRunner().invoke(app, ["correlate", *args, "--format", "json"])
    assert run.exit_code == 0, run.output
    assert _without_run_record(json.loads(run.stdout)) == _without_run_record(_golden(name))
