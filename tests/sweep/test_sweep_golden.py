"""sweep results keep their bytes through the shape refactor (issue 17): a rerun on the same
synthetic corpus with the toy model (test server, not an LLM) matches the golden files but for the
run record, the timing fields and the recommendation (the fastest point by measured QPS)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from ragdiag.io.writer import write_figure
from ragdiag.report.sweep_accuracy import print_relative_accuracy
from ragdiag.report.sweep_report import plot_sweep, print_sweep
from ragdiag.results.sweep import SweepResult
from tests.bench import golden_runs

GOLDEN = Path(__file__).resolve().parent / "golden"


def test_rerun_matches_golden(tmp_path, monkeypatch, servers):
    toy, embed = servers
    monkeypatch.chdir(tmp_path)
    outputs = golden_runs.sweep_synthetic(toy.base_url, embed.base_url)
    golden = json.loads((GOLDEN / "sweep.json").read_text())
    assert golden_runs.comparable(json.loads(outputs["result"].read_text())) == golden_runs.comparable(golden)
    rows = [json.loads(line) for line in outputs["per_query"].read_text().splitlines()]
    golden_rows = [json.loads(line) for line in (GOLDEN / "per_query.jsonl").read_text().splitlines()]
    assert golden_runs.comparable(rows) == golden_runs.comparable(golden_rows)


def test_result_object_reads_and_writes_the_golden_file_unchanged(tmp_path):
    text = (GOLDEN / "sweep.json").read_text()
    golden = json.loads(text)
    result = SweepResult.from_json(golden)
    assert result.to_json() == golden
    assert json.dumps(result.to_json(), ensure_ascii=False, indent=1) + "\n" == text  # same keys, order, floats
    assert result.meta.k == 3 and result.control("exact").recall_mean == 1.0
    assert [p.label for p in result.points] == [p["label"] for p in golden["points"]]
    console = Console(record=True, width=200)
    print_sweep(result, console)
    print_relative_accuracy(result, console)
    assert "hnsw efSearch=16" in console.export_text()
    figures = plot_sweep(result)
    assert [f.name for f in figures] == ["sweep_grade.png", "sweep_qps.png"]
    assert [write_figure(tmp_path / f.name, f.figure).stat().st_size > 10_000 for f in figures] == [True, True]
