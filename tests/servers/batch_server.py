"""The chat test server plus the OpenAI Files and Batch APIs (127.0.0.1 only), for the batch tests.

Routes beyond :class:`tests.servers.chat_server.ChatServer`'s ``POST /v1/chat/completions``:

- ``POST /v1/files`` (multipart: ``purpose``, ``file``), ``GET /v1/files/{id}``,
  ``GET /v1/files/{id}/content``;
- ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.

A batch moves one status per ``retrieve``: ``validating → in_progress → finalizing → completed``
(``outcome="failed"`` stops at ``failed`` after validating, with ``errors``; ``outcome="expired"``
ends ``expired`` after half the requests). Each request line is answered by the chat server's reply
logic (deterministic test-server text, never an LLM's output); ``fail_custom_ids`` (or
``fail_every``) puts requests into the error file instead (partial failures). ``cancel`` moves the
batch to ``cancelling`` then ``cancelled``. Counters: ``uploads``, ``batches_created``, ``retrieves``.
Output and error files use the Batch API's line format: ``id``, ``custom_id``, ``response``
(``status_code``, ``request_id``, ``body``), ``error``.

Usage (the README's batch loop)::

    python -m tests.servers.batch_server --port 8766
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from tests.servers.chat_server import ChatServer
from tests.servers.json_http import send_bytes, send_json

_STEPS = ("validating", "in_progress", "finalizing", "completed")
TERMINAL = ("completed", "failed", "expired", "cancelled")


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Form fields of a multipart/form-data body: name → (filename, bytes)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    return {part.get_param("name", header="content-disposition"): (part.get_filename(), part.get_payload(decode=True))
            for part in message.iter_parts()}


class BatchServer(ChatServer):
    """Chat completions, Files and Batches on one local port; replies are the chat test server's."""

    def __init__(self, latency: float = 0.0, api_key: str | None = None, port: int = 0, outcome: str = "completed",
                 fail_custom_ids: tuple[str, ...] = (), fail_every: int = 0) -> None:
        super().__init__(latency, api_key=api_key)
        self.port = port
        self.outcome = outcome
        self.fail_custom_ids = set(fail_custom_ids)
        self.fail_every = fail_every
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads = 0
        self.batches_created = 0
        self.retrieves = 0

    def start(self):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    # -- files ---------------------------------------------------------------------------------
    def _file(self, name: str, data: bytes, purpose: str) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = {"data": data, "object": {
                "id": file_id, "object": "file", "bytes": len(data), "created_at": 0, "filename": name,
                "purpose": purpose, "status": "processed"}}
        return self.files[file_id]["object"]

    def upload(self, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        fields = _multipart(content_type, raw)
        if "file" not in fields:
            return 400, {"error": {"message": "no file part", "type": "invalid_request_error"}}
        with self._lock:
            self.uploads += 1
        name, data = fields["file"]
        return 200, self._file(name or "upload.jsonl", data, (fields.get("purpose") or (None, b"batch"))[1].decode())

    # -- batches -------------------------------------------------------------------------------
    def create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        file_id = body.get("input_file_id")
        if file_id not in self.files:
            return 400, {"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}}
        lines = [json.loads(line) for line in self.files[file_id]["data"].splitlines() if line.strip()]
        with self._lock:
            self.batches_created += 1
            batch_id = f"batch_{len(self.batches) + 1}"
            self.batches[batch_id] = {"lines": lines, "step": 0, "object": {
                "id": batch_id, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
                "input_file_id": file_id, "completion_window": body.get("completion_window", "24h"),
                "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": 0,
                "metadata": body.get("metadata"), "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}}
        return 200, self.batches[batch_id]["object"]

    def _finish(self, batch: dict[str, Any], status: str, answered: int) -> None:
        """Answer the first ``answered`` lines (the rest expire), write output and error files."""
        out, errors = [], []
        for number, line in enumerate(batch["lines"]):
            request_id = f"req_{batch['object']['id']}_{number}"
            if number >= answered:
                errors.append({"id": f"batch_req_{number}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "batch_expired", "message": "This request could not be executed "
                                         "before the completion window expired."}})
            elif line["custom_id"] in self.fail_custom_ids or (self.fail_every and (number + 1) % self.fail_every == 0):
                errors.append({"id": f"batch_req_{number}", "custom_id": line["custom_id"], "response": {
                    "status_code": 500, "request_id": request_id,
                    "body": {"error": {"message": "test server failure", "type": "server_error"}}}, "error": None})
            else:
                _, body = self.reply(line["body"])
                out.append({"id": f"batch_req_{number}", "custom_id": line["custom_id"], "response": {
                    "status_code": 200, "request_id": request_id, "body": body}, "error": None})
        obj = batch["object"]

        def jsonl(rows: list[dict[str, Any]]) -> bytes:
            return b"".join(json.dumps(r).encode() + b"\n" for r in rows)

        if out:
            obj["output_file_id"] = self._file(f"{obj['id']}_output.jsonl", jsonl(out), "batch_output")["id"]
        if errors:
            obj["error_file_id"] = self._file(f"{obj['id']}_error.jsonl", jsonl(errors), "batch_output")["id"]
        obj["request_counts"] = {"total": len(batch["lines"]), "completed": len(out), "failed": len(errors)}
        obj["status"] = status

    def retrieve(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        if batch_id not in self.batches:
            return 404, {"error": {"message": f"no batch {batch_id}", "type": "invalid_request_error"}}
        finish = None
        with self._lock:
            self.retrieves += 1
            batch = self.batches[batch_id]
            obj = batch["object"]
            if obj["status"] == "cancelling":
                obj["status"] = "cancelled"
            elif obj["status"] not in TERMINAL:
                batch["step"] += 1
                if self.outcome == "failed":
                    obj["status"] = "failed"
                    obj["errors"] = {"object": "list", "data": [{"code": "invalid_request", "line": 1,
                                                                 "message": "test server: the batch failed validation"}]}
                elif self.outcome == "expired" and batch["step"] >= 2:
                    finish = ("expired", len(batch["lines"]) // 2)
                elif _STEPS[batch["step"]] == "completed":
                    finish = ("completed", len(batch["lines"]))
                else:
                    obj["status"] = _STEPS[batch["step"]]
        if finish is not None:  # outside the lock: the replies and the new files take it themselves
            self._finish(batch, *finish)
        return 200, obj

    def cancel(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        if batch_id not in self.batches:
            return 404, {"error": {"message": f"no batch {batch_id}", "type": "invalid_request_error"}}
        with self._lock:
            obj = self.batches[batch_id]["object"]
            if obj["status"] not in TERMINAL:
                obj["status"] = "cancelling"
        return 200, obj

    # -- routing -------------------------------------------------------------------------------
    def _handler(self):
        chat_handler = super()._handler()
        server = self

        class Handler(chat_handler):
            def _authorised(self) -> bool:
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    send_json(self, 401, {"error": {"message": "invalid api key", "type": "test"}}, {})
                    return False
                return True

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if parts[:3] == ["", "v1", "files"] and len(parts) in (4, 5) and self._authorised():
                    entry = server.files.get(parts[3])
                    if entry is None:
                        send_json(self, 404, {"error": {"message": f"no file {parts[3]}"}}, {})
                    elif len(parts) == 5 and parts[4] == "content":
                        send_bytes(self, 200, entry["data"], "application/octet-stream")
                    else:
                        send_json(self, 200, entry["object"], {})
                elif parts[:3] == ["", "v1", "batches"] and len(parts) == 4 and self._authorised():
                    send_json(self, *server.retrieve(parts[3]), {})
                elif parts[:3] not in (["", "v1", "files"], ["", "v1", "batches"]):
                    super().do_GET()

            def do_POST(self) -> None:
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if parts[:3] not in (["", "v1", "files"], ["", "v1", "batches"]):
                    super().do_POST()
                    return
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not self._authorised():
                    return
                if parts == ["", "v1", "files"]:
                    send_json(self, *server.upload(self.headers.get("Content-Type", ""), raw), {})
                elif parts == ["", "v1", "batches"]:
                    send_json(self, *server.create_batch(json.loads(raw or b"{}")), {})
                elif len(parts) == 5 and parts[4] == "cancel":
                    send_json(self, *server.cancel(parts[3]), {})
                else:
                    send_json(self, 404, {"error": {"message": f"no route {self.path}"}}, {})

        return Handler


def run_batch_file(requests: str) -> None:
    """Print, in vLLM ``run-batch``'s output format, the test server's replies to a request file —
    a stand-in for ``vllm run-batch -i FILE -o OUT`` on a machine without vLLM (never an LLM's output)."""
    server = BatchServer()
    with open(requests, encoding="utf-8") as handle:
        for number, raw in enumerate(line for line in handle if line.strip()):
            line = json.loads(raw)
            _, body = server.reply(line["body"])
            print(json.dumps({"id": f"vllm-test-{number}", "custom_id": line["custom_id"], "response": {
                "status_code": 200, "request_id": f"vllm-batch-test-{number}", "body": body}, "error": None}))


def main() -> None:
    """``python -m tests.servers.batch_server --port 8766``: serve until interrupted;
    ``--answer-file REQUESTS.jsonl``: print the replies to a request file in vLLM's output format."""
    import argparse

    parser = argparse.ArgumentParser(description="The chat + Files + Batch API test server (not an LLM) on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--fail-every", type=int, default=0, help="put every N-th request of a batch in the error file")
    parser.add_argument("--answer-file", help="answer this batch request file offline (vLLM run-batch output format)")
    args = parser.parse_args()
    if args.answer_file:
        run_batch_file(args.answer_file)
        return
    with BatchServer(port=args.port, fail_every=args.fail_every) as server:
        print(f"batch test server (not an LLM) at {server.base_url}; Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
