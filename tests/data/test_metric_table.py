"""Bring your own data: ``correlate --table`` reading CSV / JSONL / JSON / Parquet metric tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.metric_table import load_metric_table
from ragdiag.errors import DataError, RagdiagError
from ragdiag.metrics.table_correlation import TableOptions, correlate_table

runner = CliRunner()

# x = [1..5], y = [2, 1, 4, 3, 5]: d = [-1, 1, -1, 1, 0], Σd² = 4 → Spearman 1 − 6·4/(5·24) = 0.8;
# Pearson: cov 8 / √(10·10) = 0.8; Kendall: 8 concordant, 2 discordant of 10 pairs → τ = 0.6.
HAND = [{"qid": f"q{i}", "good": x, "bad": 6 - x, "grade": y} for i, (x, y) in enumerate(zip([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]))]


def _write_csv(path: Path, rows: list[dict]) -> Path:
    cols = list(rows[0])
    path.write_text(",".join(cols) + "\n" + "".join(",".join(str(r[c]) for c in cols) + "\n" for r in rows))
    return path


def test_hand_computed_correlations(tmp_path):
    table = load_metric_table(_write_csv(tmp_path / "t.csv", HAND), "grade", ["good", "bad"])
    out = correlate_table(table, TableOptions(min_samples=1))
    good = next(r for r in out["results"] if r["measure"] == "good")
    assert good["spearman"]["value"] == pytest.approx(0.8)
    assert good["pearson"]["value"] == pytest.approx(0.8)
    assert good["kendall_b"]["value"] == pytest.approx(0.6)
    bad = next(r for r in out["results"] if r["measure"] == "bad")
    assert bad["spearman"]["value"] == pytest.approx(-0.8)
    verdict = out["verdicts"][0]
    assert verdict["best"] == "good" and verdict["runner_up"] == "bad" and verdict["lead"] == pytest.approx(1.6)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_formats_agree_and_missing_values_are_skipped(tmp_path, suffix):
    rows = HAND + [{"qid": "q9", "good": None, "bad": 1, "grade": 3}, {"qid": "q10", "good": 2, "bad": 1, "grade": None}]
    path = tmp_path / f"t{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        _write_csv(path, [{k: ("" if v is None else v) for k, v in r.items()} for r in rows])
    table = load_metric_table(path, "grade", ["good"], id_col="qid")
    assert len(table) == 5 and table.skipped == 2
    assert list(table.ids) == ["q0", "q1", "q2", "q3", "q4"]


def test_parquet_through_pyarrow(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(HAND), path)
    table = load_metric_table(path, "grade", ["good"])
    out = correlate_table(table, TableOptions(min_samples=1, kinds=("spearman",)))
    assert out["results"][0]["spearman"]["value"] == pytest.approx(0.8)


def test_errors_name_the_column_and_row(tmp_path):
    path = _write_csv(tmp_path / "t.csv", HAND)
    with pytest.raises(DataError, match=r"field 'ndcg@10': no such column; columns present: qid, good, bad, grade"):
        load_metric_table(path, "grade", ["ndcg@10"])
    bad = _write_csv(tmp_path / "b.csv", HAND[:2] + [{**HAND[2], "good": "high"}])
    with pytest.raises(DataError, match=r"line 4: field 'good': not a number: 'high'"):
        load_metric_table(bad, "grade", ["good"])
    renamed = path.rename(tmp_path / "t.txt")  # another suffix: read by its content (issue 39)
    assert len(load_metric_table(renamed, "grade", ["good"])) == len(HAND)
    renamed.write_text("no table here\n")
    with pytest.raises(RagdiagError, match="unknown table format '.txt', and its content is no table"):
        load_metric_table(renamed, "grade", ["good"])


def _noisy(n: int = 200, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        good = float(rng.random())
        rows.append({"qid": f"q{i // 2}", "system": "a" if i % 2 else "b", "good": round(good, 4),
                     "noise": round(float(rng.random()), 4), "grade": int(np.clip(round(1 + 4 * good), 1, 5))})
    return rows


def test_bootstrap_intervals_paired_lead_and_groups(tmp_path):
    path = _write_csv(tmp_path / "t.csv", _noisy())
    table = load_metric_table(path, "grade", ["good", "noise"], group_col="system", id_col="qid")
    out = correlate_table(table, TableOptions(bootstrap=40, seed=5, compare=("good", "noise")))
    assert {r["segment"] for r in out["results"]} == {"a", "b"}
    for row in out["results"]:
        low, high = row["spearman"]["ci"]
        assert low <= row["spearman"]["value"] <= high
    assert all(v["best"] == "good" and v["lead_holds"] == 1.0 for v in out["verdicts"])
    assert all(c["spearman"]["share_positive"] == 1.0 for c in out["comparisons"])
    again = correlate_table(table, TableOptions(bootstrap=40, seed=5, compare=("good", "noise")))
    assert again == out  # the seed fixes the resamples


def test_cli_table_path_and_small_groups(tmp_path):
    path = _write_csv(tmp_path / "t.csv", _noisy(60))
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["correlate", "--table", str(path), "--measure-cols", "good,noise", "--bootstrap", "20",
                                 "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["meta"]["measures"] == ["good", "noise"] and report["verdicts"][0]["best"] == "good"
    assert report["run_record"]["command"] == "ragdiag correlate"
    result = runner.invoke(app, ["correlate", "--table", str(path), "--measure-cols", "good", "--group-col", "system",
                                 "--min-samples", "31"])
    assert result.exit_code == 2
    assert "the largest, a, has 30: --min-samples 30 would keep it" in result.output
    result = runner.invoke(app, ["correlate", "--table", str(path)])
    assert result.exit_code == 2 and "--table needs --measure-cols" in result.output


def test_graded_only_options_are_refused_with_a_table(tmp_path):
    path = _write_csv(tmp_path / "t.csv", HAND)
    result = runner.invoke(app, ["correlate", "--table", str(path), "--measure-cols", "good", "--by", "config"])
    assert result.exit_code == 2 and "--by does not apply with --table" in result.output


@pytest.mark.parametrize("extra", [["--segments", "nw"], ["--measures", "F,T"], ["--alpha-grid", "l10^0.9"],
                                   ["--xk", "3"], ["--delta", "0.5"], ["--offline"], ["--hf-repo", "x/y"]])
def test_options_of_the_graded_path_are_refused_not_ignored_with_a_table(tmp_path, extra):
    path = _write_csv(tmp_path / "t.csv", HAND)
    result = runner.invoke(app, ["correlate", "--table", str(path), "--measure-cols", "good", *extra])
    assert result.exit_code == 2 and f"{extra[0]} does not apply with --table" in result.output


# ---------------------------------------------------------------- issue 18: readers that used to end in a traceback


def _table_cli(path: Path, *measures: str):
    return runner.invoke(app, ["correlate", "--table", str(path), "--measure-cols", ",".join(measures or ("good",)),
                               "--min-samples", "1", "--format", "json"])


def _one_line(result, *needles: str) -> None:
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith("ragdiag: error: ") and "Traceback" not in result.output
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json"])
def test_invalid_utf8_names_file_line_and_byte_offset(tmp_path, suffix):
    good = _write_csv(tmp_path / "t.csv", HAND)
    if suffix == ".tsv":
        data = good.read_bytes().replace(b",", b"\t")
    elif suffix == ".csv":
        data = good.read_bytes()
    elif suffix == ".jsonl":
        data = "".join(json.dumps(r) + "\n" for r in HAND).encode()
    else:
        data = json.dumps(HAND, indent=0).encode()
    lines = data.split(b"\n")
    lines[2] = lines[2][:3] + b"\xff" + lines[2][3:]
    data = b"\n".join(lines)
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(data)
    offset = data.index(b"\xff")
    _one_line(_table_cli(path), f"{path}: line 3: not UTF-8 text (byte offset {offset}: invalid start byte)")
    assert path.read_bytes() == data


def test_duplicate_headers_are_refused_naming_them(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("qid,good,grade,good,bad,bad\nq1,1,2,5,5,1\nq2,2,1,4,4,2\n")
    _one_line(_table_cli(path, "good", "bad"), f"{path}: line 1: the header repeats the column name(s) 'bad', 'good'")


def test_duplicate_parquet_columns_are_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([2, 1]), pa.array([5, 4])],
                                        names=["good", "grade", "good"]), path)
    _one_line(_table_cli(path), f"{path}: the table repeats the column name(s) 'good'")


def test_a_csv_cell_over_128_kib_is_read_and_one_over_the_cap_is_one_line(tmp_path, monkeypatch):
    long_answer = "word " * 60_000  # 300 kB: over Python's default csv field limit (131072)
    path = tmp_path / "long.csv"
    path.write_text("qid,good,grade,answer\n" + "".join(f'q{i},{r["good"]},{r["grade"]},"{long_answer}"\n'
                                                       for i, r in enumerate(HAND)))
    table = load_metric_table(path, "grade", ["good"])
    assert len(table) == len(HAND)
    from ragdiag.io import text_input

    monkeypatch.setattr(text_input, "CSV_FIELD_CAP", 200_000)
    import csv

    previous = csv.field_size_limit(200_000)
    try:
        _one_line(_table_cli(path), f"{path}: line 2: a cell is longer than 200,000 characters")
    finally:
        csv.field_size_limit(previous)


@pytest.mark.parametrize("damage, needle", [
    (lambda data: b"this is a CSV, not Parquet\n", "not a Parquet file (it does not start with the Parquet magic bytes PAR1)"),
    (lambda data: data[: len(data) // 2], "truncated Parquet file"),
    (lambda data: data[:4] + b"\0" * (len(data) - 8) + data[-4:], "corrupt or truncated Parquet file"),
    (lambda data: b"", "not a Parquet file"),
])
def test_a_parquet_file_that_is_not_parquet_or_is_cut_short(tmp_path, damage, needle):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(HAND), path)
    data = damage(path.read_bytes())
    path.write_bytes(data)
    _one_line(_table_cli(path), f"{path}: {needle}")
    assert path.read_bytes() == data


def test_deeply_nested_json_lines_are_one_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(HAND[0]) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    _one_line(_table_cli(path), str(path), "depth limit exceeded")
