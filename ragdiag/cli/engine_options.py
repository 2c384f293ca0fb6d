"""The engine options (``--engine``, ``--ray-address``, ``--ray-workers``, ``--gpus-per-worker``,
``--llm-backend``) as one option group, and the decorator that gives them to a command.

:func:`engine_command` adds the group to a command and runs its body inside
``EngineSettings.activate()``: every embedder and LLM client the command creates runs on the chosen
engine, with nothing else passed. :func:`ragdiag.cli.llm_options.llm_command` applies it to every LLM
command. The settings type is imported only when a command runs (``ragdiag --help`` stays light).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragdiag.cli import params as p
from ragdiag.cli.answer_options import OptionGroup

if TYPE_CHECKING:
    from ragdiag.engine.settings import EngineSettings


def engine_settings(engine: p.EngineKind, ray_address: str, ray_workers: int, gpus_per_worker: float,
                    llm_backend: p.LlmBackend) -> EngineSettings:
    """The library settings from the options (checked again there)."""
    from ragdiag.engine.settings import EngineSettings

    return EngineSettings(engine.value, ray_address, ray_workers, gpus_per_worker, llm_backend.value)


ENGINE = OptionGroup((("engine", p.EngineOpt, p.EngineKind.local), ("ray_address", p.RayAddress, "auto"),
                      ("ray_workers", p.RayWorkers, p.DEFAULT_RAY_WORKERS), ("gpus_per_worker", p.GpusPerWorker, 0.0),
                      ("llm_backend", p.LlmBackendOpt, p.LlmBackend.openai)), engine_settings)
ENGINE_NAMES = tuple(name for name, _, _ in ENGINE.options)


def engine_parameters() -> list[inspect.Parameter]:
    """The group's options as keyword-only parameters, in --help order."""
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
            for name, annotation, default in ENGINE.options]


def run_with_engine(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Pop the engine options from ``kwargs``, build the settings and call ``fn(**kwargs)`` inside them."""
    settings = ENGINE.build(**{name: kwargs.pop(name) for name in ENGINE_NAMES})
    with settings.activate():
        return fn(**kwargs)


def engine_command(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the engine options; its body runs on the engine they choose."""
    signature = inspect.signature(fn)
    own = [param.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=_evaluated(param.annotation, fn))
           for param in signature.parameters.values()]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> Any:
        return run_with_engine(fn, kwargs)

    params = [*own, *engine_parameters()]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {param.name: param.annotation for param in params}
    return command


def _evaluated(annotation: Any, fn: Callable[..., Any]) -> Any:
    """A string annotation (``from __future__ import annotations``) evaluated in the command's module."""
    return eval(annotation, fn.__globals__) if isinstance(annotation, str) else annotation
