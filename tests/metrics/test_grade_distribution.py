"""Grade-distribution heatmap data (paper 003, Figs 2–4) against a plain per-record count, and the
T-versus-T′ comparison figure through the CLI."""

from __future__ import annotations

import collections
import json

import pytest

from ragdiag.data.graded_table import GradedSource, build_graded_table
from ragdiag.errors import RagdiagError
from ragdiag.metrics.grade_distribution import grade_distribution, integer_grades
from ragdiag.report.paper003_figures import comparison_grid
from ragdiag.results.correlate import CorrelateResult
from tools.synthetic import synthetic_graded


def _reference(records: list[dict], by: str) -> dict[tuple[str, str, float], collections.Counter]:
    counts: dict[tuple[str, str, float], collections.Counter] = collections.defaultdict(collections.Counter)
    for r in records:
        value = round(r["K"] / r["Np"], 1) if by == "ratio" else float(r["K"])
        grade = min(5, max(1, int(r["grade"] + 0.5)))
        counts[(r["E"], r["id"].split("-")[0], value)][grade] += 1
    return counts


@pytest.mark.parametrize("by", ["ratio", "K"])
def test_counts_and_shares_match_a_per_record_count(by):
    records = synthetic_graded(n_queries=12, seed=5)
    table = build_graded_table(records, "synthetic", GradedSource("synthetic"))
    dist = grade_distribution(table, by, min_samples=20)
    reference = _reference(records, by)
    seen = 0
    for panel in dist.panels:
        for b, value in enumerate(panel.bins):
            expected = reference[(panel.embedder, panel.subset, value)]
            assert [panel.counts[g][b] for g in range(5)] == [expected[g] for g in range(1, 6)]
            assert sum(panel.shares[g][b] for g in range(5)) == pytest.approx(1.0, abs=1e-12)
            seen += 1
        for value, total in panel.dropped_bins.items():
            assert total < 20 and sum(reference[(panel.embedder, panel.subset, float(value))].values()) == total
    kept = sum(1 for c in reference.values() if sum(c.values()) >= 20)
    assert seen == kept > 3


def test_mean_grades_round_half_up_and_clip():
    assert integer_grades([1.0, 2.5, 3.49, 4.5, 5.0, 0.2]).tolist() == [1, 3, 3, 5, 5, 1]


def test_no_bin_big_enough_is_one_error():
    records = synthetic_graded(n_queries=3, seed=1)
    table = build_graded_table(records, "synthetic", GradedSource("synthetic"))
    with pytest.raises(RagdiagError, match="lower --min-samples"):
        grade_distribution(table, "ratio", min_samples=10**6)


def test_comparison_grid_places_each_difference_by_ratio_and_embedder():
    report = {"meta": {"compare": ["T", "T'"]}, "comparisons": [
        {"segment": "AM^M^KtoN^0.5", "spearman": {"difference": 0.1}},
        {"segment": "QM^M^KtoN^0.5", "spearman": {"difference": -0.2}},
        {"segment": "AM^M^KtoN^2.0", "spearman": {"difference": None}},
        {"segment": "AM^Hp^KtoN^1.0", "spearman": {"difference": 0.3}},
    ]}
    grid = comparison_grid(CorrelateResult.from_json(report), "spearman")
    ratios, embedders, cells = grid["M"]
    assert ratios == [0.5, 2.0] and embedders == ["AM", "QM"]
    assert cells[0][0].difference == 0.1 and cells[0][1].difference == -0.2
    assert cells[1][0].difference is None and cells[1][1] is None
    assert [[cell.to_json() for cell in row] for row in grid["Hp"][2]] == [[{"difference": 0.3}]]
    with pytest.raises(RagdiagError, match="ratio segments"):
        comparison_grid(CorrelateResult.from_json({"comparisons": [{"segment": "AM^M^1", "spearman": {}}]}), "spearman")


def _cli(*args: str):
    from typer.testing import CliRunner

    from ragdiag.cli import app

    return CliRunner().invoke(app, list(args))


def test_cli_writes_both_figures_and_the_distribution(tmp_path):
    out, grades, diff = tmp_path / "c.json", tmp_path / "g.png", tmp_path / "d.png"
    done = _cli("correlate", "--dataset", "msmarco", "--offline", "--measures", "T,T'", "--compare", "T,T'",
                "--grade-plot", str(grades), "--compare-plot", str(diff), "--format", "json", "--out", str(out),
                "--alpha-grid", "l20^0.8")
    assert done.exit_code == 0, done.output
    assert grades.read_bytes()[:4] == b"\x89PNG" and diff.read_bytes()[:4] == b"\x89PNG"
    report = json.loads(out.read_text())
    panel = report["grade_distribution"]["panels"][0]
    assert report["grade_distribution"]["by"] == "ratio" and min(map(sum, zip(*panel["counts"]))) >= 300
    assert {r["measure"] for r in report["results"]} == {"T", "T'"}


@pytest.mark.parametrize("args, message", [
    (["--dataset", "msmarco", "--offline", "--compare-plot", "X.png"], "--compare-plot needs --compare"),
    (["--table", "TABLE", "--grade-plot", "X.png"], "--grade-plot does not apply with --table"),
])
def test_cli_refuses_figures_without_their_inputs(tmp_path, args, message):
    table = tmp_path / "t.csv"
    table.write_text("grade,m\n1,2\n")
    args = [a.replace("TABLE", str(table)).replace("X.png", str(tmp_path / "x.png")) for a in args]
    done = _cli("correlate", *args)
    assert done.exit_code == 2 and message in done.output
    assert not (tmp_path / "x.png").exists()
