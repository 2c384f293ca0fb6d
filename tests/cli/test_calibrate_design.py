"""``calibrate --suggest N --strategy uniform|stratified|active`` (issue 43): the sheet records how each
item was drawn, the filled sheet gives the design's estimate next to classical and PPI++, and bad
sheets or options are one line, exit 2, nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.metrics import ppi_designs as pd
from tools.synthetic import synthetic_graded

runner = CliRunner()
DESIGN = ["strategy", "strata", "stratum", "sampling_probability", "seed"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    """A graded file judged three times per row (bias +0.7) with a ``topic`` column, and its truth."""
    folder = tmp_path_factory.mktemp("design")
    rng = np.random.default_rng(5)
    records = [r for r in synthetic_graded(n_queries=5, seed=2, keep=0.9) if r["grade"] is not None]
    truth = {}
    for index, record in enumerate(records):
        truth[(record["id"], record["E"], str(record["K"]), str(record["Nc"]), str(record["Np"]))] = \
            int(round(record["grade"]))
        grades = np.clip(np.round(record["grade"] + 0.7 + rng.normal(0, 0.8, 3)), 1, 5).astype(int).tolist()
        record["grades"], record["grade"] = grades, float(np.mean(grades))
        record["topic"] = "ab"[index % 2]
    graded = folder / "graded.json"
    graded.write_text(json.dumps(records))
    return {"graded": graded, "truth": truth, "records": records}


def _run(*args):
    return runner.invoke(app, ["calibrate", *map(str, args)])


def _suggest(files, tmp_path, strategy, n=40, *extra, name="") -> list[dict]:
    sheet = tmp_path / f"{strategy}{name}.csv"
    done = _run("--graded", files["graded"], "--suggest", n, "--strategy", strategy, "--sheet", sheet, "--seed", 3,
                *extra)
    assert done.exit_code == 0, done.output
    said = " ".join(done.stdout.split())
    assert f"drawn {strategy}" in said and "seed 3" in said
    return list(csv.DictReader(sheet.open()))


def _fill(files, rows, path: Path) -> Path:
    for row in rows:
        row["grade"] = files["truth"][(row["id"], row["E"], row["K"], row["Nc"], row["Np"])]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_uniform_sheet_records_probability_strategy_and_seed(files, tmp_path):
    rows = _suggest(files, tmp_path, "uniform")
    assert len(rows) == 40 and list(rows[0])[-6:] == ["grade", *DESIGN]
    size = len(files["records"])
    assert {(r["strategy"], r["seed"], float(r["sampling_probability"])) for r in rows} == {("uniform", "3", 40 / size)}
    again = _suggest(files, tmp_path, "uniform", name="again")
    assert [r["id"] for r in again] == [r["id"] for r in rows]  # the seed fixes the draw


def test_stratified_by_grade_allocates_and_records_each_stratum(files, tmp_path):
    rows = _suggest(files, tmp_path, "stratified")
    judge = {(r["id"], r["E"], str(r["K"]), str(r["Nc"]), str(r["Np"])): r["grade"] for r in files["records"]}
    sizes: dict[str, int] = {}
    for grade in judge.values():
        sizes[str(int(np.floor(grade + 0.5)))] = sizes.get(str(int(np.floor(grade + 0.5))), 0) + 1
    counts = {h: sum(r["stratum"] == h for r in rows) for h in sizes}
    assert len(rows) == 40 and min(counts.values()) >= 2 and set(counts) == set(sizes)
    for row in rows:
        key = (row["id"], row["E"], row["K"], row["Nc"], row["Np"])
        assert row["stratum"] == str(int(np.floor(judge[key] + 0.5)))
        assert float(row["sampling_probability"]) == pytest.approx(counts[row["stratum"]] / sizes[row["stratum"]])


def test_filled_stratified_sheet_gives_stratified_ppi_next_to_classical_and_ppi(files, tmp_path):
    rows = _suggest(files, tmp_path, "stratified", 60, "--strata-col", "topic")
    _fill(files, rows, tmp_path / "f.csv")
    out = tmp_path / "o.json"
    done = _run("--graded", files["graded"], "--human", tmp_path / "f.csv", "--out", out)
    assert done.exit_code == 0, done.output
    assert "stratified PPI++" in done.stdout and "PPI++ (as if a uniform draw)" in done.stdout
    design = json.loads(out.read_text())["design"]
    assert design["strategy"] == "stratified" and design["strata"] == "column:topic" and design["seed"] == 3
    assert [p["stratum"] for p in design["per_stratum"]] == ["a", "b"] and design["labelled"] == 60
    # the same numbers from the library on the same arrays
    truth, records = files["truth"], files["records"]
    keys = [(r["id"], r["E"], str(r["K"]), str(r["Nc"]), str(r["Np"])) for r in records]
    labelled = {(r["id"], r["E"], r["K"], r["Nc"], r["Np"]) for r in rows}
    lab = [i for i, k in enumerate(keys) if k in labelled]
    unl = [i for i, k in enumerate(keys) if k not in labelled]
    judge = np.array([r["grade"] for r in records])
    topic = np.array([r["topic"] for r in records])
    expected = pd.stratified_ppi_mean(np.array([truth[keys[i]] for i in lab], dtype=float), judge[lab], judge[unl],
                                      topic[lab], topic[unl], 0.1)
    assert [design["design"]["estimate"], *design["design"]["ci"]] == pytest.approx(list(expected))
    assert design["ppi"] == json.loads(out.read_text())["estimates"]["mean_grade"][0]["ppi"]
    assert "treat the labels as a uniform draw" in design["note"]  # --by groups and slopes are not the design's


def test_active_sheet_and_its_ipw_estimate(files, tmp_path):
    rows = _suggest(files, tmp_path, "active")
    pis = np.array([float(r["sampling_probability"]) for r in rows])
    assert 25 <= len(rows) <= 60 and np.all((pis > 0) & (pis <= 1))
    _fill(files, rows, tmp_path / "f.csv")
    out = tmp_path / "o.json"
    done = _run("--graded", files["graded"], "--human", tmp_path / "f.csv", "--out", out)
    assert done.exit_code == 0, done.output
    design = json.loads(out.read_text())["design"]
    records, truth = files["records"], files["truth"]
    by_key = {(r["id"], r["E"], str(r["K"]), str(r["Nc"]), str(r["Np"])): r["grade"] for r in records}
    keys = [(r["id"], r["E"], r["K"], r["Nc"], r["Np"]) for r in rows]
    expected = pd.active_ppi_mean(np.array([truth[k] for k in keys], dtype=float), np.array([by_key[k] for k in keys]),
                                  np.array([r["grade"] for r in records]), pis, 0.1)
    assert [design["design"]["estimate"], *design["design"]["ci"]] == pytest.approx(list(expected))
    assert design["strategy"] == "active" and "active (IPW PPI++)" in done.stdout
    html = tmp_path / "report.html"
    shown = runner.invoke(app, ["report", str(out), "--out", str(html)])
    assert shown.exit_code == 0, shown.output
    assert "by the sheet&#x27;s design: active" in html.read_text() or "by the sheet's design: active" in html.read_text()


def _bad(files, tmp_path, rows, edit) -> str:
    edit(rows)
    sheet = _fill(files, rows, tmp_path / "bad.csv")
    out = tmp_path / "never.json"
    done = _run("--graded", files["graded"], "--human", sheet, "--out", out)
    lines = done.output.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1 and lines[0].startswith("ragdiag: error:"), done.output
    assert not out.exists()
    return lines[0]


def test_a_missing_or_zero_probability_is_refused(files, tmp_path):
    rows = _suggest(files, tmp_path, "active")
    assert "'sampling_probability': missing" in _bad(files, tmp_path, rows, lambda r: r[1].update(
        sampling_probability=""))
    rows = _suggest(files, tmp_path, "active", name="zero")
    assert "outside (0, 1]" in _bad(files, tmp_path, rows, lambda r: r[2].update(sampling_probability="0"))


def test_a_stratum_of_one_label_and_a_grade_outside_the_scale_are_refused(files, tmp_path):
    rows = _suggest(files, tmp_path, "stratified", 40, "--strata-col", "topic")

    def one_left(rows):
        for row in [r for r in rows if r["stratum"] == "a"][1:]:
            rows.remove(row)

    assert "stratum 'a' has 1 labelled item" in _bad(files, tmp_path, rows, one_left)
    rows = _suggest(files, tmp_path, "uniform", name="scale")
    sheet = _fill(files, rows, tmp_path / "g.csv")
    text = sheet.read_text().splitlines()
    cells = next(csv.reader([text[1]]))
    cells[8] = "7"
    with sheet.open("w", newline="") as handle:
        csv.writer(handle).writerows([next(csv.reader([text[0]])), cells, *csv.reader(text[2:])])
    done = _run("--graded", files["graded"], "--human", sheet, "--out", tmp_path / "n.json")
    assert done.exit_code == 2 and "outside the integer grades 1–5" in done.output
    assert not (tmp_path / "n.json").exists()


@pytest.mark.parametrize("args, message", [
    (["--suggest", 100000, "--strategy", "uniform"], "give --suggest 1 to"),
    (["--suggest", 3, "--strategy", "stratified"], "too few for 5 strata"),
    (["--suggest", 10, "--strategy", "stratified", "--strata-col", "nope"], "--strata-col nope"),
    (["--suggest", 10, "--strategy", "active", "--strata-by", "disagreement"], "only apply with --strategy stratified"),
    (["--strategy", "active"], "give --suggest N too"),
    (["--suggest", 10, "--strata-col", "topic"], "only apply with --strategy stratified"),
])
def test_bad_options_are_one_line_and_write_nothing(files, tmp_path, args, message):
    sheet = tmp_path / "s.csv"
    done = _run("--graded", files["graded"], "--sheet", sheet, *args)
    lines = done.output.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1 and message in lines[0], done.output
    assert not sheet.exists()


def test_strategy_with_human_labels_is_refused(files, tmp_path):
    rows = _fill(files, _suggest(files, tmp_path, "uniform"), tmp_path / "f.csv")
    assert rows
    done = _run("--graded", files["graded"], "--human", tmp_path / "f.csv", "--suggest", 5, "--strategy", "uniform",
                "--sheet", tmp_path / "next.csv")
    assert done.exit_code == 2 and "without --human" in done.output and not (tmp_path / "next.csv").exists()


def test_stratified_by_disagreement(files, tmp_path):
    rows = _suggest(files, tmp_path, "stratified", 30, "--strata-by", "disagreement")
    assert {r["strata"] for r in rows} == {"disagreement"} and {r["stratum"] for r in rows} <= {"agree", "near", "far"}
