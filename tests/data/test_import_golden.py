"""Issue 17: ``ragdiag import`` writes the same files as before the refactor (tests/data/golden/,
written by the earlier code from golden/ragas.json), and its manifest reads back as an object."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.commands.import_data import ImportResult
from tests.golden import comparable

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path("tests/data/golden")
FILES = ("texts.json", "ranked.json", "answers.jsonl", "graded.json")


def test_the_manifest_round_trips():
    doc = json.loads((REPO / GOLDEN / "import" / "import.manifest.json").read_text(encoding="utf-8"))
    result = ImportResult.from_json(doc)
    assert result.to_json() == doc
    assert result.meta.score_scale == "0-1" and result.graded_name == "graded.json"


def test_rerun_writes_the_golden_files(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "import"
    done = CliRunner().invoke(app, ["import", "ragas", str(GOLDEN / "ragas.json"), "--out", str(out), "--system", "mine",
                                    "--score-col", "answer_correctness"])
    assert done.exit_code == 0, done.output
    assert done.stderr.splitlines() == [
        f"imported 3 records from {GOLDEN / 'ragas.json'} into {out}/: texts.json, ranked.json, answers.jsonl, graded.json",
        "score column 'answer_correctness' read as 0-1 (every score in [0, 1]): grade = 1 + 4·score"]
    for name in FILES:
        assert (out / name).read_bytes() == (REPO / GOLDEN / "import" / name).read_bytes(), name
    new, old = (json.loads(p.read_text()) for p in (out / "import.manifest.json", REPO / GOLDEN / "import" / "import.manifest.json"))
    assert comparable(new) == comparable(old)
    assert new["run_record"]["command"] == "ragdiag import ragas"
