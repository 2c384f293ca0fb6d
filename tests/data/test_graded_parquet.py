"""The Parquet graded table: same arrays and correlations as the JSON file, and one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragdiag.data.graded_parquet import graded_arrow_table
from ragdiag.data.loaders import load_graded_file
from ragdiag.errors import DataError
from ragdiag.io.writer import write_parquet
from ragdiag.metrics.analysis import CorrelateOptions
from ragdiag.metrics.correlate_job import run_correlation
from tools.synthetic import synthetic_graded

ARRAYS = ("query", "embedder", "subset", "Nc", "Np", "K", "n", "in_k", "grade")


@pytest.fixture()
def records() -> list[dict]:
    rows = synthetic_graded(n_queries=30, seed=3, embedders=("AM", "QM", "EM"))
    rows[5]["grade"] = None  # skipped and counted on both paths
    rows[7]["grade"] = 2.5  # a mean of repeats
    rows[9]["judges"] = {"m": [3]}  # an extra key: kept as JSON text
    return rows


def _both(tmp_path: Path, records: list[dict]):
    json_path, parquet_path = tmp_path / "g.json", tmp_path / "g.parquet"
    json_path.write_text(json.dumps(records))
    write_parquet(parquet_path, graded_arrow_table(records))
    return load_graded_file(json_path), load_graded_file(parquet_path)


def test_parquet_gives_the_json_arrays(tmp_path, records):
    from_json, from_parquet = _both(tmp_path, records)
    for name in ARRAYS:
        a, b = getattr(from_json, name), getattr(from_parquet, name)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name
    for name in ("query_names", "embedder_names", "subset_names", "skipped_missing_grade"):
        assert getattr(from_json, name) == getattr(from_parquet, name)
    assert from_parquet.skipped_missing_grade == 1


def test_identical_correlations(tmp_path, records):
    from_json, from_parquet = _both(tmp_path, records)
    opts = CorrelateOptions(segments="ratio", min_samples=20, measures=("F", "E", "T", "nDCG"),
                            kinds=("spearman", "pearson"))
    a, b = (run_correlation(t, opts).to_json() for t in (from_json, from_parquet))
    assert a["results"] and a["results"] == b["results"]


def test_extra_keys_are_json_text(tmp_path, records):
    path = tmp_path / "g.parquet"
    write_parquet(path, graded_arrow_table(records))
    table = pq.read_table(path)
    assert json.loads(table.column("judges")[9].as_py()) == {"m": [3]}
    assert table.column("grade").type == pa.float64() and table.column("grade")[5].as_py() is None


def _write(path: Path, columns: dict) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def _good() -> dict:
    return {"id": ["M-1", "M-2"], "E": ["a", "a"], "Nc": [5, 5], "Np": [2, 2], "K": [2, 3],
            "inK": [[1, 0], [0, 1, 1]], "grade": [3.0, None]}


@pytest.mark.parametrize("change, message", [
    (lambda c: c.pop("inK"), "column 'inK' is missing"),
    (lambda c: c.update(K=["2", "3"]), "column 'K' has type string, expected an integer"),
    (lambda c: c.update(grade=["3", "4"]), "column 'grade' has type string"),
    (lambda c: c.update(inK=[[1, 0], [0, 1]]), "record 2: field 'inK': has 2 items but K = 3"),
    (lambda c: c.update(inK=[[1, 2], [0, 1, 1]]), "record 1: field 'inK': items must be 0 or 1"),
    (lambda c: c.update(grade=[3.0, 6.0]), "record 2: field 'grade': 6.0 is not a finite grade"),
    (lambda c: c.update(grade=[3.0, float("nan")]), "record 2: field 'grade': NaN is not a grade"),
    (lambda c: c.update(Np=[2, None]), "record 2: field 'Np': missing (null)"),
    (lambda c: c.update(id=["M-1", "M-1"], K=[2, 2], inK=[[1, 0], [1, 0]]), "records 1 and 2 are the same sample"),
])
def test_bad_columns_name_the_problem(tmp_path, change, message):
    columns = _good()
    change(columns)
    with pytest.raises(DataError, match=re.escape(message)):
        load_graded_file(_write(tmp_path / "bad.parquet", columns))


def test_good_small_table(tmp_path):
    table = load_graded_file(_write(tmp_path / "ok.parquet", _good()))
    assert len(table) == 1 and table.skipped_missing_grade == 1 and table.n.tolist() == [1]


def test_not_parquet_and_truncated(tmp_path):
    (tmp_path / "text.parquet").write_text("id,grade\n")
    with pytest.raises(DataError, match="text.parquet: not a readable Parquet file"):
        load_graded_file(tmp_path / "text.parquet")
    good = _write(tmp_path / "ok.parquet", _good())
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(DataError, match="cut.parquet: not a readable Parquet file"):
        load_graded_file(cut)


def test_metric_table_parquet_matches_csv(tmp_path):
    """``correlate --table``: the columnar Parquet reader keeps and skips the rows the CSV reader does."""
    from ragdiag.data.metric_table import load_metric_table

    rng = np.random.default_rng(0)
    rows = [{"qid": f"q{i}", "sys": "ab"[i % 2], "grade": float(rng.integers(1, 6)), "ndcg": float(rng.random()),
             "recall": None if i % 7 == 0 else float(rng.random())} for i in range(60)]
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("qid,sys,grade,ndcg,recall\n" + "".join(
        f"{r['qid']},{r['sys']},{r['grade']!r},{r['ndcg']!r},{'' if r['recall'] is None else repr(r['recall'])}\n"
        for r in rows))
    parquet_path = _write(tmp_path / "t.parquet", {k: [r[k] for r in rows] for k in rows[0]})
    a, b = (load_metric_table(p, "grade", ["ndcg", "recall"], "sys", "qid") for p in (csv_path, parquet_path))
    assert a.skipped == b.skipped == 9
    assert np.array_equal(a.grade, b.grade) and list(a.group) == list(b.group) and list(a.ids) == list(b.ids)
    assert all(np.array_equal(a.measures[c], b.measures[c]) for c in ("ndcg", "recall"))
    with pytest.raises(DataError, match="field 'qid': has type string, expected numbers"):
        load_metric_table(parquet_path, "grade", ["qid"])
    with pytest.raises(DataError, match="field 'nope': no such column"):
        load_metric_table(parquet_path, "grade", ["nope"])


def test_evaluate_answers_parquet_matches_json(tmp_path):
    """``evaluate --answers graded.parquet``: the same stage attribution as the JSON file."""
    from typer.testing import CliRunner

    from ragdiag.cli import app

    fix = Path(__file__).resolve().parents[2] / "fixtures" / "graded-utility"
    records = json.loads((fix / "graded.json").read_text())
    parquet = tmp_path / "graded.parquet"
    pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in ("id", "E", "K", "grade")} for r in records]), parquet)
    results = []
    for answers in (fix / "graded.json", parquet):
        out = tmp_path / f"{answers.suffix[1:]}.json"
        res = CliRunner().invoke(app, ["evaluate", "--run", str(fix / "bm25.jsonl"), "--run", str(fix / "dense.trec"),
                                       "--qrels", str(fix / "qrels.tsv"), "--k", "2", "--pool-depth", "5",
                                       "--answers", str(answers), "--format", "json", "--out", str(out)])
        assert res.exit_code == 0, res.output
        results.append([r["attribution"] for r in json.loads(out.read_text())["runs"]])
    assert results[0][0]["by_k"] and [
        {**a, "answers": None} for a in results[0]] == [{**a, "answers": None} for a in results[1]]
    pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in ("id", "E", "K", "grade")} for r in records * 2]),
                   parquet)
    res = CliRunner().invoke(app, ["evaluate", "--run", str(fix / "bm25.jsonl"), "--qrels", str(fix / "qrels.tsv"),
                                   "--k", "2", "--answers", str(parquet)])
    assert res.exit_code == 2 and "two answers for query" in res.output


def test_small_batches_give_the_same_table_and_row_numbers(tmp_path, records, monkeypatch):
    """Read in batches of 7 rows: codes merged across batches, errors numbered over the whole file."""
    from ragdiag.data import graded_parquet

    monkeypatch.setattr(graded_parquet, "_BATCH_ROWS", 7)
    from_json, from_parquet = _both(tmp_path, records)
    for name in ARRAYS:
        assert np.array_equal(getattr(from_json, name), getattr(from_parquet, name), equal_nan=True), name
    assert from_json.query_names == from_parquet.query_names
    bad = [dict(r) for r in records]
    bad[30]["inK"] = [2] + bad[30]["inK"][1:]
    write_parquet(tmp_path / "bad.parquet", graded_arrow_table(bad))
    with pytest.raises(DataError, match=re.escape("bad.parquet: record 31: field 'inK': items must be 0 or 1")):
        load_graded_file(tmp_path / "bad.parquet")


def test_ndcg_in_row_blocks_has_the_same_bits(records, monkeypatch):
    """nDCG is computed in row blocks (bounded memory at 10M rows); the floats equal one block's."""
    from ragdiag.data.graded_table import GradedSource, build_graded_table
    from ragdiag.measures import dcg
    from ragdiag.measures import sample as measures

    table = build_graded_table(records, "x", GradedSource("x"))
    whole = measures.ndcg(table.in_k, table.K, table.n)
    monkeypatch.setattr(dcg, "_ROWS", 7)  # the one DCG's row blocks
    assert np.array_equal(measures.ndcg(table.in_k, table.K, table.n), whole)


def test_correlate_cli_on_a_bad_parquet_file_is_one_line(tmp_path):
    from typer.testing import CliRunner

    from ragdiag.cli import app

    columns = _good()
    columns["K"] = ["2", "3"]
    bad = _write(tmp_path / "bad.parquet", columns)
    res = CliRunner().invoke(app, ["correlate", "--graded", str(bad)])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"ragdiag: error: {bad}: column 'K' has type string, expected an integer"]


@pytest.mark.parametrize("dense_max", [1 << 26, 8])
def test_dense_codes_are_np_unique(monkeypatch, dense_max):
    from ragdiag.data import codes

    monkeypatch.setattr(codes, "DENSE_MAX", dense_max)
    keys = np.random.default_rng(4).integers(0, 50, size=1000)
    uniques, inverse = codes.dense_codes(keys)
    expected, expected_inverse = np.unique(keys, return_inverse=True)
    assert np.array_equal(uniques, expected) and np.array_equal(inverse, expected_inverse.ravel())


def test_import_parquet_gives_the_json_correlation(tmp_path):
    """``ragdiag import ragas … --parquet`` writes graded.parquet; correlate on it equals graded.json."""
    from typer.testing import CliRunner

    from ragdiag.cli import app

    rows = []
    for i in range(40):
        hits = i % 4
        relevant = [f"relevant {i}-{j}" for j in range(3)]
        rows.append({"user_input": f"q{i}", "retrieved_contexts": relevant[:hits] + [f"other {i}-{j}" for j in range(4 - hits)],
                     "response": f"a{i}", "reference": f"r{i}", "reference_contexts": relevant, "score": hits / 3})
    src = tmp_path / "ragas.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    reports = []
    for name, extra in (("json", []), ("parquet", ["--parquet"])):
        out = tmp_path / name
        res = CliRunner().invoke(app, ["import", "ragas", str(src), "--out", str(out), *extra])
        assert res.exit_code == 0, res.output
        graded = out / ("graded.parquet" if extra else "graded.json")
        res = CliRunner().invoke(app, ["correlate", "--graded", str(graded), "--segments", "pooled", "--min-samples",
                                       "10", "--alpha-grid", "l30^0.8", "--format", "json"])
        assert res.exit_code == 0, res.output
        reports.append(json.loads(res.output)["results"])
    assert not (tmp_path / "parquet" / "graded.json").exists()
    assert reports[0] and reports[0] == reports[1]
