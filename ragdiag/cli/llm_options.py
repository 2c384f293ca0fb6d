"""The options shared by the LLM commands (generate, grade, pipeline, sweep), as one decorator.

Names, help texts, ranges and defaults come from :mod:`ragdiag.cli.params` (its LLM defaults are
kept equal to :class:`ragdiag.llm.client.ClientConfig`'s by a test); the client itself is imported
only when a command runs, so ``ragdiag --help`` stays light.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ragdiag.cli import params as p
from ragdiag.cli.answer_options import OptionGroup
from ragdiag.cli.engine_options import engine_parameters, run_with_engine
from ragdiag.cli.params import CacheDir  # noqa: F401 - re-exported for cli/cache.py
from ragdiag.report.llm_summary import render_summary  # noqa: F401 - re-exported for the LLM commands

# option name → (annotation, default); the ClientConfig fields first, then the run options
_SHARED: dict[str, tuple[Any, Any]] = {
    "model": (p.Model, p.DEFAULT_MODEL), "base_url": (p.BaseUrl, None), "cache_dir": (p.CacheDir, None),
    "cache": (p.Cache, p.DEFAULT_CACHE_MODE), "workers": (p.Workers, p.DEFAULT_WORKERS),
    "seed": (p.RequestSeed, p.DEFAULT_SEED), "temperature": (p.Temperature, p.DEFAULT_TEMPERATURE),
    "max_retries": (p.MaxRetries, p.DEFAULT_MAX_RETRIES), "timeout": (p.Timeout, p.DEFAULT_TIMEOUT),
    "rpm": (p.Rpm, None), "tpm": (p.Tpm, None), "prices": (p.Prices, None),
    "batch": (p.Batch, None), "batch_dir": (p.BatchDir, None), "batch_wait": (p.BatchWait, None),
    "batch_poll": (p.BatchPoll, 5.0), "batch_max_requests": (p.BatchMaxRequests, 50_000),
    "batch_max_bytes": (p.BatchMaxBytes, 200 * 1024 * 1024),
    "min_coverage": (p.MinCoverage, p.DEFAULT_MIN_COVERAGE), "progress": (p.Progress, True),
}
_RUN_OPTIONS = ("min_coverage", "progress")


def llm_command(fn: Callable[..., None]) -> Callable[..., None]:
    """Give a command the shared LLM options; it is called with ``config`` (a :class:`ClientConfig`
    built from them), ``min_coverage`` and ``progress`` instead of the individual options, inside the
    engine the engine options choose (:mod:`ragdiag.cli.engine_options`). A parameter
    whose default is an :class:`OptionGroup` becomes the group's options, at its place in --help, and
    receives the group's built value."""
    own: list[inspect.Parameter] = []
    groups: dict[str, OptionGroup] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.name in ("config", *_RUN_OPTIONS):
            continue
        if isinstance(param.default, OptionGroup):
            groups[param.name] = param.default
            own += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
                    for name, annotation, default in param.default.options]
        else:
            own.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=_evaluated(param.annotation, fn)))
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
              for name, (annotation, default) in _SHARED.items()] + engine_parameters()

    @functools.wraps(fn)
    def command(**kwargs: Any) -> None:
        from ragdiag.commands.generate import ClientConfig

        values = {name: kwargs.pop(name) for name in _SHARED}
        run = {name: values.pop(name) for name in _RUN_OPTIONS}
        values["cache"] = getattr(values["cache"], "value", values["cache"])
        values["batch"] = getattr(values["batch"], "value", values["batch"])
        for name, group in groups.items():
            kwargs[name] = group.build(**{option: kwargs.pop(option) for option, _, _ in group.options})
        from ragdiag.report.provenance import marked_replies

        before = marked_replies()
        done = run_with_engine(fn, {"config": ClientConfig(**values), **run, **kwargs})
        _say_if_test_server(values["model"], marked_replies() - before)
        return done

    command.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    command.__annotations__ = {param.name: param.annotation for param in [*own, *shared]}
    return command


def _say_if_test_server(model: str, marked: int = 0) -> None:
    """The last line of a run whose replies came from ragdiag's test server (``marked`` replies
    carried its mark) says so (stderr)."""
    from rich.console import Console

    from ragdiag.report.provenance import test_server_line

    line = test_server_line([model], marked)
    if line:
        Console(stderr=True).print(line, style="bold red", highlight=False)


def _evaluated(annotation: Any, fn: Callable[..., Any]) -> Any:
    """A string annotation (``from __future__ import annotations``) evaluated in the command's module."""
    return eval(annotation, fn.__globals__) if isinstance(annotation, str) else annotation
