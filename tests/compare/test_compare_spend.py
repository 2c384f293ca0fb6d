"""``compare --plan --budget / --target-width`` (issue 43): the spend over new questions, judge repeats and
human labels for a paired Δ, on the bundled graded pair (fixtures/compare: 60 questions, 3 repeats a
side) with human grades written here; the known price of the judge model from the grade manifests; bad
input (one line, exit 2, nothing written); the paired components against the one-side ones."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.llm.prices import DEFAULT_PRICES
from ragdiag.metrics import budget_paired as bpp
from ragdiag.metrics import budget_plan as bp
from ragdiag.results.compare import CompareResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
GRADED = ["--base", str(FIX / "base_graded.json"), "--new", str(FIX / "new_graded.json")]
runner = CliRunner()


def _human(path: Path, labelled: int = 25, grade_of=None) -> Path:
    """Human grades of both answers for the first ``labelled`` questions: the judges' mean plus noise."""
    rng = np.random.default_rng(5)
    base, new = (json.loads((FIX / name).read_text()) for name in ("base_graded.json", "new_graded.json"))
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "base", "new"])
        for i, (b, n) in enumerate(zip(base, new)):
            cells = [int(np.clip(round(np.mean(r["grades"]) + rng.normal(0, 0.7)), 1, 5)) for r in (b, n)]
            writer.writerow([b["id"], *(cells if i < labelled else ["", ""])])
    return path


def _run(*args: str):
    return runner.invoke(app, ["compare", *GRADED, "--plan", *args])


def test_budget_plan_spends_within_the_budget_and_beats_the_single_resource_designs(tmp_path):
    out = tmp_path / "c.json"
    result = _run("--human", str(_human(tmp_path / "h.csv")), "--price-call", "0.01", "--price-human", "2",
                  "--budget", "100", "--out", str(out))
    assert result.exit_code == 1, result.output  # the gate's own decision on this pair
    doc = json.loads(out.read_text())
    assert CompareResult.from_json(doc).to_json() == doc
    plan = doc["budget_plan"]
    assert plan["pilot"] == {"questions": 60, "repeats": 3, "labels": 25} and doc["meta"]["price_call_source"] == "--price-call"
    designs = {d["design"]: d for d in plan["designs"]}
    planned = designs["planned"]
    assert planned["cost"] <= 100 and planned["labels"] == 25 + planned["new_labels"]
    cost = 2 * 0.01 * (planned["new_questions"] * (1 + planned["repeats"]) + 60 * (planned["repeats"] - 3)) \
        + 2 * 2 * planned["new_labels"]
    assert planned["cost"] == pytest.approx(cost)
    for name in ("pilot as is", "all on questions", "all on humans"):
        assert planned["predicted_width"] <= designs[name]["predicted_width"] + 1e-12, name
    low, high = planned["width_interval"]
    assert low < planned["predicted_width"] < high
    assert "spend — planned:" in result.output and doc["plan"] is not None  # queries-needed plan kept


def test_target_width_finds_the_cheapest_design_reaching_it(tmp_path):
    out = tmp_path / "c.json"
    result = _run("--human", str(_human(tmp_path / "h.csv")), "--price-call", "0.01", "--price-human", "2",
                  "--target-width", "0.5", "--out", str(out))
    assert result.exit_code in (0, 1), result.output
    plan = json.loads(out.read_text())["budget_plan"]
    planned = next(d for d in plan["designs"] if d["design"] == "planned")
    assert planned["predicted_width"] <= 0.5
    comp, pilot = _components(tmp_path / "h.csv")
    cheaper = bp.best_for_budget(comp, pilot, planned["cost"] - 0.05, 0.02, 4.0)
    assert cheaper is None or bp.width(comp, pilot, cheaper, 0.1) > 0.5


def _components(human: Path) -> tuple[bp.Components, bp.Pilot]:
    base, new = (json.loads((FIX / name).read_text()) for name in ("base_graded.json", "new_graded.json"))
    rows = list(csv.DictReader(human.open()))
    hb = np.array([float(r["base"]) if r["base"] else np.nan for r in rows])
    hn = np.array([float(r["new"]) if r["new"] else np.nan for r in rows])
    sb, sn = bp.repeat_stats([r["grades"] for r in base]), bp.repeat_stats([r["grades"] for r in new])
    jd = np.array([np.mean(n["grades"]) - np.mean(b["grades"]) for b, n in zip(base, new)])
    lab = ~np.isnan(hb)
    return bpp.paired_components(sb, sn, jd, (hn - hb)[lab], jd[lab]), bp.Pilot(60, 3, int(lab.sum()))


def _manifest(path: Path, model: str, calls: int, prompt: int, completion: int) -> None:
    doc = {"meta": {"command": "grade", "llm": {"model": model}},
           "summary": {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}}
    path.with_name(path.name + ".manifest.json").write_text(json.dumps(doc))


def test_without_price_call_the_judge_models_known_price_is_used_and_said(tmp_path):
    for name in ("base_graded.json", "new_graded.json"):
        shutil.copy(FIX / name, tmp_path / name)
    _manifest(tmp_path / "base_graded.json", "gpt-4o-mini", 180, 180_000, 1_800)
    _manifest(tmp_path / "new_graded.json", "gpt-4o-mini", 180, 216_000, 1_800)
    out = tmp_path / "c.json"
    result = runner.invoke(app, ["compare", "--base", str(tmp_path / "base_graded.json"), "--new",
                                 str(tmp_path / "new_graded.json"), "--plan", "--human", str(_human(tmp_path / "h.csv")),
                                 "--price-human", "0.5", "--budget", "20", "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(out.read_text())
    price = DEFAULT_PRICES["gpt-4o-mini"]
    per_call = [(tokens * price["input"] + 10 * price["output"]) / 1e6 for tokens in (1000, 1200)]
    assert doc["budget_plan"]["price_call"] == pytest.approx(np.mean(per_call))
    assert "gpt-4o-mini" in doc["meta"]["price_call_source"] and "gpt-4o-mini" in result.output


@pytest.mark.parametrize(("args", "needle"), [
    (["--price-call", "0.01", "--price-human", "0", "--budget", "100"], "--price-human"),
    (["--price-call", "0", "--price-human", "2", "--budget", "100"], "--price-call"),
    (["--price-call", "-1", "--price-human", "2", "--budget", "100"], "--price-call"),
    (["--price-call", "0.01", "--price-human", "2", "--budget", "3.5"], "less than one labelled question"),
    (["--price-call", "0.01", "--price-human", "2"], "--budget"),
    (["--price-call", "0.01", "--price-human", "2", "--budget", "10", "--target-width", "0.3"], "exactly one"),
    (["--price-human", "2", "--budget", "100"], "no grade manifest"),
])
def test_bad_spend_is_one_line_exit_2_nothing_written(tmp_path, args, needle):
    out = tmp_path / "c.json"
    result = _run("--human", str(_human(tmp_path / "h.csv")), *args, "--out", str(out))
    assert result.exit_code == 2 and needle in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not out.exists()


def test_bad_human_file_and_misplaced_flags_are_refused(tmp_path):
    out = tmp_path / "c.json"
    bad = tmp_path / "bad.csv"
    bad.write_text("id,base,new\nq01,3,7\n")
    spend = ["--price-call", "0.01", "--price-human", "2", "--budget", "100", "--out", str(out)]
    for args, needle in ((["--human", str(bad), *spend], "outside the human scale"),
                         (["--human", str(_human(tmp_path / "few.csv", labelled=4)), *spend], "at least 10"),
                         (["--human", str(tmp_path / "absent.csv"), *spend], "no such file")):
        result = _run(*args)
        assert result.exit_code == 2 and needle in result.output, result.output
    result = runner.invoke(app, ["compare", *GRADED, "--budget", "100", "--out", str(out)])
    assert result.exit_code == 2 and "goes with --plan" in result.output
    runs = ["--base", str(FIX / "base.jsonl"), "--new", str(FIX / "new.trec"), "--qrels", str(FIX / "qrels.tsv")]
    result = runner.invoke(app, ["compare", *runs, "--plan", "--human", str(_human(tmp_path / "h.csv")), *spend])
    assert result.exit_code == 2 and "graded files" in result.output
    assert not out.exists()


def test_paired_components_reduce_to_one_side_when_base_is_constant():
    rng = np.random.default_rng(0)
    truth = rng.normal(3, 1, 80)
    repeats = [list(t + rng.normal(0, 0.6, 3)) for t in truth]
    judge = np.array([np.mean(r) for r in repeats])
    human = np.where(np.arange(80) < 30, truth + rng.normal(0, 0.5, 80), np.nan)
    lab = ~np.isnan(human)
    one = bp.components(repeats, judge, human[lab], judge[lab])
    zeros = bp.repeat_stats([[0.0, 0.0, 0.0]] * 80)
    paired = bpp.paired_components(zeros, bp.repeat_stats(repeats), judge, human[lab], judge[lab])
    assert astuple(paired) == pytest.approx(astuple(one))
