"""The ``--batch`` settings of :class:`ragdiag.llm.client.ClientConfig`: checks, and the runner they build."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.llm.batch_files import BATCH_MODES, MAX_BYTES, MAX_REQUESTS

__all__ = ["MAX_BYTES", "MAX_REQUESTS", "batch_runner", "check_batch_settings"]


def check_batch_settings(cfg: Any) -> None:
    """Refuse a batch setting out of range, or one that cannot work with the cache mode."""
    if cfg.batch is None:
        if cfg.batch_dir is not None:
            raise RagdiagError("--batch-dir needs --batch openai or --batch vllm-file")
        return
    if cfg.batch not in BATCH_MODES:
        raise RagdiagError(f"--batch must be one of {', '.join(BATCH_MODES)}, got '{cfg.batch}'")
    if cfg.cache != "rw":
        raise RagdiagError(f"--batch needs --cache rw (batch results go into the cache), got --cache {cfg.cache}")
    if not 1 <= cfg.batch_max_requests <= MAX_REQUESTS:
        raise RagdiagError(f"--batch-max-requests must be between 1 and {MAX_REQUESTS}, got {cfg.batch_max_requests}")
    if not 1 <= cfg.batch_max_bytes <= MAX_BYTES:
        raise RagdiagError(f"--batch-max-bytes must be between 1 and {MAX_BYTES}, got {cfg.batch_max_bytes}")
    if not (math.isfinite(cfg.batch_poll) and cfg.batch_poll > 0):
        raise RagdiagError(f"batch poll interval must be a positive number of seconds, got {cfg.batch_poll}")
    if cfg.batch_wait is not None and not (math.isfinite(cfg.batch_wait) and cfg.batch_wait >= 0):
        raise RagdiagError(f"--batch-wait must be a number of seconds >= 0, got {cfg.batch_wait}")


def batch_runner(cfg: Any, sdk_factory: Callable[[], Any], sleep: Callable[[float], None],
                 text_of: Callable[[dict[str, Any], dict[str, Any]], str]):
    """The :class:`ragdiag.llm.batch.BatchRunner` of a client; the folder defaults to CACHE_DIR/batches."""
    from ragdiag.config import resolve_cache_dir
    from ragdiag.io.writer import check_output_dir
    from ragdiag.llm.batch import BatchFolder, BatchRunner
    from ragdiag.remote.urls import redact_url

    path = check_output_dir(cfg.batch_dir or resolve_cache_dir(cfg.cache_dir) / "batches", "--batch-dir")
    folder = BatchFolder.open(path)
    base_url = redact_url(cfg.base_url)
    if folder.entries and folder.active() and folder.base_url != base_url:
        raise RagdiagError(f"{path}: its open batches belong to base URL {folder.base_url}, not {base_url}; "
                           "collect or cancel them, or give another --batch-dir")
    # absolute: `batch collect` run from another folder must fill this cache, not a new one beside it
    folder.base_url, folder.cache_dir = base_url, str(resolve_cache_dir(cfg.cache_dir).absolute())
    return BatchRunner(cfg.batch, folder, cfg.batch_max_requests, cfg.batch_max_bytes, cfg.batch_poll, cfg.batch_wait,
                       sdk_factory, cfg.policy, text_of, sleep)
