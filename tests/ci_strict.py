"""CI strict mode (issue 18): in CI (``CI=true``, set by every CI service and by ``.ci/run``) a test
whose required component is missing FAILS; in a user's clone it skips with the reason.

The components: the project wheel build (tests/architecture/test_light_install.py), the embedded
PostgreSQL with pgvector (tests/bench/test_pgvector_robustness.py), Chromium and Playwright
(tests/report/test_report_browser.py), Ray (the ray extra: tests/engine/).
"""

from __future__ import annotations

import os
from types import ModuleType

import pytest

TRUE_VALUES = ("true", "1", "yes")


def in_ci() -> bool:
    """True when ``$CI`` says this is a CI run."""
    return os.environ.get("CI", "").strip().lower() in TRUE_VALUES


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason`` in a clone; fail with it in CI, where the component must be there."""
    if in_ci():
        pytest.fail(f"CI=true: a required component is missing, so this test fails instead of skipping: {reason}",
                    pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def import_or_skip_or_fail(module: str, reason: str) -> ModuleType:
    """``pytest.importorskip`` that fails in CI."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        skip_or_fail(reason)
        raise  # unreachable: skip_or_fail always raises
