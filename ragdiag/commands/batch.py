"""``ragdiag batch status|collect|cancel DIR``: look at, collect or cancel the batches of a ``--batch-dir``.

- ``status``: each file with its mode, request count, batch id and status (openai batches asked
  afresh through the ``openai`` SDK, with their request counts);
- ``collect``: terminal openai batches have their output and error files downloaded; ``--from
  OUTPUT.jsonl`` reads a ``vllm run-batch`` output file (or any file in the Batch API output format).
  Every line is checked before anything is cached (unknown or repeated ``custom_id``: one error line,
  nothing cached); successes go into the call cache under their ``custom_id`` (the cache key), so the
  rerun of the command finds them; failures are listed and never cached;
- ``cancel``: open openai batches are cancelled; open vllm-file files and openai files not yet
  submitted are dropped (a rerun writes their requests again).

The folder's ``batches.json`` and index files are checked when read
(:mod:`ragdiag.llm.batch_state`): a tampered one is one line naming the file, entry or line, and field.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.errors import RagdiagError
from ragdiag.io.run_record import start_run
from ragdiag.llm.batch import (
    TERMINAL,
    BatchClient,
    BatchFolder,
    Collected,
    merge,
    store_results,
    write_failures,
)
from ragdiag.llm.batch_files import parse_results
from ragdiag.results.batch import BatchResult

if TYPE_CHECKING:
    from ragdiag.remote.call_cache import CallCache

ACTIONS = ("status", "collect", "cancel")


@dataclass
class BatchRequest:
    """What to do with which batch folder."""

    action: str
    folder: Path
    source: Path | None = None  # --from: a vLLM run-batch output file
    cache_dir: Path | None = None
    prices: Path | None = None
    timeout: float = 120.0
    max_retries: int = 5


def _client(folder: BatchFolder, request: BatchRequest) -> BatchClient:
    from ragdiag.llm.client import KEY_ENV, stored_reply
    from ragdiag.remote.retry import RetryPolicy
    from ragdiag.remote.transport import openai_client

    key = os.environ.get(KEY_ENV)
    if not key:
        raise RagdiagError(f"{KEY_ENV} is not set: the openai batches of {folder.path} are asked through the API "
                           "(any value for a local server)")
    return BatchClient(openai_client(key, folder.base_url, request.timeout), RetryPolicy(request.max_retries),
                       time.sleep, stored_reply)


def _cache(folder: BatchFolder, request: BatchRequest) -> CallCache:
    from ragdiag.config import resolve_cache_dir
    from ragdiag.remote.call_cache import CACHE_FILE, CallCache

    return CallCache(resolve_cache_dir(request.cache_dir or (Path(folder.cache_dir) if folder.cache_dir else None))
                     / CACHE_FILE)


def _earlier_failures(folder: BatchFolder, entry: dict[str, Any]) -> list[dict[str, str]]:
    """The failures listed by an earlier part of the same output (``<file>.failures.jsonl``)."""
    from ragdiag.io.jsonl import read_jsonl_lines

    path = folder.path / entry["failures"] if "failures" in entry else None
    if path is None or not path.is_file():
        return []
    return [row for _, row in read_jsonl_lines(path)
            if isinstance(row, dict) and isinstance(row.get("custom_id"), str)]


def _collect_file(folder: BatchFolder, request: BatchRequest, cache: CallCache,
                  prices: dict[str, dict[str, float]]) -> Collected:
    """``--from OUTPUT.jsonl``: results of the open vllm-file requests, checked, then cached."""
    from ragdiag.io.files import existing_file

    if request.source is None:
        raise RagdiagError("batch collect --from needs the output file of vllm run-batch")
    source = existing_file(request.source)
    entries = folder.active("vllm-file")
    if not entries:
        raise RagdiagError(f"{folder.path}: no open vllm-file requests to collect {source} into")
    requests: dict[str, dict[str, Any]] = {}
    for entry in entries:
        requests.update(folder.index(entry))
    try:
        data = source.read_bytes()
    except OSError as err:
        raise RagdiagError(f"{source}: cannot read ({err.strerror})") from None
    seen: dict[str, str] = {}
    from ragdiag.llm.client import stored_reply

    results = parse_results(data, str(source), requests, stored_reply, seen)  # raises before anything is cached
    collected = Collected()
    store_results(results, requests, cache, prices, collected)
    failed = {f["custom_id"] for f in results.failures}
    for entry in entries:
        keys = folder.index(entry)
        if not any(k in seen for k in keys):
            continue
        # an output collected in parts: the custom_ids of the earlier parts are kept in the entry
        done = set(entry.get("seen", ())) | {k for k in keys if k in seen}
        earlier = [f for f in _earlier_failures(folder, entry) if f["custom_id"] not in seen]
        write_failures(folder, entry, earlier + [f for f in results.failures if f["custom_id"] in keys])
        if all(k in done for k in keys):
            entry["collected"], entry["status"] = True, "collected"
            entry.pop("seen", None)
        else:
            entry["seen"] = sorted(done)
            entry["status"] = f"{len(done)} of {len(keys)} collected"
    folder.save()
    if failed:
        first = results.failures[0]
        collected.problems.append(f"{source}: {len(failed)} of {len(seen)} results are failures (first: "
                                  f"{first['custom_id'][:16]}…: {first['error']})")
    return collected


def run(request: BatchRequest) -> BatchResult:
    """Do ``request.action`` on the folder; problems (failed requests, expired batches) are one
    error line after the successes are cached."""
    from ragdiag.llm.prices import load_prices

    if request.action not in ACTIONS:
        raise RagdiagError(f"batch action must be one of {', '.join(ACTIONS)}, got '{request.action}'")
    if request.source is not None and request.action != "collect":
        raise RagdiagError("--from is for `ragdiag batch collect` only")
    folder = BatchFolder.open(request.folder, must_exist=True, check_files=request.action != "cancel")
    record = start_run(f"ragdiag batch {request.action}", inputs=[request.source] if request.source else [])
    collected = Collected()  # the result holds it as its CollectTotals; merged into below
    result = BatchResult(request.action, folder.path, folder.entries, collected, record=record)
    openai_open = [e for e in folder.active("openai") if e["batch_id"]]
    client = _client(folder, request) if openai_open and request.source is None else None
    asked = [(client, entry) for entry in openai_open] if client is not None else []  # the batches the API is asked about
    if request.action == "status":
        for api, entry in asked:
            api.refresh(entry)
        folder.save()
    elif request.action == "cancel":
        for api, entry in asked:
            api.cancel(entry)
            result.cancelled.append(entry["batch_id"])
        for entry in folder.active("vllm-file") + [e for e in folder.active("openai") if not e["batch_id"]]:
            entry["collected"], entry["status"] = True, "cancelled"  # never submitted: dropped
            result.cancelled.append(entry["file"])
        folder.save()
    else:
        cache, prices = _cache(folder, request), load_prices(request.prices)
        try:
            if request.source is not None:
                merge(collected, _collect_file(folder, request, cache, prices))
            elif not openai_open and folder.active("vllm-file"):
                raise RagdiagError(f"{folder.path}: its open requests are vllm-file requests: give --from OUTPUT.jsonl "
                                   "(the output of vllm run-batch)")
            for api, entry in asked:
                batch = api.refresh(entry)
                if entry["status"] in TERMINAL:
                    merge(collected, api.collect(folder, entry, batch, cache, prices))
            folder.save()
        finally:
            cache.close()
        if collected.problems:
            raise RagdiagError(f"{collected.problems[0]}; {collected.answered} replies were cached; "
                               "rerun the command to send the failed requests again")
    return result
