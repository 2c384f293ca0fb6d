"""``ragdiag calibrate --plan``: the budget plan over questions, judge repeats and human labels, and its
bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.metrics import budget_plan as bp

runner = CliRunner()
GOLDEN = Path(__file__).parent / "golden"
GRADED, HUMAN = GOLDEN / "calibrate_graded.json", GOLDEN / "calibrate_human.jsonl"
PRICES = ("--price-call", "0.002", "--price-human", "0.5")


def _run(*args: object):
    return runner.invoke(app, ["calibrate", "--graded", str(GRADED), *map(str, args)])


def test_budget_plan_beats_each_alternative_within_the_budget(tmp_path):
    out = tmp_path / "plan.json"
    result = _run("--human", HUMAN, "--plan", *PRICES, "--budget", 20, "--out", out)
    assert result.exit_code == 0, result.output
    plan = json.loads(out.read_text())["plan"]
    assert plan["pilot"] == {"questions": 120, "repeats": 3, "labels": 30}
    designs = {d["design"]: d for d in plan["designs"]}
    assert list(designs) == ["pilot as is", "planned", "all on questions", "all on repeats", "all on humans"]
    planned = designs["planned"]
    assert 0 < planned["cost"] <= 20
    for name in ("pilot as is", "all on questions", "all on repeats", "all on humans"):
        assert planned["predicted_width"] <= designs[name]["predicted_width"]
        assert designs[name]["cost"] <= 20
    for design in designs.values():
        low, high = design["width_interval"]
        assert low < high and design["questions"] == 120 + design["new_questions"]
    comp = plan["components"]
    assert comp["judge_repeat"] > 0 and 0 < comp["r_squared"] <= 1 and plan["seed"] == 0
    assert "plan for the mean grade over all items" in result.output and "all on repeats" in result.output


def test_target_width_is_reached_at_a_cost_no_larger_than_needed(tmp_path):
    out = tmp_path / "plan.json"
    assert _run("--human", HUMAN, "--plan", *PRICES, "--target-width", 0.25, "--out", out).exit_code == 0
    plan = json.loads(out.read_text())["plan"]
    planned = plan["designs"][1]
    assert planned["predicted_width"] <= 0.25 and plan["budget"] is None
    comp = plan["components"]
    components = bp.Components(comp["between_question"], comp["judge_repeat"], comp["human"],
                               comp["judge_human_covariance"])
    pilot = bp.Pilot(**plan["pilot"])
    cheaper = bp.best_for_budget(components, pilot, planned["cost"] - 0.01, 0.002, 0.5)
    assert cheaper is None or bp.width(components, pilot, cheaper, 0.1) > 0.25


def test_without_plan_the_output_has_no_plan_key(tmp_path):
    out = tmp_path / "c.json"
    assert _run("--human", HUMAN, "--out", out).exit_code == 0
    assert "plan" not in json.loads(out.read_text())


@pytest.mark.parametrize("args,message", [
    (("--plan", "--price-call", "0", "--price-human", "1", "--budget", "5"), "--price-call"),
    (("--plan", "--price-call", "0.01", "--price-human", "-1", "--budget", "5"), "--price-human"),
    (("--plan", *PRICES, "--budget", "0.4"), "buys less than one human label"),
    (("--plan", *PRICES), "exactly one of --budget"),
    (("--plan", *PRICES, "--budget", "5", "--target-width", "0.2"), "exactly one of --budget"),
    (("--plan", "--budget", "5"), "--plan needs --price-human"),
    (("--plan", "--price-human", "0.5", "--budget", "5"), "no grade manifest"),  # no known price to fall back on
    ((*PRICES, "--budget", "5"), "only apply with --plan"),
    (("--plan", *PRICES, "--target-width", "9"), "--target-width"),
])
def test_bad_plan_input_is_one_line_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "c.json"
    result = _run("--human", HUMAN, *args, "--out", out)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_plan_without_human_grades_is_refused(tmp_path):
    out = tmp_path / "c.json"
    result = _run("--plan", *PRICES, "--budget", 5, "--suggest", 3, "--sheet", tmp_path / "s.csv", "--out", out)
    assert result.exit_code == 2 and "--plan needs the pilot's human grades" in result.output
    assert not out.exists() and not (tmp_path / "s.csv").exists()


def test_without_price_call_the_judge_models_known_price_is_used_and_said(tmp_path):
    import shutil

    from ragdiag.llm.prices import DEFAULT_PRICES

    graded = tmp_path / "graded.json"
    shutil.copy(GRADED, graded)
    doc = {"meta": {"command": "grade", "llm": {"model": "gpt-4o-mini"}},
           "summary": {"calls": 100, "prompt_tokens": 90_000, "completion_tokens": 2_000}}
    graded.with_name(graded.name + ".manifest.json").write_text(json.dumps(doc))
    out = tmp_path / "c.json"
    result = runner.invoke(app, ["calibrate", "--graded", str(graded), "--human", str(HUMAN), "--plan",
                                 "--price-human", "0.5", "--budget", "20", "--out", str(out)])
    assert result.exit_code == 0, result.output
    plan = json.loads(out.read_text())["plan"]
    price = DEFAULT_PRICES["gpt-4o-mini"]
    assert plan["price_call"] == pytest.approx((900 * price["input"] + 20 * price["output"]) / 1e6)
    assert "gpt-4o-mini" in plan["price_call_source"] and "gpt-4o-mini" in result.output
