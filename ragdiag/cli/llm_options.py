"""Options shared by the LLM commands (generate, grade, pipeline), and the summary table."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from ragdiag.llm.client import DEFAULT_MODEL, ClientConfig

Model = Annotated[str, typer.Option("--model", help="Chat model name.")]
BaseUrl = Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible server URL (default $OPENAI_BASE_URL, else OpenAI).")]
CacheDir = Annotated[Optional[Path], typer.Option("--cache-dir", help="Cache directory (default $RAGDIAG_CACHE_DIR or the user cache dir).")]
CacheMode = Annotated[str, typer.Option("--cache", help="rw | replay (never touches the network) | off | refresh.")]
Workers = Annotated[int, typer.Option("--workers", help="Concurrent requests.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed sent with every request.")]
Temperature = Annotated[float, typer.Option("--temperature", help="Sampling temperature.")]
MaxRetries = Annotated[int, typer.Option("--max-retries", help="Retries per request on 429, 5xx and timeouts.")]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds to wait for one reply before retrying.")]
Rpm = Annotated[Optional[int], typer.Option("--rpm", help="Client-side limit: requests per minute.")]
Tpm = Annotated[Optional[int], typer.Option("--tpm", help="Client-side limit: tokens per minute (estimated as chars/4).")]
Prices = Annotated[Optional[Path], typer.Option("--prices", help="JSON price table {model: {input, output}} in USD per 1M tokens.")]
MinCoverage = Annotated[float, typer.Option("--min-coverage", help="Exit non-zero (3) when fewer than this share of items succeed.")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")]

_SHARED: dict[str, tuple[Any, Any]] = {
    "model": (Model, DEFAULT_MODEL), "base_url": (BaseUrl, None), "cache_dir": (CacheDir, None),
    "cache": (CacheMode, "rw"), "workers": (Workers, 4), "seed": (Seed, 0), "temperature": (Temperature, 0.0),
    "max_retries": (MaxRetries, 5), "timeout": (Timeout, 120.0), "rpm": (Rpm, None), "tpm": (Tpm, None), "prices": (Prices, None),
    "min_coverage": (MinCoverage, 0.95), "progress": (Progress, True),
}
_RUN_OPTIONS = ("min_coverage", "progress")


def llm_command(fn: Callable[..., None]) -> Callable[..., None]:
    """Give a command the shared LLM options; it is called with ``config`` (a :class:`ClientConfig`
    built from them), ``min_coverage`` and ``progress`` instead of the individual options."""
    own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
           for p in inspect.signature(fn, eval_str=True).parameters.values() if p.name not in ("config", *_RUN_OPTIONS)]
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
              for name, (annotation, default) in _SHARED.items()]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> None:
        values = {name: kwargs.pop(name) for name in _SHARED}
        run = {name: values.pop(name) for name in _RUN_OPTIONS}
        return fn(config=ClientConfig(**values), **run, **kwargs)

    command.__signature__ = inspect.Signature([*own, *shared])  # type: ignore[attr-defined]
    return command


def render_summary(title: str, summary: dict[str, Any], outputs: dict[str, Path]) -> None:
    """A rich table of the run summary (stdout) and where the files went."""
    from rich.console import Console
    from rich.table import Table

    from ragdiag.llm.runner import format_cost

    table = Table(title=title, show_header=False)
    rows = [
        ("items", summary["items"]), ("covered", f"{summary['covered']} ({summary['coverage']:.1%})"),
        ("requests", summary["requests"]), ("calls sent", summary["calls"]), ("cache hits", summary["cache_hits"]),
        ("shared in flight", summary["shared"]), ("retries", summary["retries"]), ("failed calls", summary["failures"]),
        ("tokens in / out", f"{summary['prompt_tokens']} / {summary['completion_tokens']}"),
        ("cost", format_cost(summary["cost"])), ("seconds", summary["seconds"]),
    ]
    for key in ("missing_grades", "no_answer"):
        if key in summary:
            rows.append((key.replace("_", " "), summary[key]))
    for key, value in summary.get("agreement", {}).items():
        if key not in ("judges", "repeats"):
            rows.append((key.replace("_", " "), "n/a" if value is None else f"{value:.3f}"))
    for name, value in rows:
        table.add_row(name, str(value))
    for name, path in outputs.items():
        table.add_row(name, str(path))
    Console().print(table)
