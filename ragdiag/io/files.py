"""Generic file helpers every layer uses: a regular-file check and a file's sha256."""

from __future__ import annotations

import hashlib
import mmap
import threading
from collections.abc import Callable
from pathlib import Path

from ragdiag.errors import DataError


def existing_file(path: Path) -> Path:
    """``path`` as a Path, or one line: not found, or found but not a regular file (a folder, ``/dev/null``)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found" if not path.exists() else f"{path}: not a regular file")
    return path


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_in_background(data: bytes | mmap.mmap) -> Callable[[], str]:
    """Start the sha256 of ``data`` on another thread and return the call that waits for its hex digest:
    hashlib releases the GIL on large buffers, so a second core hashes while this thread parses them."""
    digests: list[str] = []
    worker = threading.Thread(target=lambda: digests.append(hashlib.sha256(data).hexdigest()), daemon=True)
    worker.start()

    def digest() -> str:
        worker.join()
        return digests[0]

    return digest
