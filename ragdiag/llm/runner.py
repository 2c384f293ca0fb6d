"""Run one function over many items with a worker pool, progress (:mod:`ragdiag.io.progress`: a bar on
a terminal, a line every few seconds in a log, silent for short work) and failure bookkeeping.

Each item either succeeds or fails on its own (:class:`CallFailed`, recorded in the failure
manifest). A :class:`RagdiagError` (replay miss, missing key, refused credentials) stops the run.
So does a server that keeps failing: ``abort_after`` items in a row failing after their retries
(a context-length error is the prompt's fault, not the server's: it does not count).
Completed calls are already in the cache, so a rerun resumes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.io.progress import progress_reporter
from ragdiag.llm.batch import Deferred
from ragdiag.llm.chat_client import ChatClient
from ragdiag.llm.client import CallFailed
from ragdiag.llm.context_errors import ContextExceeded


@dataclass
class RunOutcome:
    """Results in item order (None where the item failed) and one manifest entry per failure."""

    results: list[Any]
    errors: list[str | None]
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def format_cost(cost: float | None) -> str:
    """``$0.0123`` or ``n/a`` when a model had no price."""
    return "n/a" if cost is None else f"${cost:.4f}"


def run_items(client: ChatClient, fn: Callable[[Any], Any], items: Sequence[Any], labels: Sequence[str],
              description: str, progress: bool = True) -> RunOutcome:
    """Apply ``fn`` to every item with ``client.config.workers`` threads.

    With ``--batch``, items whose requests were deferred run again after the batch is collected
    (:meth:`LLMClient.flush_batch`), round after round, until none is deferred.
    """
    outcome = RunOutcome([None] * len(items), [None] * len(items))
    start = time.perf_counter()
    todo = list(range(len(items)))
    while todo:
        deferred = _run_round(client, fn, items, labels, todo, description, progress, outcome)
        if deferred:
            client.flush_batch(progress)
        todo = deferred
    outcome.seconds = time.perf_counter() - start
    outcome.failures.sort(key=lambda f: f["item"])
    adapted = client.in_flight.report()
    for line in adapted["adapted"] if adapted else []:  # said once per run, also kept in the manifest's run block
        if line not in client.in_flight.told:
            client.in_flight.told.add(line)
            print(f"note: {description}: {line}", file=sys.stderr)
    return outcome


def _run_round(client: ChatClient, fn: Callable[[Any], Any], items: Sequence[Any], labels: Sequence[str],
               todo: list[int], description: str, progress: bool, outcome: RunOutcome) -> list[int]:
    """One pass over the items ``todo``; returns those deferred to a batch."""
    abort_after = max(10, 2 * client.config.workers)
    consecutive = 0
    deferred: list[int] = []
    with progress_reporter(description, len(todo), enabled=progress) as bar, \
            ThreadPoolExecutor(client.config.workers) as pool:
        pending = {pool.submit(fn, items[i]): i for i in todo}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=pending.__getitem__):  # item order: deterministic errors
                    index = pending.pop(future)
                    try:
                        outcome.results[index] = future.result()
                        consecutive = 0
                    except Deferred:
                        deferred.append(index)
                    except CallFailed as err:
                        outcome.errors[index] = str(err)
                        outcome.failures.append({"item": labels[index], "error": str(err)})
                        # a prompt too long for the model says nothing about the server's health
                        consecutive = consecutive if isinstance(err, ContextExceeded) else consecutive + 1
                    bar.advance(1)
                if consecutive >= abort_after:
                    raise RagdiagError(
                        f"{consecutive} items in a row failed after their retries (last: {outcome.failures[-1]['error']}); "
                        f"stopping. Completed calls are cached: rerun to resume"
                    )
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return sorted(deferred)
