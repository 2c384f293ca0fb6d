"""index build and retrieve keep their outputs through the shape refactor (issue 17): a rerun
matches the golden manifest, run files and run metadata but for the run record, the timings and the
test server's port."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench import golden_runs
from tests.golden import FLOAT32_REL_TOL
from tests.servers.embeddings_server import EmbeddingsServer

GOLDEN = Path(__file__).resolve().parent / "golden"


def _read(path: Path):
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    return json.loads(path.read_text())


def test_rerun_matches_golden(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    with EmbeddingsServer(dim=16) as server:
        outputs = golden_runs.index_and_retrieve(server.base_url)
    for path in outputs.values():
        # retrieval scores are float32 dot products: another summation order moves their last float32 bits
        new, old = (golden_runs.comparable(_read(p), FLOAT32_REL_TOL) for p in (path, GOLDEN / path.name))
        assert new == old, path
