"""``ragdiag correlate`` output a person can read: verdict first, segment legend, dropped segments,
a non-zero exit when nothing is left, ``--segments pooled``, ties named as ties, the E note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.report.correlate_report import verdict_sentences
from ragdiag.results.correlate import CorrelateResult
from tools.synthetic import synthetic_graded

runner = CliRunner()
SMALL = (("M", 30, 2, range(2, 9)), ("N", 30, 2, range(2, 5)))


@pytest.fixture(scope="module")
def graded_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("graded") / "graded.json"
    path.write_text(json.dumps(synthetic_graded(n_queries=30, embedders=("L6",), configs=SMALL, seed=4)))
    return path


def _run(*args: str):
    return runner.invoke(app, ["correlate", *args, "--alpha-grid", "l30^0.8"])


def test_verdict_comes_before_the_tables_and_codes_are_explained(graded_file):
    result = _run("--graded", str(graded_file), "--segments", "nw", "--min-samples", "40")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.index("Verdict") < out.index("correlation with the grade")
    assert "L6^M^0 = embedder L6, subset M, narrow" in out
    # the default shows Spearman only; the other kinds are named as available
    assert "max pearson correlation" not in out and "also computed: pearson" in out


def test_corr_shows_more_kinds(graded_file):
    result = _run("--graded", str(graded_file), "--segments", "nw", "--min-samples", "40", "--corr", "spearman,kendall_b")
    assert result.exit_code == 0, result.output
    assert "max kendall_b correlation" in result.output


def test_dropped_segments_are_counted_with_their_sizes(graded_file):
    result = _run("--graded", str(graded_file), "--segments", "nw", "--min-samples", "91")
    assert result.exit_code == 0, result.output
    # N has K ∈ {2,3,4} with Np = 2: narrow side empty, wide side 3·30 = 90 rows < 91 → dropped
    assert "dropped for fewer than 91 rows" in result.output
    assert "L6^N^1 (90)" in result.output


def test_nothing_left_exits_2_naming_the_largest_segment(graded_file):
    result = _run("--graded", str(graded_file), "--segments", "nw")
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    # M: K ∈ 2..8, Np = 2 → wide (K ≥ 2) holds all 7·30 = 210 rows, the largest of all segments
    assert "no segment has at least 300 rows" in line
    assert "L6^M^1, has 210: --min-samples 210 would keep it" in line
    assert "--segments pooled" in line


def test_pooled_puts_one_embedder_and_subset_together(graded_file, tmp_path):
    out = tmp_path / "r.json"
    result = _run("--graded", str(graded_file), "--segments", "pooled", "--min-samples", "50", "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    sizes = {r["segment"]: r["n"] for r in report["results"] if r["measure"] == "F"}
    assert sizes == {"L6^M": 210, "L6^N": 90}
    assert {v["side"] for v in report["verdicts"]} == {"pooled"}
    assert report["segments_dropped"] == []


def test_e_note_when_no_row_has_its_2k_ranking(tmp_path):
    rows = synthetic_graded(n_queries=30, embedders=("L6",), configs=(("M", 30, 2, (3, 5)),), seed=1)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(rows))  # K = 3, 5: their 2·K siblings (6, 10) are absent
    result = _run("--graded", str(path), "--segments", "pooled", "--min-samples", "20")
    assert result.exit_code == 0, result.output
    assert "E: no value — none of the 60 rows has its 2·K ranking" in result.output
    header = next(line for line in result.output.splitlines() if "segment" in line and "nDCG" in line)
    assert " E " not in header


def _verdict(lead: float) -> dict:
    return {"subset": "M", "side": "wide", "kind": "spearman", "best": "F", "best_mean": 0.41, "segments": 2,
            "runner_up": "T", "runner_up_mean": 0.41 - lead, "lead": lead, "lead_holds": None}


def test_a_tiny_lead_is_named_a_tie_not_a_win():
    report = {"meta": {"bootstrap": 0}, "verdicts": [_verdict(0.0001), _verdict(0.02)]}
    tie, win = verdict_sentences(CorrelateResult.from_json(report))
    assert "tie — F and T predict the grade equally well" in tie and "predicts the grade best" not in tie
    assert win.startswith("M, wide: F predicts the grade best") and "+0.020 ahead of T" in win
    three = verdict_sentences(CorrelateResult.from_json({"meta": {"bootstrap": 0},
                                                         "verdicts": [{**_verdict(0.0), "tied": ["E", "F", "T"]}]}))
    assert three == ["M, wide: tie — E, F and T predict the grade equally well (spearman 0.410, within 0.0005 of each other)"]


def test_verdicts_list_every_tied_measure(graded_file, tmp_path):
    out = tmp_path / "r.json"
    result = _run("--graded", str(graded_file), "--segments", "pooled", "--min-samples", "50", "--out", str(out))
    assert result.exit_code == 0, result.output
    for verdict in json.loads(out.read_text())["verdicts"]:
        means = {r["measure"]: r["spearman"]["value"] for r in json.loads(out.read_text())["results"]
                 if r["segment"].endswith("^" + verdict["subset"])}
        assert verdict["tied"] == [m for m in sorted(means, key=lambda m: -means[m])
                                   if means[verdict["best"]] - means[m] < 5e-4]
