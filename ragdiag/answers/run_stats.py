"""What an LLM run reports about itself: the ``meta`` block (what determines the result), the server
details (how this run reached it) and the call summary (coverage = covered / items, calls, cache hits,
tokens, cost). Built from the client; nothing here is written or stamped (``commands/`` does that).
"""

from __future__ import annotations

from typing import Any, TypedDict

from ragdiag import __version__
from ragdiag.llm.client import LLMClient
from ragdiag.remote.urls import redact_url
from ragdiag.results.llm_run import RunMeta, RunSummary


class ServerDetails(TypedDict, total=False):
    """The manifest's ``run`` block: how this particular run reached the server (not in the result)."""

    base_url: str | None
    cache: str
    workers: int
    max_retries: int
    rpm: int | None
    tpm: int | None
    batch: str | None
    batch_dir: str
    engine: str
    ray_workers: int
    llm_backend: str
    concurrency: Any


def run_meta(command: str, client: LLMClient, **details: Any) -> RunMeta:
    """The ``meta`` block of a result: command, version, provider, model, sampling parameters, then
    ``details`` (prompt versions, inputs …) — nothing that changes between identical reruns."""
    from ragdiag.llm.output_limit import limit_param

    cfg = client.config
    llm = {"provider": getattr(client, "provider", cfg.provider), "model": cfg.model, "temperature": cfg.temperature,
           "seed": cfg.seed, "output_limit_param": limit_param(cfg.provider)}
    return RunMeta.from_json({"command": command, "ragdiag_version": __version__, "llm": llm, **details})


def run_details(client: LLMClient) -> ServerDetails:
    """Base URL (credentials redacted), cache mode, workers, retries, rate limits, batch, engine, concurrency."""
    cfg = client.config
    details = ServerDetails(base_url=redact_url(cfg.base_url), cache=cfg.cache, workers=cfg.workers,
                            max_retries=cfg.max_retries, rpm=cfg.rpm, tpm=cfg.tpm)
    if client.batch is not None:
        details["batch"] = cfg.batch
        details["batch_dir"] = str(client.batch.folder.path)
    ray = getattr(client, "ray", None)
    if ray is not None:
        details["engine"] = "ray"
        details["ray_workers"] = ray.settings.ray_workers
        details["llm_backend"] = ray.settings.llm_backend
    adapted = client.in_flight.report()
    if adapted:
        details["concurrency"] = adapted
    return details


def run_summary(client: LLMClient, items: int, covered: int, seconds: float, **extra: Any) -> RunSummary:
    """Calls, cache hits, retries, failures, tokens, cost and coverage = covered / items (1 when no item)."""
    return RunSummary.from_json({"items": items, "covered": covered, "coverage": covered / items if items else 1.0,
                                 "seconds": round(seconds, 3), **client.stats.to_json(), **extra})
