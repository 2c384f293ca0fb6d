"""``ragdiag clq`` reading quality from an evaluate result JSON: a tampered file (``metrics`` not a
list, a metric without ``k``, a value that is not a number) is one error line naming the
configurations file, the record, the evaluate file and the field; nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

GOLDEN = Path(__file__).resolve().parent / "golden" / "evaluate.json"


def _tampered(tamper) -> dict:
    doc = json.loads(GOLDEN.read_text())
    tamper(doc["runs"][0])
    return doc


def _set(key, value):
    def tamper(run):
        run[key] = value
    return tamper


def _metric(position, key, value=None, drop=False):
    def tamper(run):
        if drop:
            del run["metrics"][position][key]
        else:
            run["metrics"][position][key] = value
    return tamper


@pytest.mark.parametrize("tamper, message", [
    (_set("metrics", "ra_nwg@2=0.4"), "run 'bm25': 'metrics' is not a list"),
    (_set("metrics", [3]), "metrics[1]: not an object"),
    (_metric(0, "k", drop=True), "metrics[1] (ra_nwg): 'k' missing or not an integer ≥ 1"),
    (_metric(1, "k", "three"), "metrics[2] (ra_nwg): 'k' missing"),
    (_metric(0, "value", "high"), "metrics[1] (ra_nwg@2): 'value' 'high' is not a finite number"),
    (_metric(0, "metric", drop=True), "metrics[1]: 'metric' missing"),
])
def test_a_tampered_evaluate_json_is_one_line_naming_file_and_field(tmp_path, tamper, message):
    evaluated = tmp_path / "eval.json"
    evaluated.write_text(json.dumps(_tampered(tamper)))
    configs = tmp_path / "configs.csv"
    configs.write_text("name,evaluate,run,latency_p50_ms,cost_per_1k\nlexical,eval.json,bm25,12,0\n")
    before = {p: p.read_bytes() for p in (evaluated, configs)}
    out, plot = tmp_path / "clq.json", tmp_path / "clq.png"
    done = CliRunner().invoke(app, ["clq", "--configs", str(configs), "--quality", "ra_nwg@2",
                                    "--out", str(out), "--plot", str(plot)])
    assert done.exit_code == 2, done.output
    assert done.output.startswith("ragdiag: error: ") and done.output.count("\n") == 1, done.output
    assert f"{configs}: record 1: field 'evaluate': {evaluated}" in done.output and message in done.output
    assert {p: p.read_bytes() for p in before} == before and not out.exists() and not plot.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["configs.csv", "eval.json"]


def test_a_null_value_is_a_metric_undefined_at_that_k(tmp_path):
    """evaluate writes null where a metric has no value at a K: the metric is absent, not an error."""
    evaluated = tmp_path / "eval.json"
    evaluated.write_text(json.dumps(_tampered(_metric(0, "value", None))))
    configs = tmp_path / "configs.csv"
    configs.write_text("name,evaluate,run,latency_p50_ms,cost_per_1k\nlexical,eval.json,bm25,12,0\n")
    done = CliRunner().invoke(app, ["clq", "--configs", str(configs), "--quality", "ra_nwg@2"])
    assert done.exit_code == 2 and "has no ra_nwg@2" in done.output
