"""Where a result's numbers come from, said loudly wherever it is shown: grades simulated by the
bundled sample's formula, or replies from ragdiag's local test server (never an LLM's output)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TEST_SERVER_MODELS = ("ragdiag-test-server",)
SIMULATED_LINE = ("SIMULATED GRADES (bundled sample): the grades come from a formula, not an LLM — "
                  "the numbers show the mechanics, not answer quality")
TEST_SERVER_LINE = ("TEST SERVER: the replies and grades are ragdiag's test-server output, not an LLM's — "
                    "they show the mechanics, not answer quality")


def is_test_server_model(model: Any) -> bool:
    return str(model) in TEST_SERVER_MODELS


def test_server_line(models: Iterable[Any]) -> str | None:
    """The test-server line when any of ``models`` is the test server's model name."""
    return TEST_SERVER_LINE if any(is_test_server_model(m) for m in models) else None
