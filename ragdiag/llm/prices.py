"""Price table for token costs (USD per million tokens), overridable by the user.

Defaults are OpenAI's list prices for standard (non-batch) chat completions; a JSON file given
with ``--prices`` (or ``$RAGDIAG_PRICES``) of the form ``{"model": {"input": x, "output": y}}``
adds or replaces entries. A model without a price gets cost ``None`` (shown as "n/a"), never 0.

Batch prices (``--batch``): an entry may give ``batch_input`` / ``batch_output``; the default
OpenAI models cost half their synchronous price through the Batch API (OpenAI's pricing page:
"Batch API: save 50% on inputs and outputs"), so their batch price is ``BATCH_DISCOUNT`` × the
synchronous one. A user entry without batch prices has no batch price (``None``), never a guess.

The price of one judge call a planner needs (``compare --plan`` without ``--price-call``) is the
model's entry times the tokens per call a grade manifest recorded (:func:`manifest_call_price`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError

PRICES_ENV = "RAGDIAG_PRICES"
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "gpt-4o-mini": {"input": 0.15, "output": 0.60},
    "gpt-4o": {"input": 2.50, "output": 10.00},
    "gpt-4.1": {"input": 2.00, "output": 8.00},
    "gpt-4.1-mini": {"input": 0.40, "output": 1.60},
    "gpt-4.1-nano": {"input": 0.10, "output": 0.40},
}


BATCH_DISCOUNT = 0.5
DEFAULT_PRICES = {model: {**entry, "batch_input": entry["input"] * BATCH_DISCOUNT,
                          "batch_output": entry["output"] * BATCH_DISCOUNT} for model, entry in DEFAULT_PRICES.items()}


def load_prices(path: Path | None = None) -> dict[str, dict[str, float]]:
    """The default table updated with the user's file (the flag, else ``$RAGDIAG_PRICES``)."""
    prices = {model: dict(entry) for model, entry in DEFAULT_PRICES.items()}
    path = path or (Path(os.environ[PRICES_ENV]) if os.environ.get(PRICES_ENV) else None)
    if path is None:
        return prices
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RagdiagError(f"{path}: cannot read the price table ({err})") from None
    except RecursionError:
        raise RagdiagError(f"{path}: cannot read the price table (JSON nested too deeply)") from None
    if not isinstance(data, dict):
        raise RagdiagError(f"{path}: the price table must be a JSON object of model -> {{input, output}}")
    for model, entry in data.items():
        if not (isinstance(entry, dict) and all(_is_number(entry.get(k)) for k in ("input", "output"))):
            raise RagdiagError(f"{path}: model '{model}': expected {{\"input\": <USD/1M>, \"output\": <USD/1M>}}")
        batch = [k for k in ("batch_input", "batch_output") if k in entry]
        if batch and (len(batch) == 1 or not all(_is_number(entry[k]) for k in batch)):
            raise RagdiagError(f"{path}: model '{model}': give both batch_input and batch_output as numbers (USD/1M)")
        for side in ("input", "output", *batch):
            if not (math.isfinite(entry[side]) and entry[side] >= 0):
                raise RagdiagError(f"{path}: model '{model}': field '{side}': {entry[side]} is not a finite price >= 0 "
                                   "(USD per million tokens)")
        prices[model] = {k: float(entry[k]) for k in ("input", "output", *batch)}
    return prices


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def call_cost(prices: dict[str, dict[str, float]], model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD cost = (prompt_tokens·input + completion_tokens·output) / 1e6; None for an unpriced model."""
    entry = prices.get(model)
    if entry is None:
        return None
    return (prompt_tokens * entry["input"] + completion_tokens * entry["output"]) / 1e6


def batch_call_cost(prices: dict[str, dict[str, float]], model: str, prompt_tokens: int,
                    completion_tokens: int) -> float | None:
    """USD cost at batch prices = (prompt_tokens·batch_input + completion_tokens·batch_output) / 1e6;
    None when the model has no batch price."""
    entry = prices.get(model)
    if entry is None or "batch_input" not in entry:
        return None
    return (prompt_tokens * entry["batch_input"] + completion_tokens * entry["batch_output"]) / 1e6


def call_costs(prices: dict[str, dict[str, float]], model: str, prompt_tokens: int,
               completion_tokens: int) -> tuple[float | None, float | None]:
    """(synchronous cost, batch cost) of one call, side by side."""
    return (call_cost(prices, model, prompt_tokens, completion_tokens),
            batch_call_cost(prices, model, prompt_tokens, completion_tokens))


@dataclass
class CallPrice:
    """The price of one call and where it comes from (``--price-call``, or the model's known price)."""

    value: float
    source: str


def manifest_call_price(manifests: list[tuple[str, list[Any]]], prices: dict[str, dict[str, float]]) -> CallPrice:
    """The judge's price per call, from ``manifests`` = (graded file, the manifests beside it) for each
    graded file: its grade manifest names the model and records its tokens and calls; price = (prompt
    tokens · input + completion tokens · output) / calls / 10⁶ from ``prices``, averaged over the files
    (compare's paired design calls both sides equally). An answer call is priced as a judge call. A file
    without such a manifest, or a model without a price, is an error naming the fix (``--price-call``)."""
    found = []
    for source, docs in manifests:
        grade = next((d for d in docs if isinstance(d, dict) and isinstance(d.get("meta"), dict)
                      and d["meta"].get("command") == "grade"), None)
        if grade is None:
            raise RagdiagError(f"--plan: no --price-call, and {source} has no grade manifest beside it "
                               f"({Path(source).name}.manifest.json) to price its calls; give --price-call")
        model = (grade["meta"].get("llm") or {}).get("model")
        summary = grade.get("summary") or {}
        calls = summary.get("calls") or 0
        if not isinstance(calls, int) or calls < 1:
            raise RagdiagError(f"--plan: no --price-call, and the grade manifest of {source} records no paid call "
                               "(every grade came from the cache) to count tokens from; give --price-call")
        cost = call_cost(prices, str(model), summary.get("prompt_tokens") or 0, summary.get("completion_tokens") or 0)
        if cost is None:
            raise RagdiagError(f"--plan: no --price-call, and the judge model {str(model)[:60]!r} of {source} has no "
                               "price in ragdiag's table; give --price-call, or add the model with --prices")
        entry = prices[str(model)]
        found.append((cost / calls, f"{model} at {entry['input']:g}/{entry['output']:g} USD per 1M "
                      f"tokens, {(summary.get('prompt_tokens') or 0) / calls:,.0f} + "
                      f"{(summary.get('completion_tokens') or 0) / calls:,.0f} tokens per call ({source})"))
    value = sum(v for v, _ in found) / len(found)
    if value <= 0:
        raise RagdiagError("--plan: the judge model's known price is 0 per call; give --price-call")
    return CallPrice(value, "the judge model's price in ragdiag's table: " + "; ".join(s for _, s in found)
                     + "; an answer call priced as a judge call")
