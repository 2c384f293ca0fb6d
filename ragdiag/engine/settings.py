"""The execution engine of the embedding and LLM layers (``--engine``, issue 33), as one settings object.

A command opens ``with settings.activate():`` around its work (the CLI's option group does it for
every command that declares the engine options); inside, :class:`ragdiag.retrieval.embedder_base.Embedder`
embeds what its cache lacks on Ray and :class:`ragdiag.llm.client.LLMClient` sends the requests its
cache cannot answer through Ray workers. Prompts, cache keys, parsing and the cache file are the same
for both engines: only where the missing work runs changes. The Ray session is opened at the first
miss (a fully cached run never starts Ray) and closed when the scope ends (a local instance started
for the run is stopped). This module imports no Ray.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ragdiag.errors import RagdiagError

ENGINES = ("local", "ray")
LLM_BACKENDS = ("openai", "vllm")
MAX_RAY_WORKERS = 1024
MAX_GPUS_PER_WORKER = 64.0


@dataclass(frozen=True)
class EngineSettings:
    """``--engine``, ``--ray-address``, ``--ray-workers``, ``--gpus-per-worker``, ``--llm-backend``."""

    engine: str = "local"
    ray_address: str = "auto"
    ray_workers: int = 2
    gpus_per_worker: float = 0.0
    llm_backend: str = "openai"

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise RagdiagError(f"--engine must be one of {', '.join(ENGINES)}, got '{self.engine}'")
        if self.llm_backend not in LLM_BACKENDS:
            raise RagdiagError(f"--llm-backend must be one of {', '.join(LLM_BACKENDS)}, got '{self.llm_backend}'")
        if isinstance(self.ray_workers, bool) or not 1 <= self.ray_workers <= MAX_RAY_WORKERS:
            raise RagdiagError(f"--ray-workers must be between 1 and {MAX_RAY_WORKERS}, got {self.ray_workers}")
        if not (math.isfinite(self.gpus_per_worker) and 0 <= self.gpus_per_worker <= MAX_GPUS_PER_WORKER):
            raise RagdiagError(f"--gpus-per-worker must be between 0 and {MAX_GPUS_PER_WORKER:g}, got {self.gpus_per_worker}")
        if not isinstance(self.ray_address, str) or not self.ray_address.strip():
            raise RagdiagError("--ray-address must be auto, local or a cluster address (host:port or ray://host:port)")
        if self.engine == "local" and self.llm_backend == "vllm":
            raise RagdiagError("--llm-backend vllm runs on Ray's GPU workers: give --engine ray")

    @property
    def is_ray(self) -> bool:
        return self.engine == "ray"

    @contextmanager
    def activate(self) -> Iterator[EngineSettings]:
        """Make these settings the active engine for the embedders and LLM clients of this scope; on
        exit, close the Ray session opened in it (stopping a local instance it started)."""
        global _ACTIVE, _SESSION
        with _LOCK:
            previous, previous_session = _ACTIVE, _SESSION
            _ACTIVE, _SESSION = self, None
        try:
            yield self
        finally:
            with _LOCK:
                opened, _ACTIVE, _SESSION = _SESSION, previous, previous_session
            if opened is not None:
                opened.close()


LOCAL = EngineSettings()
_ACTIVE: EngineSettings = LOCAL
_SESSION: Any = None
_LOCK = threading.RLock()


def active() -> EngineSettings:
    """The engine of the current scope (``local`` outside any)."""
    return _ACTIVE


def ray_session() -> Any:
    """The Ray session of the current scope, connected on first use (:mod:`ragdiag.engine.ray_session`)."""
    global _SESSION
    with _LOCK:
        if not _ACTIVE.is_ray:
            raise RagdiagError("internal: a Ray session was asked for outside --engine ray")
        if _SESSION is None:
            from ragdiag.engine.ray_session import RaySession

            _SESSION = RaySession.open(_ACTIVE)
        return _SESSION
