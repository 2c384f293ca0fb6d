"""Without the remote-call libraries (httpx, openai, voyageai, tenacity, requests) the remote stack imports,
and the first call that needs one names the extra to install (in a subprocess where they cannot be imported)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BLOCKER = """
import importlib.abc, sys
BLOCKED = {"httpx", "openai", "voyageai", "tenacity", "requests"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
"""


def _run(body: str, tmp_path: Path) -> list[str]:
    script = BLOCKER + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "RAGDIAG_CACHE_DIR": str(tmp_path), "OPENAI_API_KEY": "k",
                               "VOYAGE_API_KEY": "k", "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_remote_stack_imports_without_its_libraries_and_names_the_extra(tmp_path):
    lines = _run("""
        import ragdiag.cli, ragdiag.llm.client, ragdiag.retrieval.api_embedders, ragdiag.remote.cache_admin
        from ragdiag.errors import RagdiagError
        from ragdiag.llm.client import ClientConfig, LLMClient
        from ragdiag.retrieval.embedders import load_embedder
        client = LLMClient(ClientConfig(base_url="http://127.0.0.1:9/v1"))
        for name, call in [("chat", lambda: client.chat(client.request([{"role": "user", "content": "q"}], "p@v1"))),
                           ("openai", lambda: load_embedder("openai:m", cache_mode="off").encode(["x"])),
                           ("voyage", lambda: load_embedder("voyage:m", cache_mode="off").encode(["x"]))]:
            try:
                call()
            except RagdiagError as err:
                print(name, "|", err)
        print("loaded", sorted(m for m in ("httpx", "openai", "voyageai", "tenacity", "requests") if m in sys.modules))
    """, tmp_path)
    assert lines[-1] == "loaded []"
    messages = dict(line.split(" | ", 1) for line in lines[:-1])
    assert set(messages) == {"chat", "openai", "voyage"}
    openai = "LLM and OpenAI embedding calls need the 'openai' package, which is not installed: pip install -e '.[llm]' in the ragdiag clone"
    assert messages["chat"] == messages["openai"] == openai
    assert messages["voyage"] == "Voyage embeddings need the 'voyageai' package, which is not installed: pip install -e '.[embed]' in the ragdiag clone"
