"""The run record: one layout, one key, inputs hashed, credentials never recorded."""

from __future__ import annotations

import hashlib
import json

from ragdiag.io.run_record import (
    RUN_RECORD_KEY,
    describe_input,
    stamp,
    start_run,
    without_run_record,
)


def test_record_carries_inputs_with_sha256_and_the_documented_fields(tmp_path):
    data = tmp_path / "graded.json"
    data.write_bytes(b"[]\n")
    record = start_run("ragdiag correlate", inputs=[data, None, "msmarco"], seeds={"bootstrap": 7},
                       models={"judge": "m"}, prompts={"grading": "v2"}, cache="replay")
    result = stamp({"values": [1]}, record)
    rec = json.loads(json.dumps(result))[RUN_RECORD_KEY]
    assert set(rec) == {"command", "argv", "ragdiag_version", "versions", "python", "models", "prompts", "seeds",
                        "inputs", "cache", "started_at", "finished_at", "host", "settings"}
    assert rec["inputs"][0] == {"path": str(data), "bytes": 3, "sha256": hashlib.sha256(b"[]\n").hexdigest()}
    assert rec["inputs"][1] == {"name": "msmarco"}
    assert rec["seeds"] == {"bootstrap": 7} and rec["cache"] == "replay" and rec["finished_at"] >= rec["started_at"]
    assert "numpy" in rec["versions"]
    assert without_run_record(result) == {"values": [1]}


def test_folder_digest_changes_with_any_file(tmp_path):
    (tmp_path / "a.txt").write_text("one")
    first = describe_input(tmp_path)["sha256"]
    (tmp_path / "a.txt").write_text("two")
    assert describe_input(tmp_path)["sha256"] != first
