"""The bundled synthetic set is exactly what its committed generator writes (deterministic), with one
injected fault per query and at least 30 queries per cause."""

from __future__ import annotations

import collections
import json

from ragdiag.resources import resource_path
from tools.make_triage_synthetic import CAUSES, write


def test_fixture_is_the_generator_output(tmp_path):
    fixture = resource_path("fixtures", "triage-synthetic")
    write(tmp_path, per_cause=30, controls=30)
    for name in ("corpus.jsonl", "queries.jsonl", "answers.jsonl", "faults.jsonl", "model.json", "qrels/test.tsv"):
        assert (tmp_path / name).read_text() == (fixture / name).read_text(), name
    faults = collections.Counter(json.loads(line)["fault"] for line in (fixture / "faults.jsonl").read_text().splitlines())
    assert all(faults[c] >= 30 for c in CAUSES) and faults["ok"] == 30
