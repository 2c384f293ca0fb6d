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
    from ragdiag.errors import RagdiagError

    path = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    if path.exists() and not path.is_dir():
        raise RagdiagError(f"cache folder {path} is a file; give a folder (--cache-dir) or move the file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RagdiagError(f"cannot create the cache folder {path} ({err.strerror})") from None
    return path


DATA_DIR_ENV = "RAGDIAG_DATA"


def default_data_dir() -> Path:
    """Where ``ragdiag data get`` puts public datasets: ``$RAGDIAG_DATA`` if set, else the user data
    dir (e.g. ``~/.local/share/ragdiag/data`` on Linux)."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("ragdiag")) / "data"
