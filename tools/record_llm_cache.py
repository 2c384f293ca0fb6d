"""Re-record ``fixtures/llm-cache/``: run the real ``ragdiag pipeline`` on a small slice of the bundled
sample against the local test chat server, then export the call cache.

    .venv/bin/python tools/record_llm_cache.py

The replies are the test server's deterministic output (see tests/servers/chat_server.py), not an
LLM's answers or judgements. The model name recorded is ``ragdiag-test-server`` to make that plain.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

from ragdiag.cli import app  # noqa: E402
from ragdiag.remote.transport import use_transport  # noqa: E402
from ragdiag.resources import resource_path  # noqa: E402
from tests.servers.chat_server import ChatServer  # noqa: E402

QUERIES = ["M-0", "M-1", "M-2", "M-3"]
MODEL = "ragdiag-test-server"
K = "2,3,5"
REPLAY_BASE_URL = "http://127.0.0.1:8000/v1"  # recorded under this URL (cache keys hold scheme, host, port, path)


def pipeline_args(folder: Path, out_dir: Path, cache_dir: Path, base_url: str) -> list[str]:
    """The pipeline command line used to record and to replay."""
    return ["pipeline", "--texts", str(folder / "samples_texts.json"), "--ranked", str(folder / "samples_ranked.json"),
            "--ks", K, "--out-dir", str(out_dir), "--model", MODEL, "--base-url", base_url, "--cache-dir", str(cache_dir),
            "--segments", "nw", "--min-samples", "5", "--workers", "4", "--no-progress"]


def main() -> None:
    sample = resource_path("fixtures", "retrieval-response-sample")
    target = resource_path("fixtures", "llm-cache")
    target.mkdir(parents=True, exist_ok=True)
    for name in ("samples_texts.json", "samples_ranked.json"):
        records = [r for r in json.loads((sample / name).read_text()) if r["id"] in QUERIES]
        (target / name).write_text(json.dumps(records, ensure_ascii=False))
    os.environ.setdefault("OPENAI_API_KEY", "test")
    with tempfile.TemporaryDirectory() as tmp, ChatServer() as server, use_transport(server.forwarding_transport()):
        tmp_dir = Path(tmp)  # requests to REPLAY_BASE_URL reach the test server on its free port
        result = CliRunner().invoke(app, pipeline_args(target, tmp_dir / "out", tmp_dir / "cache", REPLAY_BASE_URL))
        if result.exit_code != 0:
            raise SystemExit(result.output)
        exported = CliRunner().invoke(app, ["cache", "export", "--out", str(target / "calls.jsonl"),
                                            "--cache-dir", str(tmp_dir / "cache")])
        print(exported.output.strip(), f"({server.requests} requests to the test server)")
        (target / "graded.json").write_text((tmp_dir / "out" / "graded.json").read_text())


if __name__ == "__main__":
    main()
