"""robustness results keep their bytes through the shape refactor (issue 17): the result object
reads and writes the golden files unchanged, and a rerun matches them but for the run record and
the timing fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.io.figures import close_figure
from ragdiag.results.robustness import RobustnessResult
from tests.bench import golden_runs

GOLDEN = Path(__file__).resolve().parent / "golden"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("run, name", [(golden_runs.robustness_ann, "ann"), (golden_runs.robustness_runs, "runs")])
def test_rerun_matches_golden(tmp_path, monkeypatch, run, name):
    monkeypatch.chdir(tmp_path)
    outputs = run()
    golden = json.loads((GOLDEN / f"{name}.json").read_text())
    assert golden_runs.comparable(json.loads(outputs["result"].read_text())) == golden_runs.comparable(golden)
    assert golden_runs.comparable(_rows(outputs["per_query"])) == golden_runs.comparable(_rows(GOLDEN / f"{name}_per_query.jsonl"))


@pytest.mark.parametrize("name", ["ann", "runs"])
def test_result_object_reads_and_writes_the_golden_file_unchanged(name):
    text = (GOLDEN / f"{name}.json").read_text()
    golden = json.loads(text)
    result = RobustnessResult.from_json(golden)
    assert result.to_json() == golden
    assert json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n" == text  # same keys, order, floats
    assert result.meta.k == golden["meta"]["k"] and len(result.points) == len(golden["points"])
    assert [p.recall_mean for p in result.points] == [p["recall_mean"] for p in golden["points"]]


def test_renderers_read_the_object(tmp_path):
    from rich.console import Console

    from ragdiag.report.robustness_plots import robustness_figures
    from ragdiag.report.robustness_table import print_robustness

    result = RobustnessResult.from_json(json.loads((GOLDEN / "ann.json").read_text()))
    console = Console(record=True, width=200)
    print_robustness(result, console)
    text = console.export_text()
    assert "hnsw" in text and "M=4,efConstruction=16,efSearch=8" in text and "[95% CI: 200 bootstrap" in text
    figures = robustness_figures(result)
    assert [f.name for f in figures] == ["recall_distribution.png", "robustness_vs_recall.png", "qps_vs_robustness.png"]
    for f in figures:
        close_figure(f.figure)
