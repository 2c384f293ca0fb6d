"""Result files of every kind the report knows, made by the real commands where they are cheap
(correlate on a table and on graded rows) and from the real summarising code otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.bench.recall import summarise
from ragdiag.cli import app
from tools.synthetic import synthetic_graded

HOSTILE = "<script>alert('x')</script>"
HOSTILE_GROUP = "<img src=x onerror=alert(1)>"


def _robustness(rng: np.random.Generator) -> dict:
    points = []
    for ef in (8, 16, 64):
        recalls = np.clip(rng.normal(0.4 + ef / 100, 0.2, 150), 0, 1).round(1)
        points.append({"index": "hnsw", "spec": "hnsw:M=8,efSearch=8|16|64", "params": {"M": 8, "efSearch": ef},
                       **summarise(recalls, 10, (0.3, 0.7)), "qps_batch": {"median": 20000.0 / ef},
                       "latency_ms": 0.01 * ef})
    return {"meta": {"command": "ragdiag robustness", "k": 10, "metric": "l2", "ground_truth": "exact search"},
            "points": points}


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    rng = np.random.default_rng(3)
    runner = CliRunner()
    graded = folder / "inputs" / "graded.json"
    graded.parent.mkdir()
    graded.write_text(json.dumps(synthetic_graded(n_queries=20, embedders=("L6",),
                                                  configs=(("M", 30, 2, range(2, 7)),), seed=2)))
    result = runner.invoke(app, ["correlate", "--graded", str(graded), "--segments", "nw", "--min-samples", "30",
                                 "--alpha-grid", "l30^0.8", "--bootstrap", "20", "--out", str(folder / "correlate.json")])
    assert result.exit_code == 0, result.output
    rows = [{"qid": i, "system": HOSTILE_GROUP if i % 2 else "plain", "ndcg@10": float(g), "recall@10": float(r),
             "grade": int(np.clip(round(1 + 4 * g), 1, 5))}
            for i, (g, r) in enumerate(zip(rng.random(80), rng.random(80)))]
    table = folder / "inputs" / "table.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = runner.invoke(app, ["correlate", "--table", str(table), "--measure-cols", "ndcg@10,recall@10",
                                 "--group-col", "system", "--out", str(folder / "table_correlate.json")])
    assert result.exit_code == 0, result.output
    (folder / "robustness.json").write_text(json.dumps(_robustness(rng)))
    fix = Path(__file__).resolve().parents[2] / "fixtures" / "graded-utility"
    result = runner.invoke(app, ["evaluate", "--run", str(fix / "bm25.jsonl"), "--run", str(fix / "dense.trec"),
                                 "--qrels", str(fix / "qrels.tsv"), "--k", "2", "--pool-depth", "5", "--bootstrap", "50",
                                 "--format", "json", "--out", str(folder / "evaluate.json")])
    assert result.exit_code == 0, result.output
    ablations = [{"name": n, "delta_name": d, "delta_name_sd": 0.01, "pct_change": p, "pct_change_sd": 2.0,
                  "delta_topic": 0.6, "abs_change": 0.0, "excluded": 0}
                 for n, d, p in (("hard_name_mask", 0.0, -100.0), ("strip_diacritics", 0.09, 0.0))]
    names = {"meta": {"probe": "names"}, "lang": "en", "embedder": HOSTILE,
             "base": {"delta_name": 0.09, "delta_name_sd": 0.004, "delta_topic": 0.6, "delta_topic_sd": 0.01,
                      "name_topic_ratio": 0.15}, "ablations": ablations}
    (folder / "names.json").write_text(json.dumps(names))
    manifest = {"meta": {"command": "grade", "llm": {"model": "ragdiag-test-server"}},
                "run": {"base_url": "http://127.0.0.1:9/v1", "cache": "replay"},
                "summary": {"items": 10, "covered": 10, "coverage": 1.0, "calls": 0, "cache_hits": 10,
                            "cost_usd": 0.0}, "failures": [], "unparsed": []}
    (folder / "graded.json.manifest.json").write_text(json.dumps(manifest))
    (folder / "notes.json").write_text(json.dumps({"hello": "not a result"}))
    return folder


@pytest.fixture(scope="session")
def decision_dir(tmp_path_factory) -> Path:
    """``clq.json`` + ``clq.png`` and ``dynamic_k.json`` + ``dynamic_k.png`` written by the real
    commands: clq on the paper-001 scenarios (fixtures/clq), dynamic-k on the small run pair of
    tests/evaluate/golden/dynamic_k (the inputs of the evaluate golden tests)."""
    root = Path(__file__).resolve().parents[2]
    folder = tmp_path_factory.mktemp("decisions")
    runner = CliRunner()
    result = runner.invoke(app, ["clq", "--configs", str(root / "fixtures" / "clq" / "paper001-scenarios.csv"),
                                 "--slo-ms", "400", "--budget", "1", "--out", str(folder / "clq.json"),
                                 "--plot", str(folder / "clq.png")])
    assert result.exit_code == 0, result.output
    runs = root / "tests" / "evaluate" / "golden" / "dynamic_k"
    result = runner.invoke(app, ["dynamic-k", "--qrels", str(runs / "qrels.tsv"), "--run-low", str(runs / "low.jsonl"),
                                 "--run-high", str(runs / "high.jsonl"), "--k-low", "10", "--k-high", "20", "--ks", "5,10",
                                 "--steps", "4", "--bootstrap", "100", "--seed", "7", "--price", "0.05",
                                 "--out", str(folder / "dynamic_k.json"), "--plot", str(folder / "dynamic_k.png")])
    assert result.exit_code == 0, result.output
    return folder
