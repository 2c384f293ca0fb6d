"""sweep results keep their bytes through the shape refactor (issue 17): a rerun on the same
synthetic corpus with the toy model (test server, not an LLM) matches the golden files but for the
run record, the timing fields and the recommendation (the fastest point by measured QPS)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench import golden_runs

GOLDEN = Path(__file__).resolve().parent / "golden"


def test_rerun_matches_golden(tmp_path, monkeypatch, servers):
    toy, embed = servers
    monkeypatch.chdir(tmp_path)
    outputs = golden_runs.sweep_synthetic(toy.base_url, embed.base_url)
    golden = json.loads((GOLDEN / "sweep.json").read_text())
    assert golden_runs.comparable(json.loads(outputs["result"].read_text())) == golden_runs.comparable(golden)
    rows = [json.loads(line) for line in outputs["per_query"].read_text().splitlines()]
    assert rows == [json.loads(line) for line in (GOLDEN / "per_query.jsonl").read_text().splitlines()]
