"""The ``meta`` block every result file carries: how it was made."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

from ragdiag import __version__


def package_versions(*names: str) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def base_meta(command: str, **fields: Any) -> dict[str, Any]:
    """Command line, ragdiag and library versions, Python, plus the caller's fields."""
    return {
        "command": command,
        "argv": sys.argv[1:],
        "ragdiag": __version__,
        "python": platform.python_version(),
        "versions": package_versions("numpy", "scipy"),
        **fields,
    }
