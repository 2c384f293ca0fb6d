"""Connecting to Ray for one run: an existing cluster (``--ray-address``, ``$RAY_ADDRESS``, a running
one) or a local instance started for the run and stopped after it, with the checks that turn a
cluster that cannot do the work into one line (unreachable address, no GPUs, missing packages).

Ray itself does the scheduling, the actor restarts and the task retries (``ray.init``, Ray Data's
actor pools); this module only opens, checks and closes.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.extras import require

CONNECT_TIMEOUT_S = 5.0  # a TCP connection to the cluster's address must open within this
CHECK_TIMEOUT_S = 120.0  # the package check task must come back within this


def _ray() -> Any:
    return require("ray")


def address_host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of ``host:port`` or ``ray://host:port``; None for ``auto`` / ``local``."""
    if address in ("auto", "local"):
        return None
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RagdiagError(f"--ray-address '{address}': expected auto, local, host:port or ray://host:port")
    return host.strip("[]"), int(port)


def check_reachable(address: str) -> None:
    """One TCP connection to the address, so an unreachable cluster is one line, not Ray's long wait."""
    target = address_host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as err:
        raise RagdiagError(f"--ray-address {address}: cannot reach a Ray cluster there ({err.strerror or err}); "
                           "start one (`ray start --head`) or give the address it printed") from None


@dataclass
class RaySession:
    """One driver connection; ``started`` when this run started the local instance (stopped on close)."""

    address: str
    started: bool
    owned: bool  # this session called ray.init (and so calls ray.shutdown)
    checked: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, settings: Any) -> RaySession:
        ray = _ray()
        if ray.is_initialized():  # a driver that already joined a cluster (a notebook, the tests)
            session = cls(ray.get_runtime_context().gcs_address, False, False)
        else:
            session = cls._connect(ray, settings.ray_address)
        try:
            session.check_gpus(settings.gpus_per_worker)
        except BaseException:
            session.close()
            raise
        return session

    @classmethod
    def _connect(cls, ray: Any, address: str) -> RaySession:
        kwargs = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
        if address == "auto" and os.environ.get("RAY_ADDRESS"):
            address = os.environ["RAY_ADDRESS"]
        if address == "auto":
            try:
                ray.init(address="auto", **kwargs)
                return cls(ray.get_runtime_context().gcs_address, False, True)
            except ConnectionError:
                address = "local"  # no running cluster: start one for this run
        if address == "local":
            ray.init(num_cpus=os.cpu_count() or 1, **kwargs)
            return cls(ray.get_runtime_context().gcs_address, True, True)
        check_reachable(address)
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise RagdiagError(f"--ray-address {address}: cannot join the Ray cluster ({_first_line(err)})") from None
        return cls(address, False, True)

    def check_gpus(self, per_worker: float) -> None:
        """Refuse ``--gpus-per-worker`` on a cluster whose nodes have fewer GPUs than one worker needs."""
        if per_worker <= 0:
            return
        nodes = [n for n in _ray().nodes() if n.get("Alive")]
        most = max((float(n.get("Resources", {}).get("GPU", 0)) for n in nodes), default=0.0)
        if most < per_worker:
            raise RagdiagError(f"--gpus-per-worker {per_worker:g}: the Ray cluster at {self.address} has "
                               f"{'no GPU' if most == 0 else f'at most {most:g} GPUs on a node'}; give "
                               "--gpus-per-worker 0 or a cluster with GPU nodes")

    def check_packages(self, modules: list[str]) -> None:
        """Import ``modules`` in a task on the cluster; one line naming what its workers lack."""
        todo = [m for m in modules if m not in self.checked]
        if not todo:
            return
        ray = _ray()

        def missing(names: list[str]) -> list[str]:
            import importlib

            absent = []
            for name in names:
                try:
                    importlib.import_module(name)
                except ImportError:
                    absent.append(name)
            return absent

        try:
            absent = ray.get(ray.remote(num_cpus=0)(missing).remote(todo), timeout=CHECK_TIMEOUT_S)
        except Exception as err:  # GetTimeoutError, RayError: the cluster cannot run a task
            raise RagdiagError(f"the Ray cluster at {self.address} did not run a check task ({_first_line(err)})") from None
        if absent:
            from ragdiag.extras import install_hint

            raise RagdiagError(f"the Ray cluster at {self.address} lacks {', '.join(absent)} on its workers: install "
                               f"ragdiag there ({install_hint(absent[0])}) or give a runtime_env")
        self.checked.update(todo)

    def close(self) -> None:
        """Disconnect; a local instance this run started is stopped with its processes."""
        if self.owned:
            _ray().shutdown()


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
