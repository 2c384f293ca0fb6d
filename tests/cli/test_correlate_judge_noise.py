"""``ragdiag correlate`` on grades with repeats: reliability, corrected column, survival line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tools.synthetic import synthetic_graded

runner = CliRunner()
ARGS = ("--segments", "pooled", "--min-samples", "50", "--alpha-grid", "l30^0.8")


def _with_repeats(records: list[dict], noise: float, seed: int) -> list[dict]:
    """Each row judged three times: its grade plus integer noise, clipped to 1–5; grade = their mean."""
    rng = np.random.default_rng(seed)
    for record in records:
        grades = np.clip(np.round(record["grade"] + rng.normal(0, noise, 3)), 1, 5).astype(int).tolist()
        record["grades"], record["grade"] = grades, float(np.mean(grades))
    return records


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("graded")
    paths = {}
    for name, noise in (("noisy", 1.0), ("plain", None)):
        records = synthetic_graded(n_queries=25, seed=9, keep=0.9)
        records = [r for r in records if r["grade"] is not None]
        if noise is not None:
            records = _with_repeats(records, noise, 4)
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(records))
    return paths


def test_repeats_give_reliability_corrected_maxima_and_a_survival_verdict(graded):
    result = runner.invoke(app, ["correlate", "--graded", str(graded["noisy"]), *ARGS, "--bootstrap", "30",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    reliability = report["judge_reliability"]
    assert reliability["source"] == "repeats" and reliability["used"] == "icc_1_k"
    assert 0 < reliability["icc_1_1"] < reliability["icc_1_k"] < 1 and reliability["alpha_ordinal"] is not None
    for row in report["results"]:
        raw, block = row["spearman"]["value"], row["spearman"]["corrected"]
        if raw is not None and block["value"] is not None:
            assert block["value"] == pytest.approx(min(1.0, raw / block["reliability"] ** 0.5))
            assert block["ci"][0] <= block["ci"][1]
    verdict = report["verdicts"][0]
    assert 0 <= verdict["lead_holds_joint"] <= 1
    assert verdict["survives_judge_noise"] == (verdict["lead_holds_joint"] >= 0.95)


def test_table_and_csv_show_the_corrected_column(graded):
    table = runner.invoke(app, ["correlate", "--graded", str(graded["noisy"]), *ARGS, "--bootstrap", "20"])
    assert table.exit_code == 0, table.output
    assert "corrected" in table.stdout and "How far to trust this" in table.stdout
    assert "joint resamples" in table.stdout or "does not survive judge noise" in table.stdout
    text = runner.invoke(app, ["correlate", "--graded", str(graded["noisy"]), *ARGS, "--format", "csv"]).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {"corrected", "reliability", "corrected_ci_low", "corrected_ci_high"} <= set(rows[0])
    assert rows[0]["corrected_ci_low"] == ""  # no --bootstrap: no joint interval


def test_without_repeats_nothing_changes(graded):
    result = runner.invoke(app, ["correlate", "--graded", str(graded["plain"]), *ARGS, "--format", "json"])
    report = json.loads(result.stdout)
    assert "judge_reliability" not in report and "corrected" not in report["results"][0]["spearman"]
    assert "lead_holds_joint" not in report["verdicts"][0]


def test_a_second_judge_gives_icc_1_1_across_judges(tmp_path):
    rng = np.random.default_rng(8)
    records = [r for r in synthetic_graded(n_queries=25, seed=9, keep=0.9) if r["grade"] is not None]
    for record in records:
        first, second = (int(np.clip(round(record["grade"] + rng.normal(0, 0.8)), 1, 5)) for _ in range(2))
        record.update(grade=float(first), grades=[first], judges={"judge-a": [first], "judge-b": [second]})
    path = tmp_path / "two_judges.json"
    path.write_text(json.dumps(records))
    result = runner.invoke(app, ["correlate", "--graded", str(path), *ARGS, "--bootstrap", "20", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    reliability = report["judge_reliability"]
    assert reliability["source"] == "judges" and reliability["used"] == "icc_1_1"
    assert reliability["reliability"] == reliability["icc_1_1"] and 0 < reliability["icc_1_1"] < 1
    entry = report["results"][0]["spearman"]["corrected"]
    assert entry["ci"] is not None and entry["reliability"] > 0


def test_trust_lines_name_the_reference_gate_counts_when_present():
    from ragdiag.report.trust import correlate_trust
    from ragdiag.results.correlate import CorrelateResult

    report = {"meta": {"reference_gate": {"applied": True, "excluded_rows": 7, "rows_checked": 24,
                                          "by_kind": {"refusal": 6, "echo": 1, "empty": 0}}}, "verdicts": []}
    assert correlate_trust(CorrelateResult.from_json(report)) == ["7 of 24 rows left out: graded against a degenerate ideal answer (refusal 6, echo 1)"]
    assert correlate_trust(CorrelateResult.from_json({"meta": {"reference_gate": {"applied": False}}, "verdicts": []})) == []
