"""The evaluate set of the measure registry is the one place a metric is declared: ``--metrics`` accepts
exactly its names, the table shows its labels, and a comparison's improved / worsened follow its direction
(moved from tests/evaluate/test_registry.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.measures.core import HIGHER, LOWER
from ragdiag.measures.registry import EVALUATE, GRADED_METRICS, LOWER_IS_BETTER, METRIC_NAMES, STANDARD_METRICS, label

METRICS = EVALUATE.measures

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "graded-utility"


def test_every_metric_is_declared_once_with_a_label_direction_and_help():
    assert len(set(METRIC_NAMES)) == len(METRICS)
    assert len({m.label for m in METRICS}) == len(METRICS)
    assert all(m.direction in (HIGHER, LOWER) and m.description and m.kind in ("graded", "standard") for m in METRICS)
    assert set(GRADED_METRICS) | set(STANDARD_METRICS) == set(METRIC_NAMES)
    assert LOWER_IS_BETTER == ("harm", "unjudged")
    assert label("nrecall4") == "N-Recall4+" and label("not-a-metric") == "not-a-metric"


def test_the_registry_imports_no_numpy():
    code = "import sys, ragdiag.measures.registry; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_metrics_option_accepts_exactly_the_registry_names(tmp_path):
    base = ["evaluate", "--run", str(FIX / "bm25.jsonl"), "--qrels", str(FIX / "qrels.tsv"), "--k", "2",
            "--pool-depth", "5", "--bootstrap", "0", "--format", "json"]
    done = CliRunner().invoke(app, [*base, "--metrics", ",".join(METRIC_NAMES)])
    assert done.exit_code == 0, done.output
    assert [m["metric"] for m in json.loads(done.output)["runs"][0]["metrics"]] == list(METRIC_NAMES)
    done = CliRunner().invoke(app, [*base, "--metrics", "ra_nwg,recall@5"])
    assert done.exit_code == 2 and f"expected one of {', '.join(METRIC_NAMES)}" in done.output


def test_table_rows_carry_the_registry_labels():
    done = CliRunner().invoke(app, ["evaluate", "--run", str(FIX / "bm25.jsonl"), "--qrels", str(FIX / "qrels.tsv"),
                                    "--k", "2", "--pool-depth", "5", "--bootstrap", "0"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    for metric in METRICS:
        assert f"│ {metric.label} " in done.output, metric.name


@pytest.mark.parametrize("metric", METRIC_NAMES)
def test_improved_and_worsened_follow_the_direction(tmp_path, metric):
    """improved = share of the queries defined for both where b is better: higher, or lower for
    the lower-is-better metrics; computed here from the per-query rows."""
    out, rows = tmp_path / "e.json", tmp_path / "rows.jsonl"
    done = CliRunner().invoke(app, ["evaluate", "--run", str(FIX / "bm25.jsonl"), "--run", str(FIX / "dense.trec"),
                                    "--qrels", str(FIX / "qrels.tsv"), "--k", "2", "--pool-depth", "5", "--bootstrap", "0",
                                    "--metrics", metric, "--out", str(out), "--per-query", str(rows)])
    assert done.exit_code == 0, done.output
    values: dict[str, dict[str, float | None]] = {}
    for line in rows.read_text().splitlines():
        row = json.loads(line)
        values.setdefault(row["run"], {})[row["query_id"]] = row[metric]
    pairs = [(a, values["dense"][q]) for q, a in values["bm25"].items() if a is not None and values["dense"][q] is not None]
    sign = -1 if metric in LOWER_IS_BETTER else 1
    (comparison,) = json.loads(out.read_text())["comparisons"]
    assert comparison["n_defined"] == len(pairs)
    assert comparison["improved"] == pytest.approx(sum(sign * (b - a) > 0 for a, b in pairs) / len(pairs))
    assert comparison["worsened"] == pytest.approx(sum(sign * (b - a) < 0 for a, b in pairs) / len(pairs))
