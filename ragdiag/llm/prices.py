"""Price table for token costs (USD per million tokens), overridable by the user.

Defaults are OpenAI's list prices for standard (non-batch) chat completions; a JSON file given
with ``--prices`` (or ``$RAGDIAG_PRICES``) of the form ``{"model": {"input": x, "output": y}}``
adds or replaces entries. A model without a price gets cost ``None`` (shown as "n/a"), never 0.

Batch prices (``--batch``): an entry may give ``batch_input`` / ``batch_output``; the default
OpenAI models cost half their synchronous price through the Batch API (OpenAI's pricing page:
"Batch API: save 50% on inputs and outputs"), so their batch price is ``BATCH_DISCOUNT`` × the
synchronous one. A user entry without batch prices has no batch price (``None``), never a guess.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

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
