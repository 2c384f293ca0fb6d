"""Options shared by the LLM commands (generate, grade, pipeline), and the summary table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

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
Rpm = Annotated[Optional[int], typer.Option("--rpm", help="Client-side limit: requests per minute.")]
Tpm = Annotated[Optional[int], typer.Option("--tpm", help="Client-side limit: tokens per minute (estimated as chars/4).")]
Prices = Annotated[Optional[Path], typer.Option("--prices", help="JSON price table {model: {input, output}} in USD per 1M tokens.")]
MinCoverage = Annotated[float, typer.Option("--min-coverage", help="Exit non-zero (3) when fewer than this share of items succeed.")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")]

DEFAULTS: dict[str, Any] = {"model": DEFAULT_MODEL, "cache": "rw", "workers": 4, "seed": 0, "temperature": 0.0,
                            "max_retries": 5, "min_coverage": 0.95}


def client_config(model: str, base_url: str | None, cache_dir: Path | None, cache: str, workers: int, seed: int,
                  temperature: float, max_retries: int, rpm: int | None, tpm: int | None,
                  prices: Path | None) -> ClientConfig:
    """The client configuration from the shared options."""
    return ClientConfig(model=model, base_url=base_url, cache_dir=cache_dir, cache=cache, workers=workers, seed=seed,
                        temperature=temperature, max_retries=max_retries, rpm=rpm, tpm=tpm, prices=prices)


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
