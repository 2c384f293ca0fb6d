"""The options shared by the LLM commands (generate, grade, pipeline, sweep), as one decorator.

Names, help texts and ranges come from :mod:`ragdiag.cli.params`; defaults from
:class:`ragdiag.llm.client.ClientConfig`, so each concept has one default.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable

from ragdiag.cli import params as p
from ragdiag.cli.params import CacheDir  # noqa: F401 - re-exported for cli/cache.py
from ragdiag.llm.client import ClientConfig
from ragdiag.report.llm_summary import render_summary  # noqa: F401 - re-exported for the LLM commands

_CONFIG_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ClientConfig)}

# option name → (annotation, default); the ClientConfig fields first, then the run options
_SHARED: dict[str, tuple[Any, Any]] = {
    "model": (p.Model, _CONFIG_DEFAULTS["model"]), "base_url": (p.BaseUrl, None), "cache_dir": (p.CacheDir, None),
    "cache": (p.Cache, p.CacheMode(_CONFIG_DEFAULTS["cache"])), "workers": (p.Workers, _CONFIG_DEFAULTS["workers"]),
    "seed": (p.Seed, _CONFIG_DEFAULTS["seed"]), "temperature": (p.Temperature, _CONFIG_DEFAULTS["temperature"]),
    "max_retries": (p.MaxRetries, _CONFIG_DEFAULTS["max_retries"]), "timeout": (p.Timeout, _CONFIG_DEFAULTS["timeout"]),
    "rpm": (p.Rpm, None), "tpm": (p.Tpm, None), "prices": (p.Prices, None),
    "min_coverage": (p.MinCoverage, p.DEFAULT_MIN_COVERAGE), "progress": (p.Progress, True),
}
_RUN_OPTIONS = ("min_coverage", "progress")


def llm_command(fn: Callable[..., None]) -> Callable[..., None]:
    """Give a command the shared LLM options; it is called with ``config`` (a :class:`ClientConfig`
    built from them), ``min_coverage`` and ``progress`` instead of the individual options."""
    own = [param.replace(kind=inspect.Parameter.KEYWORD_ONLY)
           for param in inspect.signature(fn, eval_str=True).parameters.values() if param.name not in ("config", *_RUN_OPTIONS)]
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
              for name, (annotation, default) in _SHARED.items()]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> None:
        values = {name: kwargs.pop(name) for name in _SHARED}
        run = {name: values.pop(name) for name in _RUN_OPTIONS}
        values["cache"] = getattr(values["cache"], "value", values["cache"])
        return fn(config=ClientConfig(**values), **run, **kwargs)

    command.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    return command
