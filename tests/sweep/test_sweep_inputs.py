"""Bad input to ``ragdiag sweep``: one line, exit 2, before any embedding or LLM call."""

from __future__ import annotations

import json
import shutil

import pytest

IVF = "ivf:nlist=16,nprobe=1|4"


def _copy(corpus, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(corpus, folder)
    return folder


def _one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), res.output
    return lines[0]


@pytest.mark.parametrize("row, expected", [
    ("q0\tnot-a-doc\t1", "document 'not-a-doc' (judged for query 'q0') is not in"),
    ("q-unknown\td1\t1", "query 'q-unknown' is not in"),
])
def test_qrels_naming_unknown_documents_or_queries(tmp_path, corpus, sweep_cli, servers, row, expected):
    folder = _copy(corpus, tmp_path)
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text() + row + "\n")
    before = (servers[0].requests, servers[1].requests)
    line = _one_line_error(sweep_cli("--corpus", folder, "--index", IVF, "--out-dir", tmp_path / "o"))
    assert expected in line
    assert (servers[0].requests, servers[1].requests) == before  # refused before any embedding or LLM call


def test_no_overlap_between_queries_and_qrels(tmp_path, corpus, sweep_cli):
    folder = _copy(corpus, tmp_path)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nz1\td1\t1\n")
    line = _one_line_error(sweep_cli("--corpus", folder, "--index", IVF, "--out-dir", tmp_path / "o"))
    assert "no query of" in line and "is judged" in line


def test_trec_qrels_are_read(tmp_path, corpus, sweep_cli):
    folder = _copy(corpus, tmp_path)
    beir = (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]
    trec = folder / "qrels.trec"
    trec.write_text("".join(f"{q} 0 {d} {s}\n" for q, d, s in (row.split("\t") for row in beir)))
    res = sweep_cli("--corpus", folder / "corpus.jsonl", "--queries", folder / "queries.jsonl", "--qrels", trec,
                    "--index", "ivf:nlist=16,nprobe=16", "--k", "5", "--max-queries", "3", "--out-dir", tmp_path / "o",
                    "--bootstrap", "100")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "o" / "sweep.json").is_file()


@pytest.mark.parametrize("args, expected", [
    (["--index", "hnsw:M=abc"], "M='abc' is not an integer"),
    (["--index", "lsh:bits=8"], "unknown kind 'lsh'"),
    (["--index", IVF, "--k", "301"], "--k 301 is larger than the 300 passages"),
    (["--index", IVF, "--controls", "gold,empty"], "--controls must include exact"),
    (["--index", IVF, "--controls", "exact,oracle"], "unknown control 'oracle'"),
    (["--index", IVF, "--delta", "0,0.5"], "every δ must be in (0, 1]"),
    (["--index", IVF, "--batch", "openai"], "sweep does not take --batch"),
])
def test_bad_options(tmp_path, corpus, sweep_cli, servers, args, expected):
    before = (servers[0].requests, servers[1].requests)
    line = _one_line_error(sweep_cli("--corpus", corpus, *args, "--out-dir", tmp_path / "o"))
    assert expected in line
    assert (servers[0].requests, servers[1].requests) == before


def test_numeric_ranges_are_checked_by_the_cli(tmp_path, corpus, sweep_cli):
    for args in (["--bootstrap", "-1"], ["--max-drop", "-1"], ["--max-calls", "-3"], ["--k", "0"]):
        res = sweep_cli("--corpus", corpus, "--index", IVF, *args, "--out-dir", tmp_path / "o")
        assert res.exit_code == 2, (args, res.output)


def test_bootstrap_zero_gives_null_intervals_and_one_to_99_work(tmp_path, corpus, sweep_cli):
    """--bootstrap 0: every interval null, the tables say so, no recommendation (its test needs the
    interval); a few resamples (here 10) give intervals (issue 17: [0, 1000000], 0 = no intervals)."""
    res = sweep_cli("--corpus", corpus, "--index", IVF, "--max-queries", "6", "--out-dir", tmp_path / "o",
                    "--bootstrap", "0")
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o" / "sweep.json").read_text())
    assert doc["meta"]["bootstrap"] == 0
    for point in doc["points"]:
        assert point["recall_mean_ci"] is None and set(point["robustness_ci"].values()) == {None}
        assert point["grade_ci"] is None and point["grade_diff_vs_exact"]["ci"] is None
    assert all(c["grade_ci"] is None for c in doc["controls"])
    assert all(c["ci"] is None for c in doc["delta_calibration"])
    assert all(b["accuracy_ci"] is None for b in doc["relative_accuracy"]["buckets"])
    assert doc["recommendation"]["point"] is None and "--bootstrap 0" in doc["recommendation"]["reason"]
    assert "no intervals (--bootstrap 0)" in " ".join(res.stdout.split())
    few = sweep_cli("--corpus", corpus, "--index", IVF, "--max-queries", "6", "--out-dir", tmp_path / "few",
                    "--bootstrap", "10")
    assert few.exit_code == 0, few.output
    points = json.loads((tmp_path / "few" / "sweep.json").read_text())["points"]
    assert all(len(p["recall_mean_ci"]) == 2 for p in points)
