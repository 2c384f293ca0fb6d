"""Connecting to Ray for one run: an existing cluster (``--ray-address``, ``$RAY_ADDRESS``, a running
one) or a local instance started for the run and stopped after it, with the checks that turn a
cluster that cannot do the work into one line (unreachable address, no GPUs, missing packages).

Ray itself does the scheduling, the actor restarts and the task retries (``ray.init``, Ray Data's
actor pools); this module only opens, checks and closes.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.extras import require

CONNECT_TIMEOUT_S = 5.0  # a TCP connection to the cluster's address must open within this
HANDSHAKE_TIMEOUT_S = 10.0  # … and a gRPC (HTTP/2) handshake complete within this: Ray speaks gRPC there
CHECK_TIMEOUT_S = 600.0  # the package check task must come back within this (it imports nothing, but a busy or
#                          scaling cluster may take minutes to give it a worker)
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's single-machine mode, every process on 127.0.0.1


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
    """One TCP connection to the address, then one gRPC handshake (a Ray head's GCS and a Ray Client
    server both speak gRPC), so an unreachable address or one where something else answers (an HTTP
    server) is one line within seconds, not minutes of Ray's own retries."""
    target = address_host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as err:
        raise RagdiagError(f"--ray-address {address}: cannot reach a Ray cluster there ({err.strerror or err}); "
                           "start one (`ray start --head`) or give the address it printed") from None
    if os.environ.get("RAY_USE_TLS", "0") in ("", "0") and not _speaks_http2(*target):
        raise RagdiagError(f"--ray-address {address}: something answers there, but it is not a Ray cluster (no gRPC "
                           f"handshake within {HANDSHAKE_TIMEOUT_S:g} s); give the address `ray start --head` printed "
                           "(its GCS port, 6379 by default)")


H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"  # RFC 9113 §3.4, then an empty SETTINGS frame (§6.5)
H2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _speaks_http2(host: str, port: int) -> bool:
    """Whether the server answers the HTTP/2 client preface with its own: a SETTINGS frame (type 4) on
    stream 0 (RFC 9113 §3.4). A Ray head's GCS and a Ray Client server are gRPC servers, and gRPC is
    HTTP/2; an HTTP/1.1 server answers ``HTTP/1.1 400`` instead, and a silent one not at all."""
    deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S) as conn:
            conn.sendall(H2_PREFACE + H2_SETTINGS)
            header = b""
            while len(header) < 9:
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = conn.recv(9 - len(header))
                if not chunk:
                    return False
                header += chunk
    except OSError:  # timed out, reset
        return False
    return header[3] == 0x4 and int.from_bytes(header[5:9], "big") & 0x7FFFFFFF == 0


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
            with _loopback_only(ray):
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
        """Look ``modules`` up in a task on the cluster (``importlib.util.find_spec``: found, not imported,
        so the task costs milliseconds, not a torch import); one line naming what its workers lack. A
        local instance this run started runs this interpreter: nothing to check."""
        todo = [m for m in modules if m not in self.checked]
        if not todo or self.started:
            return
        ray = _ray()

        def missing(names: list[str]) -> list[str]:
            from importlib.util import find_spec

            absent = []
            for name in names:
                try:
                    found = find_spec(name) is not None
                except (ImportError, ValueError):  # a dotted name whose parent is absent
                    found = False
                if not found:
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


@contextmanager
def _loopback_only(ray: Any) -> Iterator[None]:
    """While a local instance starts: Ray's single-machine mode (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``),
    in which the node's address is 127.0.0.1, so its GCS, raylet and workers listen on loopback only
    (not on the machine's network address). Its processes read the variable; this driver read it when
    ray was imported, so its constant is set too, and both are restored after."""
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    before_env, before_flag = os.environ.get(LOOPBACK_ENV), getattr(constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[LOOPBACK_ENV] = "0"
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if before_env is None:
            os.environ.pop(LOOPBACK_ENV, None)
        else:
            os.environ[LOOPBACK_ENV] = before_env
        if constants is not None and before_flag is not None:
            constants.ENABLE_RAY_CLUSTER = before_flag


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
