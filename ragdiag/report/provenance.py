"""Where a result's numbers come from, said loudly wherever it is shown: grades simulated by the
bundled sample's formula (or any file whose rows say ``"simulated_grades": true``), or replies from
ragdiag's local test servers (never an LLM's output). The test servers mark their replies; the run
record counts the marked replies a result was computed from (:mod:`ragdiag.io.provenance`). The
model name is only a fallback for files written before the mark existed. Which files say so is read
by the commands (:mod:`ragdiag.commands.provenance`): this module opens none."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragdiag.io.provenance import TEST_SERVER_MARK, marked_replies

__all__ = ["SIMULATED_FILE_LINE", "SIMULATED_LINE", "TEST_SERVER_LINE", "TEST_SERVER_MODELS", "is_test_server_model",
           "marked_replies", "record_marked", "test_server_line"]

TEST_SERVER_MODELS = (TEST_SERVER_MARK,)
SIMULATED_LINE = ("SIMULATED GRADES (bundled sample): the grades come from a formula, not an LLM — "
                  "the numbers show the mechanics, not answer quality")
TEST_SERVER_LINE = ("TEST SERVER: the replies and grades are ragdiag's test-server output, not an LLM's — "
                    "they show the mechanics, not answer quality")


def is_test_server_model(model: Any) -> bool:
    return str(model) in TEST_SERVER_MODELS


SIMULATED_FILE_LINE = ("SIMULATED GRADES: {files} say \"simulated_grades\": true — the numbers show the mechanics, "
                       "not a judge's or a person's agreement")


def record_marked(record: Mapping[str, Any] | None) -> int:
    """How many test-server replies a run record says its result was computed from."""
    value = (record or {}).get("test_server_replies") if isinstance(record, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def test_server_line(models: Iterable[Any] = (), marked: int = 0) -> str | None:
    """The test-server line when ``marked`` replies carried the test servers' mark (or, for older
    files, a model is the test server's model name)."""
    return TEST_SERVER_LINE if marked > 0 or any(is_test_server_model(m) for m in models) else None
