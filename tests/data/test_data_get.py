"""``ragdiag data get|list`` through the real download code, against local mirrors in the hub's layout.

The hub is not reachable here, so each test writes a folder laid out like the hub repositories
(``BeIR/<name>`` with the ``corpus``/``queries`` configs declared in its README, ``BeIR/<name>-qrels``
with one TSV per split) and passes it as ``--source``: ``datasets.load_dataset`` reads it exactly as
it reads the hub. Real data (../shared/data) checks that the rows come out byte-identical to the
BEIR files the project already uses.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.beir import load_corpus, load_queries
from ragdiag.data.qrels_runs import read_qrels

runner = CliRunner(mix_stderr=False) if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters else CliRunner()
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
HUB_README = """---
configs:
- config_name: corpus
  data_files:
  - split: corpus
    path: corpus.{suffix}
- config_name: queries
  data_files:
  - split: queries
    path: queries.{suffix}
---
"""


def _mirror(root: Path, name: str, corpus: list[dict], queries: list[dict], qrels: dict[str, list[tuple]],
            parquet: bool = True) -> Path:
    """A local copy of BeIR/<name> and BeIR/<name>-qrels in the hub's layout (parquet, like the hub's converted
    files, or JSON lines like the original upload)."""
    repo, qrels_repo = root / "BeIR" / name, root / "BeIR" / f"{name}-qrels"
    repo.mkdir(parents=True)
    qrels_repo.mkdir(parents=True)
    suffix = "parquet" if parquet else "jsonl"
    for rows, stem in ((corpus, "corpus"), (queries, "queries")):
        if parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), repo / f"{stem}.parquet")
        else:
            (repo / f"{stem}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (repo / "README.md").write_text(HUB_README.format(suffix=suffix))
    for split, rows in qrels.items():
        (qrels_repo / f"{split}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows), encoding="utf-8")
    return root


def _tiny(root: Path, name: str = "scifact") -> Path:
    corpus = [{"_id": f"d{i}", "title": f"title {i}", "text": f"passage number {i}"} for i in range(6)]
    queries = [{"_id": f"q{i}", "text": f"question {i}"} for i in range(4)]
    qrels = {"test": [("q0", "d0", 1), ("q1", "d1", 1), ("q1", "d4", 1), ("q2", "d5", 1)],
             "train": [("q3", "d2", 1)]}
    return _mirror(root, name, corpus, queries, qrels)


def _get(*args: str):
    return runner.invoke(app, ["data", "get", *args])


def test_get_writes_the_beir_layout_that_ragdiag_reads_and_a_manifest(tmp_path):
    source, data = _tiny(tmp_path / "mirror"), tmp_path / "data"
    result = _get("scifact", "--dir", str(data), "--source", str(source))
    assert result.exit_code == 0, result.stderr
    folder = data / "scifact"
    assert f"scifact: fetched: {folder}" in result.stdout
    ids, texts = load_corpus(folder / "corpus.jsonl")
    assert ids == [f"d{i}" for i in range(6)] and texts[0] == "title 0 passage number 0"
    assert load_queries(folder / "queries.jsonl")[0] == ["q0", "q1", "q2", "q3"]
    assert read_qrels(folder / "qrels" / "test.tsv") == {"q0": {"d0": 1}, "q1": {"d1": 1, "d4": 1}, "q2": {"d5": 1}}
    assert read_qrels(folder / "qrels" / "train.tsv") == {"q3": {"d2": 1}}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["counts"] == {"corpus": 6, "queries": 4, "qrels/test.tsv": 4, "qrels/train.tsv": 1}
    assert set(manifest["files"]) == {"corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels/train.tsv"}
    assert manifest["run_record"]["command"] == "ragdiag data get"
    assert not [p for p in data.iterdir() if p.name.startswith(".")], "no staging folder left behind"
    umask = os.umask(0)
    os.umask(umask)
    assert folder.stat().st_mode & 0o777 == 0o777 & ~umask, "the folder gets the umask's mode, not mkdtemp's 0700"

    listed = runner.invoke(app, ["data", "list", "--dir", str(data), "--json"])
    entry = next(s for s in json.loads(listed.stdout)["sets"] if s["name"] == "scifact")
    assert (entry["state"], entry["counts"]["corpus"]) == ("ok", 6)

    again = _get("scifact", "--dir", str(data), "--source", str(source))
    assert again.exit_code == 0 and "already there, verified" in again.stdout


def test_a_changed_file_shows_in_list_and_get_asks_for_force(tmp_path):
    source, data = _tiny(tmp_path / "mirror"), tmp_path / "data"
    assert _get("scifact", "--dir", str(data), "--source", str(source)).exit_code == 0
    with open(data / "scifact" / "queries.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"_id": "extra", "text": "added by hand"}\n')
    listed = json.loads(runner.invoke(app, ["data", "list", "--dir", str(data), "--json"]).stdout)
    assert next(s for s in listed["sets"] if s["name"] == "scifact")["state"].startswith("changed queries.jsonl")
    refused = _get("scifact", "--dir", str(data), "--source", str(source))
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1 and "--force" in refused.stderr
    forced = _get("scifact", "--dir", str(data), "--source", str(source), "--force")
    assert forced.exit_code == 0, forced.stderr
    assert len(load_queries(data / "scifact" / "queries.jsonl")[0]) == 4


def test_sample_keeps_the_first_passages_and_only_queries_fully_judged_inside(tmp_path):
    source, data = _tiny(tmp_path / "mirror"), tmp_path / "data"
    result = _get("scifact", "--dir", str(data), "--source", str(source), "--sample", "3")
    assert result.exit_code == 0, result.stderr
    folder = data / "scifact"
    assert load_corpus(folder / "corpus.jsonl")[0] == ["d0", "d1", "d2"]
    # q1 also needs d4 (outside the sample) and q2 needs d5: both leave; q0 (test) and q3 (train) stay.
    assert read_qrels(folder / "qrels" / "test.tsv") == {"q0": {"d0": 1}}
    assert load_queries(folder / "queries.jsonl")[0] == ["q0", "q3"]
    assert "kept 1 of 3 queries" in result.stdout


@pytest.mark.parametrize("args, needle", [
    (["nosuchset"], "unknown dataset 'nosuchset'; known: scifact"),
    (["scifact", "--source", "/nonexistent/mirror"], "--source /nonexistent/mirror: not a folder"),
    (["scifact", "--sample", "-1"], "--sample"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, needle):
    result = _get(*args, "--dir", str(tmp_path / "data"))
    assert result.exit_code == 2 and needle in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "data").exists()


def test_no_network_is_one_line_naming_the_way_out(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # hub_reachable() answers False at once, as with no network
    monkeypatch.delenv("RAGDIAG_DATA_SOURCE", raising=False)
    result = _get("msmarco", "--dir", str(tmp_path / "data"))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "cannot reach the Hugging Face hub to fetch BeIR/msmarco" in result.stderr and "--source" in result.stderr
    assert not (tmp_path / "data" / "msmarco").exists()


def test_qrels_naming_a_missing_passage_is_refused_and_nothing_is_written(tmp_path):
    corpus = [{"_id": "d0", "title": "", "text": "one"}]
    source = _mirror(tmp_path / "mirror", "nfcorpus", corpus, [{"_id": "q0", "text": "q"}],
                     {"test": [("q0", "d0", 1), ("q0", "d9", 1)]}, parquet=False)
    result = _get("nfcorpus", "--dir", str(tmp_path / "data"), "--source", str(source))
    assert result.exit_code == 2
    assert "nfcorpus: qrels/test.tsv names query 'q0' / passage 'd9', not in the set" in result.stderr
    assert not (tmp_path / "data" / "nfcorpus").exists()


def test_msmarco_takes_its_dev_qrels_and_the_env_var_names_the_mirror(tmp_path, monkeypatch):
    corpus = [{"_id": str(i), "title": "", "text": f"passage {i}"} for i in range(5)]
    queries = [{"_id": "100", "text": "what"}, {"_id": "200", "text": "who"}, {"_id": "300", "text": "unjudged"}]
    source = _mirror(tmp_path / "mirror", "msmarco", corpus, queries,
                     {"dev": [("100", "1", 1), ("200", "4", 1)], "train": [("300", "0", 1)]})
    monkeypatch.setenv("RAGDIAG_DATA_SOURCE", str(source))
    monkeypatch.setenv("RAGDIAG_DATA", str(tmp_path / "data"))
    result = _get("msmarco", "--sample", "2")
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "data" / "msmarco"
    assert read_qrels(folder / "qrels" / "test.tsv") == {"100": {"1": 1}}  # 200's passage 4 is outside the sample
    assert load_queries(folder / "queries.jsonl")[0] == ["100"]
    assert json.loads((folder / "manifest.json").read_text())["sample"] == 2


@pytest.mark.skipif(not (SHARED / "scifact" / "corpus.jsonl").is_file(), reason="../shared/data/scifact not present")
def test_real_scifact_through_a_mirror_equals_the_beir_files(tmp_path):
    shared = SHARED / "scifact"
    corpus = [json.loads(line) for line in (shared / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(line) for line in (shared / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    qrels = {split: [tuple(line.split("\t")) for line in (shared / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]]
             for split in ("test", "train")}
    source = _mirror(tmp_path / "mirror", "scifact", corpus, queries, qrels)
    result = _get("scifact", "--dir", str(tmp_path / "data"), "--source", str(source))
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "data" / "scifact"
    for rel in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels/train.tsv"):
        assert (folder / rel).read_bytes() == (shared / rel).read_bytes(), rel
    assert "corpus 5,183, queries 1,109, qrels/test.tsv 339, qrels/train.tsv 919" in result.stdout


@pytest.mark.skipif(not (SHARED / "spf-qr-fr" / "original").is_dir(), reason="../shared/data/spf-qr-fr not present")
def test_spf_qr_fr_from_its_commit_equals_the_beir_files(tmp_path):
    from ragdiag.data.public_sets import SPF_COMMIT, SPF_PATH

    target = tmp_path / "mirror" / "etalab-ia" / "piaf-ml" / SPF_COMMIT / SPF_PATH
    target.parent.mkdir(parents=True)
    shutil.copy(SHARED / "spf-qr-fr" / "original" / "questions_spf.json", target)
    result = _get("spf-qr-fr", "--dir", str(tmp_path / "data"), "--source", str(tmp_path / "mirror"))
    assert result.exit_code == 0, result.stderr
    for rel in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / "data" / "spf-qr-fr" / rel).read_bytes() == (SHARED / "spf-qr-fr" / rel).read_bytes(), rel

    target.write_bytes(target.read_bytes().replace(b"F34355", b"F00000"))
    changed = _get("spf-qr-fr", "--dir", str(tmp_path / "other"), "--source", str(tmp_path / "mirror"))
    assert changed.exit_code == 2 and "is not the expected" in changed.stderr


def _bad_mirror(root: Path, corpus: list[dict], qrels_tsv: str, parquet: bool = False) -> Path:
    source = _mirror(root, "nfcorpus", corpus, [{"_id": "q0", "text": "q"}], {"test": []}, parquet=parquet)
    (source / "BeIR" / "nfcorpus-qrels" / "test.tsv").write_text(qrels_tsv, encoding="utf-8")
    return source


PASSAGES = [{"_id": "d0", "title": "", "text": "one"}, {"_id": "d1", "title": "", "text": "two"}]


@pytest.mark.parametrize("corpus, qrels, needle", [
    ([], "query-id\tcorpus-id\tscore\nq0\td0\t1\n", "nfcorpus (corpus): it holds no rows"),
    (PASSAGES, "query-id\tcorpus-id\nq0\td0\n", "qrels for test.tsv: row 1: field 'score': missing"),
    (PASSAGES, "query-id\tcorpus-id\tscore\nq0\td0\t1\nq0\td1\thigh\n",
     "qrels for test.tsv: row 2: field 'score': expected a whole number, got 'high'"),
    (PASSAGES, "query-id\tcorpus-id\tscore\nq0\td0\t1\nq0\td1\t0.5\n",
     "row 2: field 'score': expected a whole number, got 0.5 (a fractional grade is not truncated)"),
])
def test_a_bad_mirror_is_one_line_and_nothing_is_written(tmp_path, corpus, qrels, needle):
    source = _bad_mirror(tmp_path / "mirror", corpus, qrels)
    result = _get("nfcorpus", "--dir", str(tmp_path / "data"), "--source", str(source))
    errors = [line for line in result.stderr.splitlines() if line.startswith("ragdiag: error:")]
    assert result.exit_code == 2 and len(errors) == 1 and needle in errors[0], result.stderr
    assert not (tmp_path / "data" / "nfcorpus").exists()


def test_an_empty_parquet_corpus_is_refused(tmp_path):
    source = _bad_mirror(tmp_path / "mirror", [], "query-id\tcorpus-id\tscore\nq0\td0\t1\n", parquet=True)
    result = _get("nfcorpus", "--dir", str(tmp_path / "data"), "--source", str(source))
    assert result.exit_code == 2 and result.stderr.count("ragdiag: error:") == 1, result.stderr
    assert not (tmp_path / "data" / "nfcorpus").exists()


def _fetched(tmp_path) -> tuple[Path, Path]:
    source, data = _tiny(tmp_path / "mirror"), tmp_path / "data"
    assert _get("scifact", "--dir", str(data), "--source", str(source)).exit_code == 0
    return source, data


@pytest.mark.parametrize("change, needle", [
    (lambda m: [m], "manifest.json: expected a JSON object, got list"),
    (lambda m: {**m, "files": "corpus.jsonl"}, "manifest.json: field 'files': expected an object"),
    (lambda m: {**m, "files": {**m["files"], "corpus.jsonl": 3}}, "field 'files.corpus.jsonl': expected"),
    (lambda m: {**m, "files": {"../../outside.txt": {"bytes": 5, "sha256": "0" * 64}}},
     "field 'files': '../../outside.txt' is not a path inside the set's folder"),
    (lambda m: {**m, "files": {"/etc/hostname": {"bytes": 5, "sha256": "0" * 64}}},
     "field 'files': '/etc/hostname' is not a path inside the set's folder"),
    (lambda m: {**m, "counts": {"corpus": "six"}}, "field 'counts': expected an object of whole numbers"),
    (lambda m: {**m, "sample": "all"}, "field 'sample': expected a whole number"),
])
def test_a_tampered_manifest_is_one_line_naming_the_field(tmp_path, change, needle):
    source, data = _fetched(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("hello")  # what '../../outside.txt' names from data/scifact/
    manifest = data / "scifact" / "manifest.json"
    manifest.write_text(json.dumps(change(json.loads(manifest.read_text()))))
    for result in (runner.invoke(app, ["data", "list", "--dir", str(data)]),
                   _get("scifact", "--dir", str(data), "--source", str(source))):
        errors = [line for line in result.stderr.splitlines() if line.startswith("ragdiag: error:")]
        assert result.exit_code == 2 and len(errors) == 1 and needle in errors[0], result.stderr
        assert "data get scifact --force" in errors[0] and "Traceback" not in result.stderr
    assert outside.read_text() == "hello"
    forced = _get("scifact", "--dir", str(data), "--source", str(source), "--force")
    assert forced.exit_code == 0, forced.stderr


def test_force_over_a_symlinked_set_is_refused_and_leaves_its_target(tmp_path):
    source, data = _fetched(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (data / "scifact").rename(elsewhere)
    (data / "scifact").symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.name for p in elsewhere.rglob("*"))
    plain = _get("scifact", "--dir", str(data), "--source", str(source))  # a link to a good set is read as one
    assert plain.exit_code == 0 and "already there, verified" in plain.stdout, plain.stderr
    forced = _get("scifact", "--dir", str(data), "--source", str(source), "--force")
    assert forced.exit_code == 2 and forced.stderr.count("ragdiag: error:") == 1, forced.stderr
    assert f"is a symbolic link to {elsewhere}" in forced.stderr and "OSError" not in forced.stderr
    assert (data / "scifact").is_symlink() and sorted(p.name for p in elsewhere.rglob("*")) == before
