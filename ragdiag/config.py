"""Settings shared by all commands: cache and data directories, from flags or environment."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "RAGDIAG_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$RAGDIAG_CACHE_DIR`` if set, else the user cache dir (e.g. ``~/.cache/ragdiag``)."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ragdiag"))


def resolve_cache_dir(cache_dir: Path | None) -> Path:
    """The cache directory to use (created if missing): the flag, else the default."""
    path = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path
