"""The golden runs of ``generate``, ``grade``, ``pipeline`` and ``pipeline --corpus``: small inputs
(tests/pipeline/tiny_data.py, a 30-passage synthetic BEIR folder ranked by BM25), replies from the
local chat test server (test-server output, not an LLM's), relative paths so the files do not name
the machine, model name ``ragdiag-test-server`` so every file says where its replies came from.
The golden files were written by the code before the issue-17 refactor (commit 0dcec01);
``python -m tests.pipeline.answers_golden`` rewrites them with the code on the path."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.golden import comparable

GOLDEN = Path(__file__).resolve().parent / "golden"
# output file (relative to the run folder) → golden file name
FILES = {
    "answers.jsonl": "generate.answers.jsonl", "answers.jsonl.manifest.json": "generate.manifest.json",
    "graded.json": "grade.graded.json", "graded.json.manifest.json": "grade.manifest.json",
    "pipe/correlation.json": "pipeline.correlation.json",
    "pipe/answers.jsonl.manifest.json": "pipeline.answers.manifest.json",
    "pipe/graded.json.manifest.json": "pipeline.graded.manifest.json",
    "corpus/corpus_run.json": "corpus_run.json",
    "corpus/graded.json.manifest.json": "corpus.graded.manifest.json",
}
# the chat server's port is in the files (meta.llm.provider, the answers' sha256): a fixed one
PORT = 47917


def golden_server():
    """The chat test server on :data:`PORT` of 127.0.0.1 (OSError when the port is taken)."""
    import threading
    from http.server import ThreadingHTTPServer

    from tests.servers.chat_server import ChatServer

    class FixedPortChatServer(ChatServer):
        def start(self):
            self._httpd = ThreadingHTTPServer(("127.0.0.1", PORT), self._handler())
            self._httpd.daemon_threads = True
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            daemon=True)
            self._thread.start()
            return self

    return FixedPortChatServer()


def run_all(workdir: Path, base_url: str) -> None:
    """Run the four commands inside ``workdir`` (inputs written there first) against ``base_url``."""
    from ragdiag.cli import app
    from tests.pipeline.tiny_data import write_tiny
    from tests.sweep.synthetic_corpus import write_corpus

    here, argv = Path.cwd(), sys.argv
    os.chdir(workdir)
    try:
        write_tiny(Path("data"))
        write_corpus(Path("synthetic"), n_docs=30, n_queries=4)
        llm = ["--model", "ragdiag-test-server", "--base-url", base_url, "--cache-dir", "cache", "--no-progress",
               "--workers", "1"]
        commands = [
            ["generate", "--texts", "data/samples_texts.json", "--ranked", "data/samples_ranked.json", "--k", "2,5",
             "--out", "answers.jsonl"],
            ["grade", "--answers", "answers.jsonl", "--out", "graded.json", "--repeats", "2"],
            ["pipeline", "--texts", "data/samples_texts.json", "--ranked", "data/samples_ranked.json", "--k", "2,3,5",
             "--segments", "nw", "--min-samples", "3", "--out-dir", "pipe"],
            ["pipeline", "--corpus", "synthetic", "--retriever", "bm25", "--k", "1,3", "--segments", "pooled",
             "--min-samples", "1", "--out-dir", "corpus"],
        ]
        for args in commands:
            sys.argv = ["ragdiag", *args, *llm]  # recorded in the correlation's meta.argv
            result = CliRunner().invoke(app, [*args, *llm])
            if result.exit_code != 0:
                raise RuntimeError(f"ragdiag {' '.join(args)} failed ({result.exit_code}): {result.output}")
    finally:
        os.chdir(here)
        sys.argv = argv


def read_output(path: Path) -> Any:
    """A JSON file, or a JSON-lines file as a list of its records."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines()]
    return json.loads(text)


def without_volatile(doc: Any) -> Any:
    """``doc`` as a golden comparison sees it (:func:`tests.golden.comparable`): no run record, timing
    or version fields, the server's address as PORT."""
    return comparable(doc)


def main() -> None:
    os.environ["OPENAI_API_KEY"] = "test"
    os.environ.pop("OPENAI_BASE_URL", None)
    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, golden_server() as server:
        run_all(Path(tmp), server.base_url)
        for produced, name in FILES.items():
            shutil.copyfile(Path(tmp) / produced, GOLDEN / name)


if __name__ == "__main__":
    main()
