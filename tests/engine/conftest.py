"""One real local Ray instance for the engine tests (2 CPUs, no dashboard), stopped after the module."""

from __future__ import annotations

import pytest

from tests.ci_strict import import_or_skip_or_fail


@pytest.fixture(scope="module")
def ray_cluster():
    ray = import_or_skip_or_fail("ray", "the ray extra is not installed (pip install -e '.[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()
