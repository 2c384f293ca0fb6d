"""Query rewriting for the noise probe through the LLM layer (docs/methods.md#7-noise-probe, paper 001 §4.4.1).

Every distinct noisy query (level 0 included) is sent once with the ``query-rewrite`` prompt;
replies are cached by the LLM layer, so a rerun makes no call. Recovery per level L:
100·(ref_rw,L − ref_L)/(ref_0 − ref_L), the share of the lost cosine to the reference that the
rewrite wins back (undefined where nothing was lost).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ragdiag.errors import RagdiagError


@dataclasses.dataclass
class Rewrites:
    """Rewritten text per original text, and how they were made."""

    texts: dict[str, str]
    meta: dict


def rewrite_queries(texts: list[str], model: str | None, base_url: str | None, cache_dir: Path | None,
                    progress: bool, cache_mode: str = "rw") -> Rewrites:
    """Rewrite each text with the LLM layer (cached; failures → one RagdiagError)."""
    from ragdiag.llm.client import DEFAULT_MODEL, ClientConfig, LLMClient
    from ragdiag.llm.output_limit import JUDGE_MAX_TOKENS
    from ragdiag.llm.prompts import load_prompt
    from ragdiag.llm.runner import run_items

    prompt = load_prompt("query-rewrite")
    client = LLMClient(ClientConfig(model=model or DEFAULT_MODEL, base_url=base_url, cache_dir=cache_dir,
                                    cache=cache_mode))

    def rewrite(text: str) -> str:
        request = client.request(prompt.messages(query=text), prompt.id, max_tokens=JUDGE_MAX_TOKENS)
        return client.chat(request, text[:60]).text.strip()

    try:
        outcome = run_items(client, rewrite, texts, [t[:60] for t in texts], "rewriting queries", progress)
    finally:
        client.close()
    errors = [e for e in outcome.errors if e]
    if errors:
        raise RagdiagError(f"query rewriting failed for {len(errors)} of {len(texts)} queries "
                           f"(first: {errors[0]}); rerun to resume from the cache")
    empty = [t for t, r in zip(texts, outcome.results) if not r]
    if empty:
        raise RagdiagError(f"the model returned an empty rewrite for {len(empty)} queries, e.g. {empty[0]!r}")
    meta = {"model": client.config.model, "prompt": prompt.id, "provider": client.config.provider,
            "llm_calls": client.stats.to_json()}
    return Rewrites(dict(zip(texts, outcome.results)), meta)


def with_rewrites(texts, rewrites: Rewrites):
    """A copy of ``texts`` whose noisy queries are replaced by their rewrites (clean and references kept)."""
    positions = {t: i for i, t in enumerate(texts.unique)}
    unique = list(texts.unique)

    def index_of(i: int) -> int:
        new = rewrites.texts[texts.unique[i]]
        if new not in positions:
            positions[new] = len(unique)
            unique.append(new)
        return positions[new]

    noisy = np.array([index_of(int(i)) for i in texts.noisy.reshape(-1)]).reshape(texts.noisy.shape)
    return dataclasses.replace(texts, unique=unique, noisy=noisy)


ABSURD_RECOVERY_PCT = 200.0  # |recovery| beyond this is not a measurement of a rewriter
MIN_LOSS = 0.005  # a cosine loss smaller than this is too small to divide by


def recovery_flag(recovery: float | None, lost: float | None) -> str | None:
    """Why a recovery percentage should not be read as one, or None when it is plausible.

    recovery = 100 · (cos_rewritten − cos_noisy) / (cos_clean − cos_noisy): with a tiny loss the
    ratio explodes; far below −100% the rewrite moved the query away from its reference (a rewriter
    that does not rewrite — e.g. a test server echoing text — or a broken prompt)."""
    if recovery is None:
        return None
    if lost is not None and lost < MIN_LOSS:
        return f"absurd: the noise cost only {lost:.4f} cosine, too little to measure a recovery against"
    if abs(recovery) > ABSURD_RECOVERY_PCT:
        return (f"absurd: {recovery:+.0f}% — the rewrites moved the queries away from their references; "
                "check the rewriter (a test server or a broken prompt gives this)")
    return None


def merge_rewritten(rows: list[dict], rewritten_rows: list[dict]) -> None:
    """Add ``rewritten_*`` fields (drop vs the un-rewritten level 0), ``recovery_pct`` and, when that
    number cannot be a measurement, ``recovery_flag`` saying why (in place)."""
    ref0 = rows[0]["cosine_to_reference"]
    for row, rw in zip(rows, rewritten_rows):
        for key in ("cosine_to_clean", "cosine_to_reference", "recall_at_k", "overlap_at_k", "kendall_tau"):
            if key in rw:
                row[f"rewritten_{key}"] = rw[key]
        rw_ref = rw["cosine_to_reference"]
        row["rewritten_drop_pct"] = 100.0 * (ref0 - rw_ref) / ref0 if ref0 else None
        lost = None if ref0 is None else ref0 - row["cosine_to_reference"]
        row["recovery_pct"] = (
            100.0 * (rw_ref - row["cosine_to_reference"]) / lost if lost and lost > 0 else None
        )
        flag = recovery_flag(row["recovery_pct"], lost)
        if flag:
            row["recovery_flag"] = flag
