"""A measure added through the registry alone — the example of docs/contributing.md ("Adding a measure"),
run as written — is offered and computed by ``evaluate``, ``compare`` and ``correlate``, with the values its
definition gives when computed here by hand."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.data.qrels_runs import read_run_ids
from ragdiag.evaluate.inputs import load_graded_qrels
from ragdiag.measures.registry import CORRELATE, EVALUATE

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "fixtures" / "compare"


@pytest.fixture
def example() -> Iterator[None]:
    """The page's python block executed as a module of its own; its measures removed afterwards."""
    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    found = re.search(r"^## Adding a measure\n.*?^```python\n(.*?)^```", text, re.S | re.M)
    assert found, "docs/contributing.md: no python block under '## Adding a measure'"
    try:
        exec(compile(found.group(1), "docs/contributing.md", "exec"), {"__name__": "contributing_example"})
        yield
    finally:
        EVALUATE.unregister("nrecall3")
        CORRELATE.unregister("hit")


def _nrecall3_by_hand(run: Path, qrels: Path, k: int) -> dict[str, float | None]:
    """|{d in top-k : g >= 3}| / min(k, passages of grade >= 3), None when the pool has none."""
    grades = load_graded_qrels(qrels).grades
    ranked = read_run_ids(run)
    out: dict[str, float | None] = {}
    for query, pool in grades.items():
        good = sum(g >= 3 for g in pool.values())
        found = sum(pool.get(d, 0) >= 3 for d in ranked.get(query, [])[:k])
        out[query] = found / min(k, good) if good else None
    return out


def test_evaluate_and_compare_compute_a_registered_metric(example, tmp_path):
    rows = tmp_path / "rows.jsonl"
    done = CliRunner().invoke(app, ["evaluate", "--run", str(COMPARE / "base.jsonl"), "--qrels", str(COMPARE / "qrels.tsv"),
                                    "--k", "2", "--metrics", "nrecall3,nrecall4", "--bootstrap", "0",
                                    "--format", "json", "--per-query", str(rows)])
    assert done.exit_code == 0, done.output
    metrics = json.loads(done.stdout)["runs"][0]["metrics"]
    assert [m["metric"] for m in metrics] == ["nrecall3", "nrecall4"]
    got = {r["query_id"]: r["nrecall3"] for r in map(json.loads, rows.read_text().splitlines())}
    want = _nrecall3_by_hand(COMPARE / "base.jsonl", COMPARE / "qrels.tsv", 2)
    assert got == pytest.approx(want) and any(v is not None and 0 < v < 1 for v in got.values())
    assert "N-Recall3+" in CliRunner().invoke(app, ["evaluate", "--run", str(COMPARE / "base.jsonl"), "--qrels",
                                                    str(COMPARE / "qrels.tsv"), "--k", "2", "--metrics", "nrecall3",
                                                    "--bootstrap", "0"], env={"COLUMNS": "200"}).output

    out = tmp_path / "compare.json"
    done = CliRunner().invoke(app, ["compare", "--base", str(COMPARE / "base.jsonl"), "--new", str(COMPARE / "new.trec"),
                                    "--qrels", str(COMPARE / "qrels.tsv"), "--metrics", "nrecall3@2", "--out", str(out)])
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    (metric,) = result["metrics"]
    base = _nrecall3_by_hand(COMPARE / "base.jsonl", COMPARE / "qrels.tsv", 2)
    new = _nrecall3_by_hand(COMPARE / "new.trec", COMPARE / "qrels.tsv", 2)
    both = [q for q in base if base[q] is not None and new.get(q) is not None]
    assert metric["metric"] == "nrecall3@2" and metric["n"] == len(both)
    assert metric["mean_base"] == pytest.approx(np.mean([base[q] for q in both]))
    assert metric["mean_new"] == pytest.approx(np.mean([new[q] for q in both]))


def test_correlate_computes_a_registered_measure(example):
    graded = ROOT / "fixtures" / "llm-cache" / "graded.json"
    done = CliRunner().invoke(app, ["correlate", "--graded", str(graded), "--segments", "pooled", "--min-samples", "5",
                                    "--measures", "hit,P", "--corr", "spearman,pearson", "--format", "json"])
    assert done.exit_code == 0, done.output
    results = {r["measure"]: r for r in json.loads(done.output)["results"]}
    records = json.loads(graded.read_text())
    hit = [float(sum(r["inK"]) > 0) for r in records]
    grade = [r["grade"] for r in records]
    assert results["hit"]["n"] == len(records) and len(set(hit)) == 2
    assert results["hit"]["spearman"]["value"] == pytest.approx(stats.spearmanr(hit, grade)[0])
    assert results["hit"]["pearson"]["value"] == pytest.approx(stats.pearsonr(hit, grade)[0])
