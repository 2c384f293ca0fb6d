"""Issue 20's whole loop through the CLI on bundled data (fixtures/llm-cache, 4 queries, 96 graded rows)
against the toy model test server with its seeded judge-noise knob (test-server output, not an LLM's):
generate → grade --repeats 3 --grade-mode logprobs → correlate (corrected column, survival) → calibrate
with SIMULATED human grades (tools/simulated_human_grades.py) → --suggest → the sheet read back → report."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.metrics.ppi_estimates import grade_entropy
from tests.servers.toy_model import ToyModel
from tools.simulated_human_grades import filled_sheet, simulated_grades

BUNDLED = Path(__file__).resolve().parents[2] / "fixtures" / "llm-cache"


def _key(row: dict) -> tuple:
    return row["id"], row["E"], row["Nc"], row["Np"], row["K"]


def test_generate_grade_correlate_calibrate_suggest_report(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)

    def cli(*args: object, llm: bool = False) -> str:
        extra = ["--cache-dir", str(tmp_path / "cache"), "--no-progress", "--model", "toy", "--base-url",
                 toy.base_url] if llm else []
        result = CliRunner().invoke(app, [*map(str, args), *extra])
        assert result.exit_code == 0, result.output
        return result.output

    with ToyModel() as toy:
        toy.judge_noise(0.8, seed=0)
        cli("generate", "--texts", BUNDLED / "samples_texts.json", "--ranked", BUNDLED / "samples_ranked.json",
            "--ks", "2,3,5", "--out", "answers.jsonl", llm=True)
        # 4 workers: a row's 3 noise draws may reach its repeats in another order, which no assertion
        # below depends on (means, ICC, entropies and PPI are the same for any order within a row)
        cli("grade", "--answers", "answers.jsonl", "--out", "graded.json", "--grade-mode", "logprobs",
            "--repeats", "3", "--workers", "4", llm=True)

    graded = json.loads(Path("graded.json").read_text())
    assert len(graded) == 96
    for row in graded:
        assert len(row["grade_probs"]) == 5 and sum(row["grade_probs"]) == pytest.approx(1.0)
        assert len(row["grade_probs_repeats"]) == 3 and row["grade"] == pytest.approx(np.mean(row["grades"]))
    ratings = np.array([row["grades"] for row in graded])
    assert np.ptp(ratings, axis=1).max() > 0  # the noise knob makes repeats disagree

    cli("correlate", "--graded", "graded.json", "--segments", "pooled", "--min-samples", "5", "--bootstrap", "50",
        "--seed", "0", "--format", "json", "--out", "corr.json")
    corr = json.loads(Path("corr.json").read_text())
    reliability = corr["judge_reliability"]
    item_means = ratings.mean(axis=1)  # ICC(1,k) = (MSB − MSW) / MSB with 3 ratings per row
    msb = 3 * np.sum((item_means - ratings.mean()) ** 2) / (len(ratings) - 1)
    msw = np.sum((ratings - item_means[:, None]) ** 2) / (ratings.size - len(ratings))
    assert reliability["icc_1_k"] == pytest.approx((msb - msw) / msb) and 0 < reliability["reliability"] < 1
    assert reliability["alpha_interval"] is not None and reliability["alpha_ordinal"] is None  # expected grades
    for entry in corr["results"]:
        spearman = entry["spearman"]
        if spearman["value"] is None:
            continue
        fixed = spearman["corrected"]
        assert fixed["reliability"] == pytest.approx(reliability["reliability"])  # one pooled segment: all rows
        assert fixed["value"] == pytest.approx(min(1.0, spearman["value"] / np.sqrt(fixed["reliability"])))
        assert fixed["ci"][0] <= fixed["value"] <= fixed["ci"][1]
    verdict = corr["verdicts"][0]
    assert 0 <= verdict["lead_holds_joint"] <= 1
    assert verdict["survives_judge_noise"] == (verdict["lead_holds_joint"] >= 0.95)

    human = simulated_grades(graded, 30, seed=0)
    Path("human.jsonl").write_text("".join(json.dumps(row) + "\n" for row in human))
    out = cli("calibrate", "--graded", "graded.json", "--human", "human.jsonl", "--by", "K", "--out", "calib.json",
              "--suggest", "10", "--answers", "answers.jsonl")
    assert "wrote to_label.csv: 10 items to label (highest entropy of grade_probs)" in out
    calib_groups = json.loads(Path("calib.json").read_text())["estimates"]["mean_grade"]
    short = [f"{g['group']} ({g['labelled']})" for g in calib_groups if g["labelled"] < 10]
    assert all(g["ppi"] is None for g in calib_groups if g["labelled"] < 10)
    assert not short or f"PPI –: {', '.join(short)} labelled, fewer than the 10 PPI needs" in out.replace("\n", " ")
    calib = json.loads(Path("calib.json").read_text())
    by_key = {_key(row): row for row in graded}
    judge = np.array([by_key[_key(h)]["grade"] for h in human])  # the expected grade is the judge grade
    truth = np.array([h["grade"] for h in human])
    assert calib["meta"]["judge_grade"] == "expected grade from grade_probs" and calib["meta"]["labelled"] == 30
    agreement = calib["agreement"]
    assert agreement["mean_bias"] == pytest.approx(float(np.mean(judge - truth)))
    assert agreement["within_one"] == pytest.approx(float(np.mean(np.abs(np.floor(judge + 0.5) - truth) <= 1)))
    overall = calib["estimates"]["mean_grade"][0]
    assert overall["group"] == "all" and overall["judge_only"]["estimate"] == pytest.approx(np.mean([r["grade"] for r in graded]))
    assert overall["ppi"]["ci"][0] <= overall["ppi"]["estimate"] <= overall["ppi"]["ci"][1]
    assert overall["human_only"]["estimate"] == pytest.approx(truth.mean())
    assert all(slope["ppi"] is not None for slope in calib["estimates"]["slopes"])

    sheet = list(csv.DictReader(Path("to_label.csv").read_text().splitlines()))
    picked = [by_key[(r["id"], r["E"], int(r["Nc"]), int(r["Np"]), int(r["K"]))] for r in sheet]
    labelled = {_key(h) for h in human}
    assert len(picked) == 10 and not {_key(r) for r in picked} & labelled and all(r["grade"] == "" for r in sheet)
    entropies = grade_entropy(np.array([r["grade_probs"] for r in picked]))
    assert np.allclose(entropies, calib["suggested"]["uncertainty"]) and np.all(np.diff(entropies) <= 1e-12)
    unpicked = [r for r in graded if _key(r) not in labelled and r not in picked]
    assert entropies.min() >= grade_entropy(np.array([r["grade_probs"] for r in unpicked])).max() - 1e-12
    assert all(r["question"] for r in sheet)  # filled from --answers

    Path("labelled.csv").write_text(filled_sheet(Path("to_label.csv").read_text()))  # the sheet, graded, as is
    cli("calibrate", "--graded", "graded.json", "--human", "labelled.csv", "--out", "calib-sheet.json")
    assert json.loads(Path("calib-sheet.json").read_text())["meta"]["labelled"] == 10

    cli("report", "corr.json", "calib.json", "--out", "report.html")
    page = Path("report.html").read_text()
    assert page.count("How far to trust this") >= 2 and "ICC(1,k)" in page and "joint resamples" in page
    assert "judge alone" in page and "PPI" in page and "TEST SERVER" in page
    assert not short or "fewer than the 10 PPI needs" in page
