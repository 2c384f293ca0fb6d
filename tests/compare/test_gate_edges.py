"""The gate under odd numbers (issue 44, issue 42): a statistic that is not finite never decides, Δ
meets the margin exactly (12 significant digits, as correlate's ties), a zero margin says what it
can decide, the plan sizes the level the decision uses, the bootstrap p of one metric does not
depend on the others, and the result's bookkeeping is the result type's own."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.compare import paired as pt
from ragdiag.compare import planning
from ragdiag.compare.gate import GateOptions, compare_metrics, gate, plan_entries
from ragdiag.compare.inputs import Paired
from ragdiag.errors import RagdiagError
from ragdiag.report.compare_report import summary_lines
from tests.compare.test_compare_cli import FIX, RUNS

runner = CliRunner()


def _paired(base: np.ndarray, new: np.ndarray, metrics: list[str] | None = None) -> Paired:
    base, new = np.asarray(base, dtype=np.float64), np.asarray(new, dtype=np.float64)
    if base.ndim == 1:
        base, new = base[:, None], new[:, None]
    names = metrics or [f"m{j}" for j in range(base.shape[1])]
    return Paired("table", [f"q{i}" for i in range(len(base))], names, base, new, [False] * len(names),
                  {"base_only": 0, "new_only": 0})


def _strict(text: str) -> object:
    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_a_tiny_alpha_gives_finite_intervals_never_a_pass_from_infinities(tmp_path):
    out = tmp_path / "c.json"
    result = runner.invoke(app, ["compare", *RUNS, "--alpha", "1e-20", "--out", str(out)])
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert not out.exists() and result.output.count("\n") == 1
        return
    doc = _strict(out.read_text())
    for entry in doc["metrics"]:
        assert math.isfinite(entry["ci_low"]) and math.isfinite(entry["ci_high"])
        assert entry["decision"] == "inconclusive"  # nothing is shown at α 1e-20 with 60 queries


@pytest.mark.parametrize("test", pt.TESTS)
def test_values_whose_difference_overflows_are_an_error_not_a_decision(test):
    base = np.array([1.5e308, 1.0e308, 1.2e308, 0.9e308, 1.1e308, 1.3e308])
    with pytest.raises(RagdiagError, match="not finite"):
        compare_metrics(_paired(base, -base), GateOptions(test=test))


def test_every_json_file_compare_writes_is_strict_json(tmp_path):
    out, deltas = tmp_path / "c.json", tmp_path / "d.jsonl"
    result = runner.invoke(app, ["compare", *RUNS, "--plan", "--out", str(out), "--per-query", str(deltas)])
    assert result.exit_code == 1, result.output
    _strict(out.read_text())
    for line in deltas.read_text().splitlines():
        _strict(line)


@pytest.mark.parametrize("test", pt.TESTS)
def test_a_drop_equal_to_the_margin_is_not_a_regression(test):
    """Every query 0.30 → 0.29 with --max-drop 0.01: Δ = −0.010000000000000009 in floats, −0.01 exactly."""
    base = np.full(30, 0.30)
    (mc,), _ = compare_metrics(_paired(base, np.full(30, 0.29)), GateOptions(test=test, max_drop=0.01))
    assert mc.decision == "no regression" and mc.p == 1.0


@pytest.mark.parametrize("test", pt.TESTS)
def test_identical_runs_at_a_zero_margin_pass_even_under_strict(test):
    base = np.linspace(0.1, 0.9, 25)
    result = gate(_paired(base, base.copy()), GateOptions(test=test, max_drop=0.0, strict=True), _meta(0.0, True))
    assert result.decision == "pass" and result.metrics[0].decision == "no regression"


def _meta(max_drop: float = 0.01, strict: bool = False) -> dict:
    return {"queries": 25, "input_kind": "table", "test": "t", "correction": "holm", "alpha": 0.05,
            "interval_level": 0.9, "max_drop": max_drop, "seed": 0, "strict": strict, "power": 0.8,
            "dropped": {}, "base_name": "a.csv", "new_name": "b.csv"}


def test_a_zero_margin_says_what_it_can_decide():
    """Δ centred on 0 at --max-drop 0 is never decided: the line says so, and what would decide."""
    base = np.full(40, 0.5)
    new = base + np.tile([0.05, -0.05], 20)
    result = gate(_paired(base, new), GateOptions(max_drop=0.0), _meta(0.0))
    assert result.metrics[0].decision == "inconclusive" and result.metrics[0].queries_needed is None
    line = summary_lines(result)[1]
    assert "no finite number" not in line
    assert "--max-drop 0" in line and "margin" in line


def test_bootstrap_p_of_a_metric_does_not_depend_on_the_other_metrics():
    """Resampled means exactly on the margin: summation order (one column or three) must not flip them."""
    rng = np.random.default_rng(1)
    gain = rng.choice([0.0, -0.02, -0.01, 0.01, -0.03], size=(40, 1))
    alone = pt.bootstrap_test(gain, 0.01, 0.05, seed=0).p[0]
    together = pt.bootstrap_test(np.hstack([gain, rng.normal(size=(40, 2))]), 0.01, 0.05, seed=0).p[0]
    assert alone == together


@pytest.mark.parametrize(("correction", "divisor"), [("holm", 3), ("bh", 3), ("none", 1)])
def test_the_plan_and_queries_needed_use_the_level_a_regression_is_decided_at(correction, divisor):
    """Holm's (and BH's) first step tests at α/m: a plan at α would promise power the family does not have."""
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.9, size=(60, 3))
    new = base - 0.03 + rng.normal(0, 0.1, size=(60, 3))
    o = GateOptions(correction=correction, plan=True, mde=0.05)
    data = _paired(base, new)
    for entry in plan_entries(data, o):
        assert entry.queries_needed == planning.queries_needed(entry.sd_diff, 0.05 - 0.01, 0.05 / divisor, 0.8)
    metrics, _ = compare_metrics(data, o)
    for mc in metrics:
        if mc.decision == "inconclusive" and mc.delta < -0.01:
            gap = -(mc.delta + 0.01)
            assert mc.queries_needed == planning.queries_needed(mc.sd_diff, gap, 0.05 / divisor, 0.8)


def test_the_gate_leaves_the_result_bookkeeping_to_the_result_type():
    base = np.linspace(0.1, 0.9, 25)
    result = gate(_paired(base, base - 0.001), GateOptions(), _meta())
    assert result.present == ()
    keys = list(result.to_json())
    assert keys == ["meta", "decision", "metrics", "plan", "judge", "worst", "run_record"]


def test_the_fixture_json_names_both_sides(tmp_path):
    out = tmp_path / "c.json"
    runner.invoke(app, ["compare", *RUNS, "--out", str(out)])
    meta = json.loads(out.read_text())["meta"]
    assert (meta["base_name"], meta["new_name"]) == ("base.jsonl", "new.trec")
    named = tmp_path / "n.json"
    runner.invoke(app, ["compare", *RUNS, "--base-name", "bm25", "--new-name", "bm25+rerank", "--out", str(named)])
    meta = json.loads(named.read_text())["meta"]
    assert (meta["base_name"], meta["new_name"]) == ("bm25", "bm25+rerank")
    assert FIX.is_dir()
