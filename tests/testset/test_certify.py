"""``ragdiag testset certify`` on the simulated fixture (fixtures/testset-certify): the certificate's
keys, τ = 1 of a label set against itself, a reproducible seeded bootstrap, the largest swap and the
gap, the verdict, and bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.results.testset import CertifyResult
from ragdiag.testset.certify import CertifyOptions, ScoredRuns, certify
from tests.golden import comparable

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "testset-certify"
RUNS = [str(FIX / f"run-{n}.trec") for n in range(1, 7)]
KEYS = ["meta", "systems", "tau", "tau_ap", "top", "largest_swap", "gap", "verdict", "run_record"]
runner = CliRunner()


def _certify(*args: str):
    return runner.invoke(app, ["testset", "certify", *args])


def test_a_label_set_against_itself_is_tau_one(tmp_path):
    out = tmp_path / "cert.json"
    result = _certify("--a", str(FIX / "human.tsv"), "--b", str(FIX / "human.tsv"), "--runs", *RUNS, "--out", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert list(doc) == KEYS
    assert doc["tau"] == {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0} and doc["tau_ap"]["value"] == 1.0
    assert doc["largest_swap"] is None and doc["gap"] is None and doc["meta"]["paired"] is True
    assert doc["verdict"].startswith("label set A ranks the 6 systems like label set B: τ 1.00 [1.00, 1.00]")
    assert CertifyResult.from_json(doc).to_json() == doc


def test_llm_labels_against_human_labels_and_a_reproducible_bootstrap(tmp_path):
    args = ["--a", str(FIX / "llm.tsv"), "--b", str(FIX / "human.tsv"), "--runs", RUNS[0], "--runs", *RUNS[1:], "--top", "3",
            "--bm25-run", RUNS[0], "--dense-run", RUNS[5], "--seed", "7"]
    docs = []
    for name in ("one.json", "two.json"):
        assert _certify(*args, "--out", str(tmp_path / name)).exit_code == 0
        docs.append(json.loads((tmp_path / name).read_text()))
    assert comparable(docs[0]) == comparable(docs[1])  # the run record and timings aside, the same numbers
    doc = docs[0]
    a = [s["score_a"] for s in doc["systems"]]
    b = [s["score_b"] for s in doc["systems"]]
    assert doc["tau"]["value"] == pytest.approx(kendalltau(a, b).statistic)
    assert doc["tau"]["ci_low"] <= doc["tau"]["value"] <= doc["tau"]["ci_high"]
    assert doc["top"]["k"] == 3 and doc["top"]["runs"] == RUNS[:3]
    gap = doc["gap"]
    assert gap["a"] == pytest.approx(a[0] - a[5]) and gap["b"] == pytest.approx(b[0] - b[5])
    assert gap["a_ci_low"] <= gap["a"] <= gap["a_ci_high"]
    other_seed = _certify(*args[:-1], "8", "--out", str(tmp_path / "three.json"))
    assert other_seed.exit_code == 0
    assert json.loads((tmp_path / "three.json").read_text())["tau"]["ci_low"] is not None


def test_largest_swap_and_verdict_on_known_scores():
    rng = np.random.default_rng(0)
    base = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    b = ScoredRuns("b", [f"q{i}" for i in range(30)], base + rng.normal(0, 0.01, (30, 6)))
    swapped = base[[1, 0, 2, 3, 5, 4]]  # the top two and the bottom two change places
    a = ScoredRuns("a", b.query_ids, swapped + rng.normal(0, 0.01, (30, 6)))
    names = [f"r{i}" for i in range(6)]
    result = certify(names, a, b, CertifyOptions(top=3, bootstrap=200), {})
    assert result.tau is not None and result.tau.value == pytest.approx(kendalltau(a.values.mean(0), b.values.mean(0)).statistic)
    swap = result.largest_swap
    assert swap is not None and {swap.run_1, swap.run_2} in ({"r0", "r1"}, {"r4", "r5"})
    assert swap.delta_b > 0 > swap.delta_a
    assert "do not use A to pick between the best systems" in result.verdict
    assert result.tau_ap is not None and result.tau_ap.value is not None and result.tau_ap.value < result.tau.value


def test_unpaired_question_sets_resample_each_side():
    rng = np.random.default_rng(1)
    a = ScoredRuns("a", [f"s{i}" for i in range(20)], rng.random((20, 5)))
    b = ScoredRuns("b", [f"h{i}" for i in range(25)], rng.random((25, 5)))
    result = certify([f"r{i}" for i in range(5)], a, b, CertifyOptions(top=2, bootstrap=100), {})
    assert result.meta["paired"] is False and result.meta["queries_a"] == 20 and result.meta["queries_b"] == 25


def _write_run(path: Path, queries: list[str]) -> str:
    path.write_text("".join(f"{q} Q0 p{r} {r + 1} {10 - r} x\n" for q in queries for r in range(5)))
    return str(path)


@pytest.mark.parametrize(("args", "message"), [
    (["--runs", *RUNS[:4]], "a certificate needs at least 5"),
    (["--runs", *RUNS, "--top", "7"], "--top 7: must be between 2 and the number of runs (6)"),
    (["--runs", *RUNS, "--metric", "nope@10"], "unknown metric 'nope'"),
    (["--runs", *RUNS, "--metric", "ndcg@10,recall@5"], "give one METRIC@K"),
    (["--runs", *RUNS, "--bm25-run", RUNS[0]], "give --bm25-run and --dense-run together"),
    (["--runs", *RUNS, "--bm25-run", "other.trec", "--dense-run", RUNS[1]], "--bm25-run other.trec: not one of --runs"),
    (["--runs", *RUNS[:5], RUNS[0]], "is given twice"),
])
def test_bad_options_one_line_exit_2(tmp_path, args, message):
    out = tmp_path / "cert.json"
    result = _certify("--a", str(FIX / "llm.tsv"), "--b", str(FIX / "human.tsv"), *args, "--out", str(out))
    assert result.exit_code == 2 and message in result.output, result.output
    assert result.output.startswith("ragdiag: error:") and "Traceback" not in result.output and not out.exists()


def test_runs_scored_on_different_queries_are_refused(tmp_path):
    human = (FIX / "human.tsv").read_text().splitlines()[1:]
    queries = list(dict.fromkeys(line.split("\t")[0] for line in human))
    runs = [_write_run(tmp_path / f"r{i}.trec", queries) for i in range(4)]
    runs.append(_write_run(tmp_path / "short.trec", queries[:-3]))
    out = tmp_path / "cert.json"
    result = _certify("--a", str(FIX / "human.tsv"), "--b", str(FIX / "human.tsv"), "--runs", *runs, "--out", str(out))
    assert result.exit_code == 2 and "scored on different queries" in result.output and "short.trec" in result.output
    assert not out.exists()


def test_a_folder_without_qrels_and_a_missing_run(tmp_path):
    result = _certify("--a", str(tmp_path), "--b", str(FIX / "human.tsv"), "--runs", *RUNS)
    assert result.exit_code == 2 and "a folder must hold qrels/test.tsv" in result.output
    result = _certify("--a", str(FIX / "llm.tsv"), "--b", str(FIX / "human.tsv"), "--runs", *RUNS[:5], str(tmp_path / "x.trec"))
    assert result.exit_code == 2 and "x.trec: no such file" in result.output


def test_out_may_not_overwrite_an_input():
    result = _certify("--a", str(FIX / "llm.tsv"), "--b", str(FIX / "human.tsv"), "--runs", *RUNS, "--out", RUNS[0])
    assert result.exit_code == 2 and "--out" in result.output


def test_undefined_tau_is_null_not_nan():
    tied = ScoredRuns("a", ["q1", "q2"], np.zeros((2, 5)))
    b = ScoredRuns("b", ["q1", "q2"], np.arange(10.0).reshape(2, 5))
    result = certify([f"r{i}" for i in range(5)], tied, b, CertifyOptions(top=2, bootstrap=10), {})
    assert result.tau is not None and result.tau.value is None and result.tau_ap is not None and result.tau_ap.value is None
    assert "not like" in result.verdict and not any(isinstance(v, float) and math.isnan(v) for v in result.to_json()["tau"].values())
