"""``ragdiag clq`` (paper 001 §3.3, §5.4–5.5, A.1): the cost model and the efficiency score against
the paper's published numbers, the frontier and choices against a brute-force search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.commands.clq import read_configs
from ragdiag.evaluate.clq import Config, CostModel, analyse, efficiency

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "fixtures" / "clq" / "paper001-scenarios.csv"


def cli(*args: str):
    return CliRunner().invoke(app, ["clq", *args])


def test_cost_model_gives_the_papers_costs_per_1000_queries():
    assert CostModel(candidates=50, tokens_per_candidate=500, rerank_price=0.05).per_1k_queries() == pytest.approx(1.25)
    costs = [c.cost for c in read_configs(SCENARIOS, ("ra_nwg@10",))]
    assert costs == pytest.approx([1.25, 0.50, 2.50, 2.50, 5.00])  # paper 001 §5.5 table


def test_efficiency_reproduces_table_a1_from_the_papers_own_rows():
    """The four-metric mean of N-Recall4+ and RA-nWG at @10 and @30 over latency gives Table A.1's
    scores from the rows they come from (the three-metric mean gave 2.452 and 2.336)."""
    rank1 = {"nrecall4@10": 0.835, "ra_nwg@10": 0.804, "nrecall4@30": 0.819, "ra_nwg@30": 0.810}  # §5, Rerank-2.5
    rank5 = {"nrecall4@10": 0.799, "ra_nwg@10": 0.769, "nrecall4@30": 0.817, "ra_nwg@30": 0.811}  # A.8, 512d lite K=50
    assert round(efficiency(rank1, 332.9), 3) == 2.454
    assert round(efficiency(rank5, 339.5), 3) == 2.353
    rows = analyse([Config("rank 1", rank1, 332.9, 1.25), Config("rank 5", rank5, 339.5, 0.5)]).configs
    assert [round(r.efficiency_retrieval, 3) for r in rows] == [2.454, 2.353]


def test_efficiency_is_null_when_one_of_its_four_columns_is_missing():
    three = {"nrecall4@10": 0.835, "ra_nwg@10": 0.804, "ra_nwg@30": 0.810}
    assert efficiency(three, 332.9) is None  # no mean of fewer metrics: not Table A.1's score
    assert efficiency({"ra_nwg@10": 0.8}, 300.0) is None
    done = cli("--configs", str(SCENARIOS))
    assert done.exit_code == 0, done.output
    assert "quality push has no nrecall4@30" in " ".join(done.output.split())


def _brute_frontier(configs: list[Config], quality: tuple[str, ...]) -> set[str]:
    points = np.array([[-c.cost, -c.latency_p50, *(c.quality[q] for q in quality)] for c in configs])
    keep = set()
    for i, c in enumerate(configs):
        beaten = any(np.all(points[j] >= points[i]) and np.any(points[j] > points[i])
                     for j in range(len(configs)) if j != i)
        if not beaten:
            keep.add(c.name)
    return keep


@pytest.mark.parametrize("seed", range(20))
def test_frontier_and_choices_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 25))
    configs = [Config(f"c{i}", {"ra_nwg@10": float(rng.integers(0, 6)) / 5, "nrecall4@10": float(rng.random())},
                      latency_p50=float(rng.integers(1, 8)) * 50, cost=float(rng.integers(0, 5)))
               for i in range(n)]
    quality = ("ra_nwg@10", "nrecall4@10")
    result = analyse(configs, quality, slo_ms=200, budget=2)
    assert set(result.frontier) == _brute_frontier(configs, quality)
    for name, by in result.dominated.items():
        assert name not in result.frontier and by
    within = [c for c in configs if c.latency_p50 <= 200]
    expected = max(within, key=lambda c: (c.quality["ra_nwg@10"], -c.cost, -c.latency_p50), default=None)
    chosen = result.choices.slo.best
    if expected is None:
        assert chosen is None
    else:
        best = next(c for c in configs if c.name == chosen)
        assert best.latency_p50 <= 200
        assert (best.quality["ra_nwg@10"], -best.cost, -best.latency_p50) == \
               (expected.quality["ra_nwg@10"], -expected.cost, -expected.latency_p50)


def test_paper_scenarios_end_to_end(tmp_path):
    out, plot = tmp_path / "clq.json", tmp_path / "clq.png"
    done = cli("--configs", str(SCENARIOS), "--slo-ms", "400", "--budget", "1", "--out", str(out), "--plot", str(plot))
    assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text())
    assert doc["frontier"] == ["baseline", "cost saver"]
    assert doc["dominated"]["high-K"] == ["baseline", "small-dim"]
    assert doc["choices"]["slo"]["best"] == "baseline" and doc["choices"]["budget"]["best"] == "cost saver"
    assert doc["choices"]["slo_and_budget"]["best"] is None
    (marginal,) = doc["marginal"]
    assert (marginal["from_k"], marginal["to_k"]) == (50, 200)
    assert marginal["per_ms"] == pytest.approx((0.792 - 0.804) / (2931.1 - 332.9))
    assert doc["run_record"]["command"] == "ragdiag clq"
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert "Pareto frontier" in done.output and "baseline" in done.output


def test_quality_read_from_a_real_evaluate_result(tmp_path):
    fixture = ROOT / "fixtures" / "graded-utility"
    result = tmp_path / "eval.json"
    done = CliRunner().invoke(app, ["evaluate", "--run", str(fixture / "bm25.jsonl"), "--run", str(fixture / "dense.trec"),
                                    "--qrels", str(fixture / "qrels.tsv"), "--k", "2", "--pool-depth", "5",
                                    "--format", "json", "--out", str(result), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    evaluated = {r["run"]: {f"{m['metric']}@{m['k']}": m["value"] for m in r["metrics"]}
                 for r in json.loads(result.read_text())["runs"]}
    configs = tmp_path / "configs.csv"
    configs.write_text("name,evaluate,run,latency_p50_ms,cost_per_1k\n"
                       "lexical,eval.json,bm25,12,0\nneural,eval.json,dense,40,0.3\n")
    out = tmp_path / "clq.csv"
    done = cli("--configs", str(configs), "--quality", "ra_nwg@2,nrecall4@2", "--out", str(out))
    assert done.exit_code == 0, done.output
    rows = out.read_text().splitlines()
    assert rows[0].startswith("name,pareto,cost_per_1k")
    lexical = rows[1].split(",")
    assert float(lexical[6]) == pytest.approx(evaluated["bm25"]["ra_nwg@2"])


@pytest.mark.parametrize("content, message", [
    ("name,ra_nwg@10,nrecall4@10\na,0.5,0.5\n", "record 1: field 'latency_p50_ms': missing"),
    ("name,latency_p50_ms,ra_nwg@10,nrecall4@10\na,-3,0.5,0.5\n", "must be a finite number ≥ 0"),
    ("name,latency_p50_ms,ra_nwg@10,nrecall4@10\na,3,nan,0.5\n", "must be a finite number ≥ 0"),
    ("name,latency_p50_ms,ra_nwg@10,nrecall4@10\na,3,0.5,0.5\na,4,0.5,0.5\n", "'a' is also record 1's name"),
    ("name,latency_p50_ms,ra_nwg@10\na,3,0.5\n", "has no nrecall4@10"),
    ("name,latency_p50_ms,evaluate,run,ra_nwg@10,nrecall4@10\na,3,nowhere.json,x,0.5,0.5\n", "no such file"),
    ("name,latency_p50_ms\n", "no configuration in the file"),
])
def test_bad_configurations_are_one_line(tmp_path, content, message):
    configs = tmp_path / "configs.csv"
    configs.write_text(content)
    before = configs.read_bytes()
    out = tmp_path / "out.json"
    done = cli("--configs", str(configs), "--out", str(out))
    assert done.exit_code == 2, done.output
    assert message in done.output and done.output.count("\n") == 1
    assert configs.read_bytes() == before and not out.exists()


@pytest.mark.parametrize("args, message", [
    (["--slo-ms", "0"], "--slo-ms"), (["--slo-ms", "nan"], "--slo-ms"), (["--budget", "-1"], "--budget"),
    (["--quality", "ra_nwg"], "expected METRIC@K"), (["--slo-percentile", "p99", "--slo-ms", "5"], "choose p50 or p95"),
])
def test_options_are_checked(args, message):
    done = cli("--configs", str(SCENARIOS), *args)
    assert done.exit_code == 2 and message in done.output


def test_output_equal_to_the_input_is_refused():
    done = cli("--configs", str(SCENARIOS), "--out", str(SCENARIOS))
    assert done.exit_code == 2 and "--out" in done.output


def test_latency_read_from_a_sweep_result(tmp_path):
    sweep = {"points": [{"label": "hnsw efSearch=16", "latency_ms": {"p50": 0.21, "p95": 0.4, "p99": 0.9}}],
             "controls": [{"control": "exact", "latency_ms": {"p50": 1.5, "p95": 2.0, "p99": 3.0}}]}
    (tmp_path / "sweep.json").write_text(json.dumps(sweep))
    configs = tmp_path / "configs.csv"
    configs.write_text("name,sweep,point,ra_nwg@10,nrecall4@10,cost_per_1k\n"
                       "ann,sweep.json,hnsw efSearch=16,0.7,0.8,0\nflat,sweep.json,exact,0.72,0.81,0\n")
    read = {c.name: c for c in read_configs(configs, ("ra_nwg@10",))}
    assert (read["ann"].latency_p50, read["ann"].latency_p95) == (0.21, 0.4)
    assert (read["flat"].latency_p50, read["flat"].latency_p95) == (1.5, 2.0)
    configs.write_text("name,sweep,point,ra_nwg@10,nrecall4@10\nx,sweep.json,nope,0.7,0.8\n")
    done = cli("--configs", str(configs))
    assert done.exit_code == 2 and "no point 'nope'" in done.output


def test_latency_read_from_a_sweep_json_written_by_ragdiag_sweep(tmp_path):
    """The golden sweep.json (written by `ragdiag sweep`): its controls carry their name under "name"."""
    sweep = json.loads((ROOT / "tests" / "sweep" / "golden" / "sweep.json").read_text())
    (tmp_path / "sweep.json").write_text(json.dumps(sweep))
    configs = tmp_path / "configs.csv"
    configs.write_text("name,sweep,point,ra_nwg@10,cost_per_1k\n"
                       "ann,sweep.json,hnsw efSearch=16,0.7,0\nflat,sweep.json,exact,0.72,0\n")
    read = {c.name: c for c in read_configs(configs, ("ra_nwg@10",))}
    point = next(p for p in sweep["points"] if p["label"] == "hnsw efSearch=16")
    exact = next(c for c in sweep["controls"] if c["name"] == "exact")
    assert (read["ann"].latency_p50, read["ann"].latency_p95) == (point["latency_ms"]["p50"], point["latency_ms"]["p95"])
    assert (read["flat"].latency_p50, read["flat"].latency_p95) == (exact["latency_ms"]["p50"], exact["latency_ms"]["p95"])


def test_a_sweep_json_without_controls_or_with_bad_meta_is_one_error_line(tmp_path):
    (tmp_path / "sweep.json").write_text(json.dumps({"points": [{"label": "a", "latency_ms": {"p50": 1.0}}]}))
    configs = tmp_path / "configs.csv"
    configs.write_text("name,sweep,point,ra_nwg@10,nrecall4@10\nx,sweep.json,exact,0.7,0.8\n")
    done = cli("--configs", str(configs))
    assert done.exit_code == 2 and "no 'controls'" in done.output
    (tmp_path / "sweep.json").write_text(json.dumps({"meta": "x", "points": [{"label": "a", "latency_ms": {"p50": 1.0}}]}))
    configs.write_text("name,sweep,point,ra_nwg@10,nrecall4@10\nx,sweep.json,a,0.7,0.8\n")
    done = cli("--configs", str(configs))
    assert done.exit_code == 2 and "not a ragdiag sweep result" in done.output and "Traceback" not in done.output


def test_the_command_page_states_the_four_metric_mean_the_code_computes():
    import re

    from ragdiag.evaluate.clq import EFFICIENCY_METRICS
    from ragdiag.measures.registry import CLQ_EFFICIENCY

    page = " ".join((ROOT / "docs" / "commands" / "clq.md").read_text(encoding="utf-8").split())
    stated = re.findall(r"efficiency score is 1000 · mean\(([^)]*)\) / latency", page)
    assert len(stated) == 1, "docs/commands/clq.md states the efficiency formula once"
    labels = [m.label for m in CLQ_EFFICIENCY]
    assert sorted(s.strip() for s in stated[0].split(",")) == sorted(labels) and len(labels) == len(EFFICIENCY_METRICS)
    assert "three published values" not in page and "three-metric" not in page
