"""A batch folder's state read back from disk (:mod:`ragdiag.llm.batch_state`): a tampered
``batches.json`` or index file, or a request file gone before upload, is one line naming the file and
the field, exit 2, for ``batch status|collect`` and ``generate --batch`` alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.test_batch import FAST, cli, generate
from tests.servers.batch_server import BatchServer


def one_error(res, *needles: str) -> str:
    errors = [line for line in res.output.splitlines() if line.startswith("ragdiag: error:")]
    assert res.exit_code == 2 and len(errors) == 1 and "Traceback" not in res.output, res.output
    assert all(n in errors[0] for n in needles), errors[0]
    return errors[0]


def vllm_folder(tiny, server, tmp_path) -> Path:
    res = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "vllm-file", "--batch-dir",
                   tmp_path / "b", "--no-progress")
    assert res.exit_code == 4, res.output
    return tmp_path / "b"


def _tamper_state(folder: Path, change) -> None:
    state = folder / "batches.json"
    data = json.loads(state.read_text())
    state.write_text(json.dumps(change(data)))


@pytest.mark.parametrize("change, needles", [
    (lambda d: d["entries"], ["batches.json: expected a JSON object with 'entries', got list"]),
    (lambda d: {**d, "entries": [1, 2]}, ["batches.json: entry 1: expected an object, got int"]),
    (lambda d: {**d, "entries": 3}, ["batches.json: field 'entries': expected a list"]),
    (lambda d: {**d, "entries": [{k: v for k, v in d["entries"][0].items() if k != "collected"}]},
     ["batches.json: entry 1: field 'collected'"]),
    (lambda d: {**d, "entries": [{**d["entries"][0], "requests": "11"}]}, ["entry 1: field 'requests'"]),
    (lambda d: {**d, "entries": [{**d["entries"][0], "index": "../../outside.jsonl"}]},
     ["entry 1: field 'index': expected a file name inside the folder"]),
])
def test_a_tampered_batches_json_is_one_line_naming_entry_and_field(tiny, server, tmp_path, change, needles):
    folder = vllm_folder(tiny, server, tmp_path)
    _tamper_state(folder, change)
    for res in (cli("batch", "status", folder), cli("batch", "collect", folder, "--from", tmp_path / "a.jsonl"),
                generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "vllm-file",
                         "--batch-dir", folder, "--no-progress")):
        one_error(res, *needles)


def test_an_index_row_without_its_request_is_named(tiny, server, tmp_path):
    folder = vllm_folder(tiny, server, tmp_path)
    index = folder / "requests-0001.index.jsonl"
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    output = tmp_path / "output.jsonl"
    output.write_text("".join(json.dumps({"custom_id": r["custom_id"], "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": "an answer"}}]}}, "error": None}) + "\n" for r in rows))
    del rows[1]["request"]
    index.write_text("".join(json.dumps(r) + "\n" for r in rows))
    needles = ["requests-0001.index.jsonl: line 2: field 'request': missing or not an object"]
    one_error(cli("batch", "collect", folder, "--from", output), *needles)
    one_error(generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", "--batch", "vllm-file",
                       "--batch-dir", folder, "--no-progress"), *needles)
    rows[1]["request"] = {"model": "m", "messages": "hello", "params": {}}
    index.write_text("".join(json.dumps(r) + "\n" for r in rows))
    one_error(cli("batch", "collect", folder, "--from", output), "line 2: field 'request.messages': expected a list")


class UploadFailsOnce(BatchServer):
    """The batch test server, but its first file upload is a 500 (the run stops with the file written)."""

    def upload(self, content_type, raw):
        if not getattr(self, "_failed", False):
            self._failed = True
            return 500, {"error": {"message": "test server: upload failed", "type": "server_error"}}
        return super().upload(content_type, raw)


def test_a_request_file_removed_before_upload_is_named_and_cancel_drops_it(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    args = ["--batch", "openai", "--batch-dir", tmp_path / "b", "--max-retries", "0", *FAST]
    with UploadFailsOnce() as server:
        first = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
        one_error(first, "uploading requests-0001.jsonl failed")
        (tmp_path / "b" / "requests-0001.jsonl").unlink()
        again = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
        one_error(again, "requests-0001.jsonl: missing (entry 1 of", "field 'file', not yet uploaded",
                  "ragdiag batch cancel")
        one_error(cli("batch", "status", tmp_path / "b"), "requests-0001.jsonl: missing")
        cancel = cli("batch", "cancel", tmp_path / "b", "--format", "json")
        assert cancel.exit_code == 0 and json.loads(cancel.output)["cancelled"] == ["requests-0001.jsonl"]
        done = generate(tiny, tmp_path / "a.jsonl", server, tmp_path / "cache", *args)
        assert done.exit_code == 0, done.output
        assert (tmp_path / "b" / "requests-0002.jsonl").is_file() and server.batches_created == 1
