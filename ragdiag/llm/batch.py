"""Batch execution of LLM calls: collect cache misses, send them as Batch API files, fill the cache.

With ``--batch``, a cache miss does not call the server: :meth:`BatchRunner.defer` records the
request and the item waits (:class:`Deferred`). When a round of items is done, :meth:`BatchRunner.flush`
writes the deferred requests as JSONL files in the batch folder (``custom_id`` = cache key, see
:mod:`ragdiag.llm.batch_files`), then

- ``openai``: uploads each file (Files API), creates its batch (``openai`` SDK), polls with backoff
  (interval × 1.5 up to 60 s) until every batch is terminal or ``--batch-wait`` runs out, downloads
  output and error files and writes the successes into the cache; the items are then run again and
  find their replies there;
- ``vllm-file``: stops, naming the ``vllm run-batch`` command and ``ragdiag batch collect``.

The folder's ``batches.json`` keeps every file with its upload and batch ids, saved after each step,
so an interrupted run resumes: a request that is in a batch not yet collected is never submitted
again. Failed requests (error file, expired or cancelled batch) are never cached; they are listed in
``<file>.failures.jsonl`` and sent again by the next run. Costs are counted at batch prices beside
the synchronous prices of the same calls (:func:`ragdiag.llm.prices.call_costs`).
"""

from __future__ import annotations

import json
import shlex
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.jsonl import read_jsonl_lines
from ragdiag.io.writer import write_bytes, write_json, write_jsonl
from ragdiag.llm.batch_files import (
    BATCH_MODES,
    ENDPOINT,
    Results,
    parse_results,
    request_line,
    split_lines,
)
from ragdiag.llm.batch_state import check_index_row, check_state

__all__ = ["BATCH_MODES", "BatchFolder", "BatchPending", "BatchRunner", "Deferred"]
STATE_FILE = "batches.json"
TERMINAL = ("completed", "failed", "expired", "cancelled")
POLL_MAX = 60.0


class Deferred(Exception):
    """This item's request goes into a batch; the item runs again once the batch is collected."""


class BatchPending(RagdiagError):
    """The batch is not finished (or must be run elsewhere); the message says how to resume."""

    exit_code = 4
    kind = "note"  # an expected stop: the message says what to do next


def resume_command() -> str:
    """The command line of this run, to paste again once the batch is done."""
    return "ragdiag " + shlex.join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith("ragdiag") else \
        "the same command"


@dataclass
class BatchFolder:
    """``--batch-dir``: request files, their index (cache-key requests) and ``batches.json``."""

    path: Path
    base_url: str | None = None
    cache_dir: str | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, path: Path, must_exist: bool = False, check_files: bool = True) -> BatchFolder:
        """The folder's state, checked (:func:`ragdiag.llm.batch_state.check_state`); with ``check_files``
        the files its open entries still need must be there (index files; request files not yet uploaded)."""
        path = Path(path)
        state = path / STATE_FILE
        if not state.is_file():
            if must_exist:
                raise RagdiagError(f"{path}: not a batch folder (no {STATE_FILE}); give the --batch-dir of a run")
            return cls(path)
        try:
            data = json.loads(state.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise RagdiagError(f"{state}: unreadable batch state ({err}); remove the folder to start over") from None
        folder = cls(path, *check_state(data, state))
        if check_files:
            folder.check_files()
        return folder

    def check_files(self) -> None:
        """Refuse an open entry whose index file, or whose request file not yet uploaded, is gone."""
        for number, entry in enumerate(self.entries, 1):
            if entry["collected"]:
                continue
            needed = [("index", entry["index"])]
            if entry["mode"] == "openai" and entry["input_file_id"] is None:
                needed.append(("file", entry["file"]))
            for name, file in needed:
                if not (self.path / file).is_file():
                    raise RagdiagError(
                        f"{self.path / file}: missing (entry {number} of {self.path / STATE_FILE}, field '{name}', "
                        f"not yet {'uploaded' if name == 'file' else 'collected'}); `ragdiag batch cancel {self.path}` "
                        "drops the open entries and a rerun writes their requests again")

    def save(self) -> None:
        write_json(self.path / STATE_FILE, {"base_url": self.base_url, "cache_dir": self.cache_dir,
                                             "entries": self.entries}, indent=1)

    def index(self, entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """custom_id → cache-key request of one file."""
        path = self.path / entry["index"]
        return dict(check_index_row(row, path, line) for line, row in read_jsonl_lines(path))

    def active(self, mode: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.entries if not e["collected"] and (mode is None or e["mode"] == mode)]

    def add(self, mode: str, lines: list[bytes], keys: list[str], requests: list[dict[str, Any]],
            max_requests: int, max_bytes: int) -> list[dict[str, Any]]:
        """Write the request files (split within the limits) and their index; saved in the state."""
        added = []
        for chunk in split_lines(lines, max_requests, max_bytes):
            number = len(self.entries) + 1
            name = f"requests-{number:04d}.jsonl"
            write_bytes(self.path / name, b"".join(lines[i] for i in chunk))
            write_jsonl(self.path / f"requests-{number:04d}.index.jsonl",
                        ({"custom_id": keys[i], "request": requests[i]} for i in chunk))
            entry = {"file": name, "index": f"requests-{number:04d}.index.jsonl", "mode": mode,
                     "requests": len(chunk), "bytes": sum(len(lines[i]) for i in chunk), "input_file_id": None,
                     "batch_id": None, "status": "written", "collected": False, "counts": None}
            self.entries.append(entry)
            added.append(entry)
        self.save()
        return added


@dataclass
class Collected:
    """What one collection put into the cache, and what failed."""

    answered: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_batch: float | None = 0.0
    cost_sync: float | None = 0.0
    problems: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # the custom_ids put into the cache

    def add_costs(self, batch: float | None, sync: float | None) -> None:
        self.cost_batch = None if batch is None or self.cost_batch is None else self.cost_batch + batch
        self.cost_sync = None if sync is None or self.cost_sync is None else self.cost_sync + sync


def store_results(results: Results, requests: dict[str, dict[str, Any]], cache, prices,
                  into: Collected) -> None:
    """Write the successes into the cache (each with its cache-key request and the server's provenance
    mark); count tokens and costs."""
    from ragdiag.io.provenance import note_reply, origin_of
    from ragdiag.llm.prices import call_costs

    for key, (text, p_tok, c_tok, body) in results.replies.items():
        request = requests[key]
        origin = origin_of(body)  # a test server's mark travels with its batch replies too
        note_reply(origin)
        cache.put(key, request, text, p_tok, c_tok, origin)
        into.keys.append(key)
        into.answered += 1
        into.prompt_tokens += p_tok
        into.completion_tokens += c_tok
        sync, batch = call_costs(prices, request["model"], p_tok, c_tok)
        into.add_costs(batch, sync)
    into.failures.extend(results.failures)


def write_failures(folder: BatchFolder, entry: dict[str, Any], failures: list[dict[str, str]]) -> None:
    if failures:
        entry["failures"] = entry["file"].replace(".jsonl", ".failures.jsonl")
        write_jsonl(folder.path / entry["failures"], failures)


class BatchClient:
    """The Files and Batches endpoints through the ``openai`` SDK, each call under the retry policy."""

    def __init__(self, sdk, policy, sleep: Callable[[float], None],
                 text_of: Callable[[dict[str, Any], dict[str, Any]], str]) -> None:
        self.sdk, self.policy, self.sleep, self.text_of = sdk, policy, sleep, text_of

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        from ragdiag.remote.retry import CallFailed, call_with_retries

        try:
            return call_with_retries(fn, self.policy, sleep=self.sleep)
        except CallFailed as err:
            raise RagdiagError(f"batch API: {what} failed ({err}); what was done is saved: rerun to resume") from None

    def submit(self, folder: BatchFolder, entry: dict[str, Any]) -> None:
        """Upload the file and create its batch; the state is saved after each of the two steps."""
        if entry["input_file_id"] is None:
            try:
                data = (folder.path / entry["file"]).read_bytes()
            except OSError as err:
                raise RagdiagError(f"{folder.path / entry['file']}: cannot read the request file ({err.strerror}); "
                                   f"`ragdiag batch cancel {folder.path}` drops it and a rerun writes it again") from None
            uploaded = self._call(f"uploading {entry['file']}",
                                  lambda: self.sdk.files.create(file=(entry["file"], data), purpose="batch"))
            entry["input_file_id"], entry["status"] = uploaded.id, "uploaded"
            folder.save()
        batch = self._call(f"creating the batch of {entry['file']}", lambda: self.sdk.batches.create(
            input_file_id=entry["input_file_id"], endpoint=ENDPOINT, completion_window="24h",
            metadata={"ragdiag_file": entry["file"]}))
        entry["batch_id"], entry["status"] = batch.id, batch.status
        folder.save()

    def refresh(self, entry: dict[str, Any]):
        batch = self._call(f"retrieving batch {entry['batch_id']}", lambda: self.sdk.batches.retrieve(entry["batch_id"]))
        entry["status"] = batch.status
        counts = getattr(batch, "request_counts", None)
        entry["counts"] = {"total": counts.total, "completed": counts.completed, "failed": counts.failed} if counts else None
        return batch

    def cancel(self, entry: dict[str, Any]) -> None:
        batch = self._call(f"cancelling batch {entry['batch_id']}", lambda: self.sdk.batches.cancel(entry["batch_id"]))
        entry["status"] = batch.status

    def download(self, file_id: str) -> bytes:
        return self._call(f"downloading file {file_id}", lambda: self.sdk.files.content(file_id).content)

    def collect(self, folder: BatchFolder, entry: dict[str, Any], batch, cache, prices) -> Collected:
        """A terminal batch's output and error files: every line checked first, then the successes cached."""
        requests = folder.index(entry)
        seen: dict[str, str] = {}
        parsed = [parse_results(self.download(file_id), f"batch {entry['batch_id']} {kind} file {file_id}",
                                requests, self.text_of, seen)
                  for kind, file_id in (("output", batch.output_file_id), ("error", batch.error_file_id)) if file_id]
        collected = Collected()
        for results in parsed:
            store_results(results, requests, cache, prices, collected)
        missing = [key for key in requests if key not in seen]
        collected.failures.extend({"custom_id": key, "error": f"no result (batch {entry['status']})"} for key in missing)
        entry["collected"] = True
        write_failures(folder, entry, collected.failures)
        folder.save()
        if entry["status"] == "failed":
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            first = errors[0].message if errors else "no reason given"
            collected.problems.append(f"batch {entry['batch_id']} ({entry['file']}) failed: {first}")
        elif collected.failures:
            first = collected.failures[0]
            collected.problems.append(
                f"batch {entry['batch_id']} ({entry['file']}) {entry['status']} with {len(collected.failures)} of "
                f"{entry['requests']} requests failed (first: {first['custom_id'][:16]}…: {first['error']}); listed in "
                f"{folder.path / entry['failures']}")
        return collected


@dataclass
class BatchRunner:
    """The batch side of one :class:`ragdiag.llm.client.LLMClient` (``--batch MODE``)."""

    mode: str
    folder: BatchFolder
    max_requests: int
    max_bytes: int
    poll: float
    wait: float | None
    sdk_factory: Callable[[], Any]
    policy: Any
    text_of: Callable[[dict[str, Any], dict[str, Any]], str]
    sleep: Callable[[float], None] = time.sleep
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in BATCH_MODES:
            raise RagdiagError(f"--batch must be one of {', '.join(BATCH_MODES)}, got '{self.mode}'")
        self._lock = threading.Lock()

    def defer(self, key: str, request: dict[str, Any]) -> None:
        with self._lock:
            self.pending[key] = request
        raise Deferred(key)

    def flush(self, cache, prices) -> Collected:
        """Send what was deferred (files not already in an open batch), wait, collect into the cache."""
        with self._lock:
            pending, self.pending = self.pending, {}
        folder = self.folder
        in_flight: set[str] = set()
        for entry in folder.active():
            in_flight.update(folder.index(entry))
        new = [key for key in sorted(pending) if key not in in_flight]
        if new:
            folder.add(self.mode, [request_line(k, pending[k]) for k in new], new, [pending[k] for k in new],
                       self.max_requests, self.max_bytes)
        if self.mode == "vllm-file":
            raise BatchPending(vllm_instructions(folder))
        client = BatchClient(self.sdk_factory(), self.policy, self.sleep, self.text_of)
        for entry in folder.active("openai"):
            if entry["batch_id"] is None:
                client.submit(folder, entry)
        return self._wait_and_collect(client, cache, prices)

    def _wait_and_collect(self, client: BatchClient, cache, prices) -> Collected:
        folder, total = self.folder, Collected()
        interval, start = self.poll, time.monotonic()
        while True:
            for entry in folder.active("openai"):
                batch = client.refresh(entry)
                if entry["status"] in TERMINAL:
                    got = client.collect(folder, entry, batch, cache, prices)
                    merge(total, got)
            folder.save()
            waiting = folder.active("openai")
            if not waiting:
                break
            if self.wait is not None and time.monotonic() - start + interval > self.wait:
                states = ", ".join(f"{e['batch_id']} {e['status']}" for e in waiting)
                raise BatchPending(f"batches still running after --batch-wait {self.wait:g} s ({states}); see "
                                   f"`ragdiag batch status {folder.path}`, then rerun `{resume_command()}` to collect "
                                   "and continue (nothing is submitted twice)")
            self.sleep(interval)
            interval = min(POLL_MAX, interval * 1.5)
        if total.problems:
            raise RagdiagError(f"{total.problems[0]}{' (and more)' if len(total.problems) > 1 else ''}; "
                               f"{total.answered} replies were cached; rerun to send the failed requests again")
        return total


def merge(total: Collected, got: Collected) -> None:
    total.answered += got.answered
    total.failures.extend(got.failures)
    total.prompt_tokens += got.prompt_tokens
    total.completion_tokens += got.completion_tokens
    total.add_costs(got.cost_batch, got.cost_sync)
    total.problems.extend(got.problems)
    total.keys.extend(got.keys)


def vllm_instructions(folder: BatchFolder) -> str:
    """What to run for the open ``vllm-file`` files, then how to come back."""
    files = folder.active("vllm-file")
    if not files:
        raise DataError(f"{folder.path}: no open vllm-file requests")
    models = sorted({r["model"] for e in files for r in folder.index(e).values()})
    steps = "; ".join(f"`vllm run-batch -i {folder.path / e['file']} -o {folder.path / e['file'].replace('requests', 'output')} "
                      f"--model {models[0] if len(models) == 1 else 'MODEL'}`" for e in files)
    return (f"{sum(e['requests'] for e in files)} requests written to {len(files)} file(s) in {folder.path}: run {steps}; "
            f"then `ragdiag batch collect {folder.path} --from OUTPUT.jsonl` for each output file, and rerun "
            f"`{resume_command()}`")
