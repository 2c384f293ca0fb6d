"""Conversational-noise probe (docs/methods.md#7-noise-probe; paper 001, §4.4).

For each clean query, level L and variant v, a noisy query is composed from the phrase bank
(greetings, personal context, fillers before the query; digressions, emoji after it; casing over
the whole text). Per level: mean and SD over queries of cos(noisy, clean) and
cos(noisy, reference) (each query's value is the mean over its variants), and
drop_pct = 100·(ref₀ − ref_L)/ref₀ where ref_L is the level-L mean cosine to the reference.
With a corpus (see :mod:`ragdiag.probes.noise_retrieval`), the retrieval impact per level.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.probes.embedding import embedding_calls
from ragdiag.probes.probe_data import NoiseBank, NoiseLevel, ProbeQuery, load_noise_bank
from ragdiag.retrieval.embedders import Embedder


def parse_levels(value: str) -> list[int]:
    """``0-4`` (a range) or ``0,2,4`` (a list) → sorted levels, always including 0."""
    levels: set[int] = {0}
    try:
        for part in (p.strip() for p in value.split(",") if p.strip()):
            lo, dash, hi = part.partition("-")
            levels.update(range(int(lo), int(hi) + 1) if dash else [int(lo)])
    except ValueError:
        raise RagdiagError(f"--levels '{value}': expected a range like 0-4 or a list like 0,2,4") from None
    return sorted(levels)


def apply_casing(text: str, style: str) -> str:
    """Informal casing: ``lower`` (all lowercase) or ``lower_no_question_mark`` (also drops '?')."""
    text = text.lower()
    if style == "lower_no_question_mark":
        text = re.sub(r"\s+", " ", text.replace("?", "")).strip()
    return text


def compose_noisy(query: str, level: NoiseLevel, bank: NoiseBank, rng: np.random.Generator) -> str:
    """The query with the level's components drawn from the bank (level 0 returns it unchanged).

    A component listed n times contributes n different phrases.
    """

    def pick(comp: str) -> list[str]:
        n = level.components.count(comp)
        return [str(p) for p in rng.choice(bank.phrases[comp], size=n, replace=False)] if n else []

    prefix = [p for c in bank.prefix_order for p in pick(c)]
    suffix = [p for c in bank.suffix_order for p in pick(c)]
    text = " ".join([*prefix, query, *suffix])
    casing = pick("casing")
    return apply_casing(text, casing[0]) if casing else text


@dataclasses.dataclass
class NoiseTexts:
    """Texts of one language: unique strings, indices of clean/reference/noisy [level, query, variant]."""

    lang: str
    levels: list[int]
    queries: list[ProbeQuery]
    unique: list[str]
    clean: np.ndarray
    reference: np.ndarray  # -1 where a query has no reference
    noisy: np.ndarray
    bank: NoiseBank


def build_noise_texts(lang: str, queries: list[ProbeQuery], levels: list[int], variants: int, seed: int) -> NoiseTexts:
    """Compose every noisy variant (seeded per language) and deduplicate all texts."""
    bank = load_noise_bank(lang)
    missing = [lv for lv in levels if lv not in bank.levels]
    if missing:
        raise RagdiagError(f"unknown noise level(s) {missing}: defined levels are {sorted(bank.levels)}")
    if variants < 1:
        raise RagdiagError(f"--variants must be at least 1 (got {variants})")
    rng = np.random.default_rng([seed, ["en", "fr"].index(lang)])
    positions: dict[str, int] = {}
    add = lambda text: positions.setdefault(text, len(positions))  # noqa: E731
    clean = np.array([add(q.query) for q in queries])
    reference = np.array([add(q.reference) if q.reference else -1 for q in queries])
    noisy = np.empty((len(levels), len(queries), variants), dtype=np.int64)
    for li, level in enumerate(levels):
        for qi, q in enumerate(queries):
            for v in range(variants):
                noisy[li, qi, v] = add(compose_noisy(q.query, bank.levels[level], bank, rng))
    return NoiseTexts(lang, levels, queries, list(positions), clean, reference, noisy, bank)


def _mean_sd(values: np.ndarray) -> tuple[float | None, float | None]:
    if values.size == 0:
        return None, None
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def noise_levels(texts: NoiseTexts, vectors: np.ndarray) -> list[dict]:
    """Per-level cosine to the clean query and to the reference, with SDs and relative drops."""
    noisy = vectors[texts.noisy]  # [level, query, variant, dim]
    to_clean = np.einsum("lqvd,qd->lqv", noisy, vectors[texts.clean]).mean(axis=2)
    has_ref = texts.reference >= 0
    ref_vecs = vectors[texts.reference[has_ref]]
    to_ref = np.einsum("lqvd,qd->lqv", noisy[:, has_ref], ref_vecs).mean(axis=2)
    rows = []
    ref0 = float(to_ref[0].mean()) if has_ref.any() else None
    for li, level in enumerate(texts.levels):
        clean_mean, clean_sd = _mean_sd(to_clean[li])
        ref_mean, ref_sd = _mean_sd(to_ref[li]) if has_ref.any() else (None, None)
        rows.append(
            {
                "level": level,
                "name": texts.bank.levels[level].name,
                "cosine_to_clean": clean_mean,
                "cosine_to_clean_sd": clean_sd,
                "cosine_to_reference": ref_mean,
                "cosine_to_reference_sd": ref_sd,
                "drop_pct": 100.0 * (ref0 - ref_mean) / ref0 if ref0 and ref_mean is not None else None,
                "clean_drop_pct": 100.0 * (1.0 - clean_mean) if clean_mean is not None else None,
                "n_queries": len(texts.queries),
                "n_with_reference": int(has_ref.sum()),
            }
        )
    return rows


def run_noise_probe(
    lang: str,
    queries: list[ProbeQuery],
    embedders: list[Embedder],
    levels: list[int],
    variants: int,
    seed: int,
    corpus=None,
    k: int = 10,
    rewrite=None,
    progress: bool = False,
    judged=None,
) -> list[dict]:
    """One result per embedder for ``lang``: ``levels`` rows (plus retrieval impact with a corpus).

    ``rewrite`` (texts → :class:`~ragdiag.probes.noise_rewrite.Rewrites`) adds the rewritten
    queries' cosines and the recovery per level.
    """
    texts = build_noise_texts(lang, queries, levels, variants, seed)
    rewritten = None
    if rewrite is not None:
        from ragdiag.probes.noise_rewrite import merge_rewritten, with_rewrites

        noisy_texts = list(dict.fromkeys(texts.unique[i] for i in texts.noisy.reshape(-1)))
        rewritten = with_rewrites(texts, rewrite(noisy_texts))
    from ragdiag.io.progress import note

    results = []
    for emb in embedders:
        before = dataclasses.replace(emb.stats)
        if progress:
            note(f"noise probe [{lang} · {emb.identity}]: embedding {len(rewritten.unique if rewritten else texts.unique):,}"
                 " distinct texts" + (f", then the {corpus.path} corpus for the retrieval impact" if corpus else ""))
        vectors = emb.encode(rewritten.unique if rewritten else texts.unique, progress=progress)
        rows = noise_levels(texts, vectors)
        rw_rows = noise_levels(rewritten, vectors) if rewritten else None
        if corpus is not None:
            from ragdiag.probes.noise_retrieval import retrieval_impact

            for row, impact in zip(rows, retrieval_impact(texts, vectors, corpus, emb, k, progress, judged)):
                row.update(impact)
            if rewritten and rw_rows is not None:
                for row, impact in zip(rw_rows, retrieval_impact(rewritten, vectors, corpus, emb, k, progress)):
                    row.update(impact)
        if rewritten and rw_rows is not None:
            merge_rewritten(rows, rw_rows)
        results.append(
            {
                "lang": lang,
                "embedder": emb.identity,
                "levels": rows,
                "texts": {"total": int(texts.noisy.size + 2 * len(queries)) * (2 if rewritten else 1),
                          "unique": len(rewritten.unique if rewritten else texts.unique)},
                "embedding_calls": embedding_calls(before, emb.stats),
                "data_files": texts.bank.files,
                "examples": {str(lv): texts.unique[texts.noisy[li, 0, 0]] for li, lv in enumerate(levels)},
                **({"rewritten_examples": {str(lv): rewritten.unique[rewritten.noisy[li, 0, 0]]
                                           for li, lv in enumerate(levels)}} if rewritten else {}),
            }
        )
    return results
