"""One real local Ray instance for the engine tests (2 CPUs, no dashboard, on 127.0.0.1 only: the
loopback mode of a local instance ragdiag starts), stopped after the module."""

from __future__ import annotations

import pytest

from tests.ci_strict import import_or_skip_or_fail


@pytest.fixture(scope="module")
def ray_cluster():
    ray = import_or_skip_or_fail("ray", "the ray extra is not installed (pip install -e '.[ray]')")
    from ragdiag.engine.ray_session import _loopback_only

    with _loopback_only(ray):
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()
