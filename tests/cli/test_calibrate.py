"""``ragdiag calibrate``: agreement, PPI estimates, the labelling sheet and bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tools.synthetic import synthetic_graded

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A graded file judged three times per row (bias +0.7), and human grades for 40 of its rows."""
    folder = tmp_path_factory.mktemp("calibrate")
    rng = np.random.default_rng(5)
    records = [r for r in synthetic_graded(n_queries=12, seed=2, keep=0.9) if r["grade"] is not None]
    truth = {}
    for record in records:
        truth[id(record)] = int(round(record["grade"]))
        grades = np.clip(np.round(record["grade"] + 0.7 + rng.normal(0, 0.8, 3)), 1, 5).astype(int).tolist()
        record["grades"], record["grade"] = grades, float(np.mean(grades))
    graded = folder / "graded.json"
    graded.write_text(json.dumps(records))
    human = folder / "human.jsonl"
    picked = rng.choice(len(records), 40, replace=False)
    human.write_text("".join(json.dumps({k: records[i][k] for k in ("id", "E", "K", "Nc", "Np")}
                                        | {"grade": truth[id(records[i])]}) + "\n" for i in picked))
    return {"graded": graded, "human": human, "folder": folder, "records": records}


def _run(*args: str):
    return runner.invoke(app, ["calibrate", *map(str, args)])


def test_result_has_agreement_ppi_and_the_run_record(files, tmp_path):
    out = tmp_path / "calib.json"
    result = _run("--graded", files["graded"], "--human", files["human"], "--out", out, "--by", "system")
    assert result.exit_code == 0, result.output
    assert "How far to trust this" in result.stdout and "within one grade" in result.stdout
    doc = json.loads(out.read_text())
    agreement = doc["agreement"]
    assert agreement["items"] == 40 and agreement["mean_bias"] > 0.3
    assert sum(map(sum, agreement["confusion"]["counts"])) == 40
    overall = doc["estimates"]["mean_grade"][0]
    assert overall["group"] == "all" and overall["labelled"] == 40
    for name in ("ppi", "judge_only", "human_only"):
        low, high = overall[name]["ci"]
        assert low <= overall[name]["estimate"] <= high
    assert overall["ppi"]["estimate"] < overall["judge_only"]["estimate"]  # the bias is taken out
    assert {s["measure"] for s in doc["estimates"]["slopes"]} == {"P", "R", "nDCG"}
    assert doc["run_record"]["command"] == "ragdiag calibrate" and doc["suggested"] is None


def test_weighted_kappa_matches_sklearn():
    from sklearn.metrics import cohen_kappa_score

    from ragdiag.evaluate.agreement import judge_human_agreement

    rng = np.random.default_rng(0)
    human = rng.integers(1, 6, 200)
    judge = np.clip(human + rng.integers(-2, 3, 200), 1, 5)
    ours = judge_human_agreement(judge.astype(float), human.astype(float))["kappa_quadratic"]
    assert ours == pytest.approx(cohen_kappa_score(judge, human, weights="quadratic", labels=[1, 2, 3, 4, 5]))


def test_suggest_writes_a_sheet_that_reads_back_as_is(files, tmp_path):
    sheet = tmp_path / "to_label.csv"
    result = _run("--graded", files["graded"], "--suggest", 12, "--sheet", sheet)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(sheet.open()))
    assert len(rows) == 12 and list(rows[0]) == ["question", "ideal_answer", "candidate_answer", "id", "E", "K",
                                                 "Nc", "Np", "grade"]
    assert all(r["grade"] == "" for r in rows)
    again = _run("--graded", files["graded"], "--suggest", 3, "--sheet", sheet)
    assert again.exit_code == 2 and "never overwritten" in again.output and len(list(csv.reader(sheet.open()))) == 13
    for row in rows[:11]:
        row["grade"] = "3"
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    back = _run("--graded", files["graded"], "--human", sheet)
    assert back.exit_code == 0, back.output
    assert "11 with a human grade" in " ".join(back.stdout.split())  # the header wraps in a narrow terminal


def test_suggest_picks_the_most_uncertain_items(files, tmp_path):
    from ragdiag.commands.calibrate import CalibrateRequest, run

    sheet = tmp_path / "pick.csv"
    result = run(CalibrateRequest(files["graded"], files["human"], suggest=5, sheet=sheet))
    labelled = {(r["id"], r["E"], r["K"], r["Nc"], r["Np"]) for r in map(json.loads, files["human"].read_text().splitlines())}
    spread = sorted((float(np.std(r["grades"], ddof=1)) for r in files["records"]
                     if (r["id"], r["E"], r["K"], r["Nc"], r["Np"]) not in labelled), reverse=True)
    assert result.suggested.uncertainty == pytest.approx(spread[:5])
    assert result.suggested.signal == "SD of repeated grades" and len(list(csv.reader(sheet.open()))) == 6


@pytest.mark.parametrize("rows, message", [
    ([{"grade": 6}], "outside the integer grades 1–5"),
    ([{"id": "nope"}], "is not in the graded file"),
    ([{"grade": None}], "no overlap"),
    ([{}] * 1, "needs at least 10"),
])
def test_bad_human_files_are_one_line_and_write_nothing(files, tmp_path, rows, message):
    base = {k: files["records"][0][k] for k in ("id", "E", "K", "Nc", "Np")} | {"grade": 3}
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps(base | row) + "\n" for row in rows))
    out, sheet = tmp_path / "calib.json", tmp_path / "sheet.csv"
    result = _run("--graded", files["graded"], "--human", human, "--out", out, "--suggest", 2, "--sheet", sheet)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error:") and message in lines[0]
    assert not out.exists() and not sheet.exists()


def test_no_uncertainty_signal_is_said(tmp_path):
    records = [r for r in synthetic_graded(n_queries=4, seed=1, keep=1.0) if r["grade"] is not None]
    graded = tmp_path / "plain.json"
    graded.write_text(json.dumps(records))
    result = _run("--graded", graded, "--suggest", 3, "--sheet", tmp_path / "s.csv")
    assert result.exit_code == 2 and "no judge uncertainty signal" in result.output
    assert not (tmp_path / "s.csv").exists()


def test_ppi_covers_the_true_mean_where_a_biased_judge_does_not():
    """200 seeded runs: human grades from a known distribution (mean 3.25), a judge biased by +0.6
    with noise; 100 labelled and 1000 unlabelled items, α = 0.1."""
    from ragdiag.metrics.ppi_estimates import mean_estimates

    probs = np.array([0.10, 0.15, 0.30, 0.30, 0.15])
    true_mean = float(np.arange(1, 6) @ probs)
    runs, labelled, unlabelled = 200, 100, 1000
    ppi_hits = judge_hits = 0
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        human = rng.choice(np.arange(1, 6), size=labelled + unlabelled, p=probs).astype(float)
        judge = np.clip(human + 0.6 + rng.normal(0, 0.7, human.size), 1, 5)
        result = mean_estimates(human[:labelled], judge[:labelled], judge[labelled:], alpha=0.1)
        ppi_hits += result["ppi"]["ci"][0] <= true_mean <= result["ppi"]["ci"][1]
        judge_hits += result["judge_only"]["ci"][0] <= true_mean <= result["judge_only"]["ci"][1]
    print(f"\nPPI 90% interval covers the true mean {true_mean} in {ppi_hits / runs:.1%} of {runs} seeded runs; "
          f"judge-only in {judge_hits / runs:.1%}")
    assert ppi_hits / runs >= 0.88
    assert judge_hits / runs < 0.2


def test_report_shows_the_trust_panels(files, tmp_path):
    calib, corr, page = tmp_path / "calib.json", tmp_path / "corr.json", tmp_path / "report.html"
    assert _run("--graded", files["graded"], "--human", files["human"], "--out", calib).exit_code == 0
    result = runner.invoke(app, ["correlate", "--graded", str(files["graded"]), "--segments", "pooled", "--min-samples",
                                 "20", "--alpha-grid", "l30^0.8", "--bootstrap", "20", "--format", "json",
                                 "--out", str(corr)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["report", str(calib), str(corr), "--out", str(page)]).exit_code == 0
    text = page.read_text()
    assert text.count("How far to trust this") == 2
    assert "within one grade" in text and "PPI (judge + humans)" in text and "ICC(1,k)" in text
    assert "joint resamples" in text


def test_suggest_ranks_by_the_entropy_of_grade_probs_when_present(files, tmp_path):
    from ragdiag.commands.calibrate import CalibrateRequest, run

    records = json.loads(files["graded"].read_text())
    peaked, flat = [0.0, 0.0, 0.05, 0.9, 0.05], [0.2, 0.2, 0.2, 0.2, 0.2]
    for number, record in enumerate(records):
        record["grade_probs"] = flat if number % 10 == 0 else peaked
    graded = tmp_path / "probs.json"
    graded.write_text(json.dumps(records))
    result = run(CalibrateRequest(graded, suggest=3, sheet=tmp_path / "s.csv"))
    assert result.suggested.signal == "entropy of grade_probs"
    assert result.suggested.uncertainty == pytest.approx([np.log(5)] * 3)
    picked = [row["id"] for row in csv.DictReader((tmp_path / "s.csv").open())]
    flat_ids = {r["id"] for n, r in enumerate(records) if n % 10 == 0}
    assert set(picked) <= flat_ids


def test_rows_graded_against_a_degenerate_ideal_answer_are_left_out_unless_kept(files, tmp_path):
    """As correlate: a row whose ideal answer is a refusal (``grade --keep-degenerate`` graded it and
    kept the flag) does not enter the agreement or the estimates; --keep-degenerate uses it."""
    records = json.loads(files["graded"].read_text())
    refused = {r["id"] for r in records[:2]}
    for record in records:
        record["answer_ideal"] = "The references are insufficient to answer the question." if record["id"] in refused \
            else f"An answer about {record['id']}."
    graded = tmp_path / "graded.json"
    graded.write_text(json.dumps(records))
    left_out = sum(r["id"] in refused for r in records)
    out = tmp_path / "calib.json"
    result = _run("--graded", graded, "--human", files["human"], "--out", out)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    gate = doc["meta"]["reference_gate"]
    assert gate["excluded_rows"] == gate["degenerate_rows"] == left_out > 0 and gate["by_kind"] == {"refusal": left_out}
    assert doc["meta"]["items"] == len(records) - left_out
    assert f"{left_out} of {len(records)} graded rows have a degenerate ideal answer (refusal {left_out})" in \
        result.stdout.replace("\n", " ")
    kept = tmp_path / "kept.json"
    result = _run("--graded", graded, "--human", files["human"], "--out", kept, "--keep-degenerate")
    assert result.exit_code == 0, result.output
    doc = json.loads(kept.read_text())
    assert doc["meta"]["items"] == len(records) and doc["meta"]["reference_gate"]["kept"] is True


REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-llm-answers"


@pytest.mark.skipif(not (REAL / "msmarco.graded.json").exists(), reason=f"real model answers absent: {REAL}")
def test_real_prompt_echo_ideal_answers_are_left_out_as_correlate_does(tmp_path):
    """On a 1.5B model's MS MARCO run (SOURCE.md there) one ideal answer echoes the prompt: its 2 rows
    are left out, as correlate leaves them out. The "human" file here is only the judge's own grades,
    rounded — a mechanics check, not an agreement measurement."""
    graded = REAL / "msmarco.graded.json"
    rows = [r for r in json.loads(graded.read_text()) if r.get("grade") is not None]
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({k: r[k] for k in ("id", "E", "K", "Nc", "Np")}
                                        | {"grade": int(min(5, max(1, round(r["grade"]))))}) + "\n" for r in rows))
    out = tmp_path / "calib.json"
    result = _run("--graded", graded, "--human", human, "--out", out)
    assert result.exit_code == 0, result.output
    meta = json.loads(out.read_text())["meta"]
    assert meta["reference_gate"]["by_kind"] == {"prompt_echo": 2} and meta["items"] == len(rows) - 2
