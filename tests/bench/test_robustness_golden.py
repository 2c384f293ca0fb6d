"""robustness results keep their bytes through the shape refactor (issue 17): the result object
reads and writes the golden files unchanged, and a rerun matches them but for the run record and
the timing fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    assert _rows(outputs["per_query"]) == _rows(GOLDEN / f"{name}_per_query.jsonl")
