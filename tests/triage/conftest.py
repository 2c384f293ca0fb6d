"""The fault-model test server the triage CLI tests share (one per test module)."""

from __future__ import annotations

import pytest

from ragdiag.resources import resource_path
from tests.servers.fault_server import FaultServer, load_model

FIXTURE = resource_path("fixtures", "triage-synthetic")


@pytest.fixture(scope="module")
def server():
    """The fault server on the bundled synthetic set, with a dummy key and no base URL from the shell."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "test")
        patch.delenv("OPENAI_BASE_URL", raising=False)
        with FaultServer(load_model(FIXTURE / "model.json")) as fault:
            yield fault
