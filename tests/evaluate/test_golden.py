"""Byte-compatibility of the issue-17 refactor: the result objects of ``evaluate``, ``dynamic-k`` and
``clq`` read the JSON the commands wrote before the change and give it back unchanged, and a rerun
on the same inputs writes the same JSON (same keys, same order, same floats), CSV and table; only
the run record and the elapsed seconds differ between runs.

The golden files in ``golden/`` were written by the code before the refactor (commit 493928c)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.results.clq import ClqResult
from ragdiag.results.dynamic_k import DynamicKResult
from ragdiag.results.evaluate import EvaluateResult
from tests.golden import comparable, key_order, same_text

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
GRADED = ROOT / "fixtures" / "graded-utility"
EVALUATE_ARGS = ["evaluate", "--run", "bm25.jsonl", "--run", "dense.trec", "--qrels", "qrels.tsv", "--k", "2,3",
                 "--pool-depth", "5", "--answers", "graded.json", "--bootstrap", "200", "--seed", "3"]
EVALUATE_NO_BOOTSTRAP_ARGS = ["evaluate", "--run", "bm25.jsonl", "--qrels", "qrels.tsv", "--k", "2", "--pool-depth",
                              "5", "--bootstrap", "0", "--metrics", "ra_nwg,proc,harm,ndcg"]
DYNAMIC_K_ARGS = ["dynamic-k", "--qrels", "qrels.tsv", "--run-low", "low.jsonl", "--run-high", "high.jsonl",
                  "--k-low", "10", "--k-high", "20", "--ks", "5,10", "--steps", "4", "--bootstrap", "100", "--seed", "7",
                  "--price", "0.05"]
CLQ_ARGS = ["clq", "--configs", "paper001-scenarios.csv", "--slo-ms", "400", "--budget", "1"]

# (golden file stem, folder the command runs in (paths in the JSON are relative to it), arguments, result class)
CASES = {
    "evaluate": (GRADED, EVALUATE_ARGS, EvaluateResult),
    "evaluate_no_bootstrap": (GRADED, EVALUATE_NO_BOOTSTRAP_ARGS, EvaluateResult),
    "dynamic_k": (GOLDEN / "dynamic_k", DYNAMIC_K_ARGS, DynamicKResult),
    "clq": (ROOT / "fixtures" / "clq", CLQ_ARGS, ClqResult),
}


def _volatile_removed(doc: dict) -> dict:
    """The document as a golden comparison sees it (:func:`tests.golden.comparable`)."""
    return comparable(doc)


def _run(folder: Path, args: list[str], out: Path, monkeypatch, extra: tuple[str, ...] = ()) -> None:
    monkeypatch.chdir(folder)
    done = CliRunner().invoke(app, [*args, "--out", str(out), *extra])
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("stem", CASES)
def test_result_objects_read_and_write_the_golden_json_unchanged(stem):
    text = (GOLDEN / f"{stem}.json").read_text()
    golden = json.loads(text)
    result = CASES[stem][2].from_json(golden)
    assert result.to_json() == golden
    assert json.dumps(result.to_json(), ensure_ascii=False) == json.dumps(golden, ensure_ascii=False)  # key order


@pytest.mark.parametrize("stem", CASES)
def test_a_rerun_writes_the_golden_json(stem, tmp_path, monkeypatch):
    folder, args, _ = CASES[stem]
    out = tmp_path / f"{stem}.json"
    _run(folder, args, out, monkeypatch)
    new, golden = json.loads(out.read_text()), json.loads((GOLDEN / f"{stem}.json").read_text())
    assert _volatile_removed(new) == _volatile_removed(golden)  # floats within tests.golden's tolerance
    assert key_order(_volatile_removed(new)) == key_order(_volatile_removed(golden))  # same keys, same order
    assert golden["run_record"].keys() <= new["run_record"].keys()  # the record keeps every field it had


@pytest.mark.parametrize("stem", ["evaluate", "dynamic_k", "clq"])
@pytest.mark.parametrize("suffix", ["csv", "txt"])
def test_a_rerun_writes_the_golden_csv_and_table(stem, suffix, tmp_path, monkeypatch):
    folder, args, _ = CASES[stem]
    out = tmp_path / f"{stem}.{suffix}"
    _run(folder, args, out, monkeypatch)
    assert same_text(out.read_text(), (GOLDEN / f"{stem}.{suffix}").read_text())


def test_a_rerun_writes_the_golden_per_query_rows(tmp_path, monkeypatch):
    rows = tmp_path / "rows.jsonl"
    _run(GRADED, EVALUATE_ARGS, tmp_path / "e.json", monkeypatch, ("--per-query", str(rows)))
    assert same_text(rows.read_text(), (GOLDEN / "evaluate.per_query.jsonl").read_text())


def test_label_manifest_object_reads_and_writes_the_golden_manifest_unchanged():
    from ragdiag.results.label import LabelManifest

    golden = json.loads((GOLDEN / "label.manifest.json").read_text())
    manifest = LabelManifest.from_json(golden)
    assert json.dumps(manifest.to_json(), ensure_ascii=False) == json.dumps(golden, ensure_ascii=False)
    assert manifest.refine_totals.queries == 3 and manifest.human_agreement.pairs == 14


def _label_volatile_removed(doc: dict) -> dict:
    """Also the test server's port (in the provider and base URL) and the elapsed seconds."""
    doc = _volatile_removed(doc)
    doc["meta"] = {**doc["meta"], "llm": {k: v for k, v in doc["meta"]["llm"].items() if k != "provider"}}
    doc["run"] = {k: v for k, v in doc["run"].items() if k != "base_url"}
    doc["summary"] = {k: v for k, v in doc["summary"].items() if k != "seconds"}
    return doc


def test_a_label_rerun_writes_the_golden_manifest_qrels_and_orders(tmp_path, monkeypatch):
    """Test-server output (a lookup of the human grades), never an LLM's judgement."""
    from tests.evaluate.test_label import PASSAGES, QUERIES, UtilityJudgeServer

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    Path("corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                            for d, (t, _, _) in PASSAGES.items()))
    Path("queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    Path("run.jsonl").write_text("".join(json.dumps({"query_id": q, "ids": [d for d, (_, qq, _) in PASSAGES.items() if qq == q],
                                                     "scores": [5, 4, 3, 2, 1][: sum(1 for v in PASSAGES.values() if v[1] == q)]})
                                         + "\n" for q in QUERIES))
    Path("human.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                 + "".join(f"{q}\t{d}\t{g}\n" for d, (_, q, g) in PASSAGES.items()))
    with UtilityJudgeServer() as server:
        done = CliRunner().invoke(app, ["label", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl",
                                        "--pool", "run:run.jsonl,bm25", "--pool-depth", "10", "--model", "test-model",
                                        "--out", "graded.tsv", "--cache-dir", "cache", "--no-progress",
                                        "--base-url", server.base_url, "--human", "human.tsv", "--repeats", "2",
                                        "--refine", "--refine-top", "3", "--refine-batch", "3", "--refine-max-rounds", "4"])
    assert done.exit_code == 0, done.output
    new = json.loads(Path("graded.tsv.manifest.json").read_text())
    golden = json.loads((GOLDEN / "label.manifest.json").read_text())
    assert _label_volatile_removed(new) == _label_volatile_removed(golden)
    assert key_order(_label_volatile_removed(new)) == key_order(_label_volatile_removed(golden))
    assert same_text(Path("graded.tsv").read_text(), (GOLDEN / "label.graded.tsv").read_text())
    assert same_text(Path("graded.tsv.refined.jsonl").read_text(), (GOLDEN / "label.refined.jsonl").read_text())
