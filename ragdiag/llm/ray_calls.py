"""``--engine ray`` for LLM calls: the requests the cache cannot answer go to Ray workers.

The seam is the client's deferral (:mod:`ragdiag.llm.batch`): under ``--engine ray`` a cache miss is
recorded and its item waits; when the round is done, :meth:`RayCalls.flush_into` sends the missing
requests, unchanged (same prompts, same cache keys), through a Ray Data actor pool: each of
``--ray-workers`` actors (at most one per batch) holds ragdiag's own :class:`ragdiag.llm.client.LLMClient` without a cache
(retries, ``Retry-After``, context-length errors, the ``--rpm``/``--tpm`` limits split between the
workers) and sends its batch with ``--workers`` threads. Workers return replies; this process writes
them into the SQLite cache as they arrive (one writer) and the items run again, finding their replies
there, so parsing and everything after it is the local engine's. A request that failed on its worker
fails its item as it would locally; a worker that dies is restarted by Ray (``max_restarts``) and its
batch retried (``max_task_retries``); when Ray gives up, what arrived is cached and a rerun sends only
the rest. ``--llm-backend vllm`` runs the model in ``ray.data.llm``'s vLLM processor instead
(:mod:`ragdiag.llm.vllm_rows`).
"""

from __future__ import annotations

import json
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.io.provenance import note_reply
from ragdiag.remote.retry import CallFailed

BATCH_PER_THREAD = 2  # requests per Ray Data batch = this × --workers (each actor sends a batch with --workers threads)
KEY_ENV = "OPENAI_API_KEY"


VLLM_PROVIDER = "ray.data.llm:vllm"  # cache-key provider of --llm-backend vllm (the model runs on the cluster)


def attach(cfg: Any, settings: Any) -> tuple[RayCalls, str]:
    """The Ray side of a client under ``--engine ray`` and the cache-key provider of its requests."""
    if cfg.batch is not None or cfg.cache == "off":
        raise RagdiagError("--engine ray sends the cache misses to Ray workers and caches their replies: it needs "
                           f"--cache rw, replay or refresh and no --batch (got --cache {cfg.cache}"
                           f"{', --batch ' + cfg.batch if cfg.batch else ''})")
    return RayCalls(settings), VLLM_PROVIDER if settings.llm_backend == "vllm" else cfg.provider


def worker_config(cfg: Any, ray_workers: int) -> Any:
    """The client settings of one worker: no cache, no batch, the rate limits divided between workers."""
    share = {name: None if getattr(cfg, name) is None else max(1, math.ceil(getattr(cfg, name) / ray_workers))
             for name in ("rpm", "tpm")}
    return replace(cfg, cache="off", batch=None, batch_dir=None, **share)


class CallActor:
    """A Ray Data UDF: one LLM client per actor; each call sends one batch of requests."""

    payload: Any = None  # (client settings, client class), bound by ragdiag.retrieval.ray_embed.bound

    def __init__(self) -> None:
        cfg, client_class = self.payload  # the class is ragdiag.llm.client.LLMClient (which imports this module)
        self.client = client_class(cfg)

    def _one(self, key: str, request_json: str) -> dict[str, Any]:
        try:
            result = self.client._send(json.loads(request_json), key)
        except CallFailed as err:
            return {"error": str(err), "fatal": ""}
        except RagdiagError as err:  # a missing key, refused credentials: no later call can succeed
            return {"error": b"", "fatal": str(err)}
        return {"text": result.text, "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens, "origin": result.origin}

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        stats = self.client.stats
        before = (stats.retries, stats.capped_replies)
        keys, requests = [str(k) for k in batch["key"]], [str(r) for r in batch["request"]]
        with ThreadPoolExecutor(self.client.config.workers) as pool:
            rows = list(pool.map(self._one, keys, requests))
        out: dict[str, list[Any]] = {"key": keys}
        for name, empty in (("text", ""), ("prompt_tokens", 0), ("completion_tokens", 0), ("origin", ""), ("error", ""),
                            ("fatal", "")):
            out[name] = [row.get(name, empty) for row in rows]
        out["retries"] = [stats.retries - before[0]] + [0] * (len(keys) - 1)
        out["capped"] = [stats.capped_replies - before[1]] + [0] * (len(keys) - 1)
        return out


@dataclass
class RayCalls:
    """The Ray side of one :class:`ragdiag.llm.client.LLMClient` (``--engine ray``)."""

    settings: Any
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, CallFailed] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def defer(self, key: str, request: dict[str, Any]) -> None:
        """Hold the request for the next flush (the item waits)."""
        from ragdiag.llm.batch import Deferred

        with self._lock:
            self.pending[key] = request
        raise Deferred(key)

    def take_failure(self, key: str) -> CallFailed | None:
        """The failure of ``key`` on its worker in the last flush (once: a later run asks again)."""
        with self._lock:
            return self.failed.pop(key, None)

    def flush_into(self, client: Any, progress: bool = True) -> None:
        """Send what was deferred through the Ray workers; cache each reply here as it arrives."""
        with self._lock:
            pending, self.pending = self.pending, {}
        if not pending:
            return
        keys = sorted(pending)
        if self.settings.llm_backend == "vllm":
            from ragdiag.llm.vllm_rows import run_vllm

            run_vllm(client, self.settings, keys, pending)
            return
        done = 0
        try:
            for out in self._results(client, keys, pending, progress):
                done += self._store(client, out, pending)
        except RagdiagError:
            raise
        except Exception as err:  # Ray's restarts and retries are spent
            from ragdiag.retrieval.ray_embed import ray_cause

            raise RagdiagError(f"Ray LLM calls stopped: {ray_cause(err)}; {done} of {len(keys)} replies were cached: "
                               "rerun to send the rest") from None

    def _results(self, client: Any, keys: list[str], pending: dict[str, dict[str, Any]], progress: bool):
        import warnings

        import pyarrow as pa

        from ragdiag.engine.settings import ray_session
        from ragdiag.io.progress import progress_reporter
        from ragdiag.retrieval.ray_embed import bound, dataset_of, pool_size, quiet_batches, quiet_ray_data, remote_args

        settings, cfg = self.settings, client.config
        ray_session().check_packages(["ragdiag", "openai"])
        quiet_ray_data()
        size = BATCH_PER_THREAD * cfg.workers
        blocks = [pa.table({"key": keys[i:i + size], "request": [json.dumps(pending[k]) for k in keys[i:i + size]]})
                  for i in range(0, len(keys), size)]
        env = {KEY_ENV: os.environ[KEY_ENV]} if os.environ.get(KEY_ENV) else {}
        workers = pool_size(settings.ray_workers, len(blocks))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dataset = dataset_of(blocks).map_batches(
                bound(CallActor, (worker_config(cfg, workers), type(client))), batch_size=size,
                batch_format="numpy", runtime_env={"env_vars": env} if env else None, **remote_args(workers, 0.0))
        with progress_reporter(f"LLM calls on Ray ({workers} workers)", len(keys), enabled=progress) as bar:
            for out in quiet_batches(dataset):
                yield out
                bar.advance(len(out["key"]))

    def _store(self, client: Any, out: dict[str, Any], pending: dict[str, dict[str, Any]]) -> int:
        """Cache the replies of one returned batch (this process is the cache's one writer); count them."""
        from ragdiag.llm.prices import call_costs

        stored = 0
        stats = client.stats
        for n, key in enumerate(out["key"].tolist()):
            fatal, error = str(out["fatal"][n]), str(out["error"][n])
            if fatal:
                raise RagdiagError(fatal)
            with client._lock:
                stats.retries += int(out["retries"][n])
                stats.capped_replies += int(out["capped"][n])
            if error:
                with client._lock:
                    stats.failures += 1
                    self.failed[key] = CallFailed(error)  # the worker's message (a worker sends text, never pickles)
                continue
            request, text = pending[key], str(out["text"][n])
            p_tok, c_tok = int(out["prompt_tokens"][n]), int(out["completion_tokens"][n])
            origin = str(out["origin"][n])
            note_reply(origin or None)  # the worker saw the mark; the driver's run record counts it
            if client.cache is not None:
                client.cache.put(key, request, text, p_tok, c_tok, origin)
            cost, batch_cost = call_costs(client.prices, request["model"], p_tok, c_tok)
            with client._lock:
                client._sent.add(key)
                client._batched.add(key)
                stats.calls += 1
                stats.prompt_tokens += p_tok
                stats.completion_tokens += c_tok
                stats.add_costs(cost, batch_cost)
                stats.cost = None if cost is None or stats.cost is None else stats.cost + cost
            stored += 1
        return stored
