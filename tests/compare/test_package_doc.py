"""The compare package's docstring names modules that exist (issue 38: it named one that had moved)."""

from __future__ import annotations

import importlib
import re

import ragdiag.compare


def test_every_module_the_package_docstring_names_exists():
    named = re.findall(r":mod:`([.\w]+)`", ragdiag.compare.__doc__ or "")
    assert named
    for name in named:
        importlib.import_module(f"ragdiag.compare{name}" if name.startswith(".") else name)
