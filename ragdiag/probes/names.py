"""Δ-margin proper-name probe (docs/methods.md#6-name-probe; paper 001, §4.2–4.3).

Per query: Δ_name = cos(q, C1) − mean(cos(q, C2a), cos(q, C2b)); Δ_topic = cos(q, C1) − cos(q, C3).
Per run the means over queries; reported: mean and between-run SD (ddof=1) of those run means,
% change of Δ_name vs base over the queries with |base Δ_name| ≥ ε (per run
100·(m_abl − m_base)/|m_base| with m the mean Δ_name over those queries, then averaged over runs;
hard_name_mask is −100% by construction), absolute change, base margins and the name/topic
ratio mean(Δ_name)/mean(Δ_topic).

True authors and topics are fixed per query for a seed; impostors (faker, fresh each run) and the
template variants (light jitter) are drawn per run. All texts of all runs and conditions are
deduplicated and embedded in one ``encode`` call per embedder.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.probes.ablations import (
    NEAR_MISS_DISTANCE,
    Author,
    BundleSpec,
    near_miss,
    render_bundle,
)
from ragdiag.probes.embedding import embedding_calls
from ragdiag.probes.probe_data import NameTemplates, load_name_templates
from ragdiag.retrieval.embedders import Embedder

FAKER_LOCALES = {"en": ["en_US", "en_GB"], "fr": ["fr_FR"]}
EMBEDDED = (0, 1, 2, 3, 4)  # positions in render_bundle's [query, C1, C2a, C2b, C3, C4]


def _faker(lang: str, seed: int):
    from faker import Faker

    fake = Faker(FAKER_LOCALES[lang])
    fake.seed_instance(seed)
    return fake


def _draw_author(fake, taken: set[str], taken_last: set[str]) -> Author:
    for _ in range(1000):
        author = Author(fake.first_name(), fake.last_name())
        if author.full not in taken and author.last not in taken_last and len(author.full) >= 5:
            return author
    raise RagdiagError("faker could not produce enough distinct names")


def build_specs(lang: str, n_queries: int, runs: int, seed: int, templates: NameTemplates) -> list[list[BundleSpec]]:
    """Bundle specs indexed [run][query]: fixed true authors and topics, fresh impostors per run."""
    if n_queries < 1 or runs < 1:
        raise RagdiagError(f"the number of queries and of runs must be at least 1 (got {n_queries}, {runs})")
    if n_queries > len(templates.topics):
        raise RagdiagError(f"{n_queries} queries requested, but '{lang}' has only {len(templates.topics)} topics")
    rng = np.random.default_rng(seed)
    topic_idx = rng.choice(len(templates.topics), size=n_queries, replace=False)
    others = [(t + 1 + int(rng.integers(len(templates.topics) - 1))) % len(templates.topics) for t in topic_idx]
    fake = _faker(lang, seed)
    trues: list[Author] = []
    for _ in range(n_queries):
        trues.append(_draw_author(fake, {a.full for a in trues}, set()))
    specs: list[list[BundleSpec]] = []
    for run in range(runs):
        run_rng = np.random.default_rng([seed, run])
        fake.seed_instance(int(np.random.default_rng([seed, run, 1]).integers(2**31)))
        row = []
        for i, true in enumerate(trues):
            imps: list[Author] = []
            for _ in range(3):
                imps.append(_draw_author(fake, {true.full, *(a.full for a in imps)}, {true.last}))
            misses: list[str] = []
            for _ in range(3):
                misses.append(near_miss(true.full, NEAR_MISS_DISTANCE, run_rng, {true.full, *misses}))
            row.append(
                BundleSpec(
                    index=i,
                    true=true,
                    impostors=(imps[0], imps[1], imps[2]),
                    near_misses=(misses[0], misses[1], misses[2]),
                    topic=templates.topics[topic_idx[i]],
                    other_topic=templates.topics[others[i]],
                    query_template=templates.query_templates[run_rng.integers(len(templates.query_templates))],
                    candidate_template=templates.candidate_templates[
                        run_rng.integers(len(templates.candidate_templates))
                    ],
                )
            )
        specs.append(row)
    return specs


@dataclass
class NamesTexts:
    """All texts of one language: unique strings and an index array [run, condition, query, text].

    The last axis follows ``EMBEDDED``: query, C1, C2a, C2b, C3.
    """

    lang: str
    conditions: list[str]
    unique: list[str]
    index: np.ndarray
    templates: NameTemplates

    @property
    def total(self) -> int:
        return int(self.index.size)


def build_texts(lang: str, n_queries: int, runs: int, seed: int, ablations: list[str]) -> NamesTexts:
    """Render every bundle under base and each ablation, deduplicating texts.

    C4 (impostor, other topic) completes the bundle but enters neither margin, so it is not embedded.
    """
    templates = load_name_templates(lang)
    specs = build_specs(lang, n_queries, runs, seed, templates)
    conditions = ["base", *ablations]
    positions: dict[str, int] = {}
    index = np.empty((runs, len(conditions), n_queries, len(EMBEDDED)), dtype=np.int64)
    for r, row in enumerate(specs):
        for c, cond in enumerate(conditions):
            for q, spec in enumerate(row):
                texts = render_bundle(spec, cond, templates.label, templates.mask)
                for j, pos in enumerate(EMBEDDED):
                    index[r, c, q, j] = positions.setdefault(texts[pos], len(positions))
    return NamesTexts(lang, conditions, list(positions), index, templates)


def margins(texts: NamesTexts, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Δ_name, Δ_topic), each [run, condition, query], from unit vectors of ``texts.unique``."""
    q = vectors[texts.index[..., 0]]
    cands = vectors[texts.index[..., 1:]]
    cos = np.einsum("rcqd,rcqkd->rcqk", q, cands, optimize=True).astype(np.float64)
    delta_name = cos[..., 0] - (cos[..., 1] + cos[..., 2]) / 2
    delta_topic = cos[..., 0] - cos[..., 3]
    return delta_name, delta_topic


def _mean_sd(per_run: np.ndarray) -> tuple[float, float]:
    values = per_run[~np.isnan(per_run)]
    if values.size == 0:
        return float("nan"), float("nan")
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def summarise(conditions: list[str], delta_name: np.ndarray, delta_topic: np.ndarray, epsilon: float) -> dict:
    """The ``base`` and ``ablations`` blocks of the JSON result (see module docstring)."""
    base_dn = delta_name[:, 0, :]
    keep = np.abs(base_dn) >= epsilon  # [run, query]
    run_dn = delta_name.mean(axis=2)  # [run, condition]
    run_dt = delta_topic.mean(axis=2)
    dn, dn_sd = _mean_sd(run_dn[:, 0])
    dt, dt_sd = _mean_sd(run_dt[:, 0])
    base = {
        "delta_name": dn,
        "delta_name_sd": dn_sd,
        "delta_topic": dt,
        "delta_topic_sd": dt_sd,
        "name_topic_ratio": dn / dt if dt != 0 else float("nan"),
    }
    ablations = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for c, name in enumerate(conditions[1:], start=1):
            counts = keep.sum(axis=1)
            kept_base = np.where(keep, base_dn, 0.0).sum(axis=1) / np.maximum(counts, 1)
            kept_abl = np.where(keep, delta_name[:, c, :], 0.0).sum(axis=1) / np.maximum(counts, 1)
            pct_run = np.where(counts > 0, 100.0 * (kept_abl - kept_base) / np.abs(kept_base), np.nan)
            mean, sd = _mean_sd(run_dn[:, c])
            pct_mean, pct_sd = _mean_sd(pct_run)
            topic, topic_sd = _mean_sd(run_dt[:, c])
            ablations.append(
                {
                    "name": name,
                    "delta_name": mean,
                    "delta_name_sd": sd,
                    "pct_change": pct_mean,
                    "pct_change_sd": pct_sd,
                    "abs_change": float(np.mean(run_dn[:, c] - run_dn[:, 0])),
                    "delta_topic": topic,
                    "delta_topic_sd": topic_sd,
                    "excluded": int((~keep).sum()),
                }
            )
    return {"base": base, "ablations": ablations}


def run_names_probe(
    langs: list[str],
    embedders: list[Embedder],
    n_queries: int,
    runs: int,
    seed: int,
    ablations: list[str],
    epsilon: float,
    progress: bool = False,
) -> list[dict]:
    """One result per (language, embedder): ``lang``, ``embedder``, ``base``, ``ablations``, ``texts``."""
    from ragdiag.io.progress import note

    results = []
    for lang in langs:
        texts = build_texts(lang, n_queries, runs, seed, ablations)
        for emb in embedders:
            before = dataclasses.replace(emb.stats)
            if progress:
                note(f"names probe [{lang} · {emb.identity}]: embedding {len(texts.unique):,} distinct texts "
                     "(cached ones are not re-embedded)")
            vectors = emb.encode(texts.unique, progress=progress)
            dn, dt = margins(texts, vectors)
            summary = summarise(texts.conditions, dn, dt, epsilon)
            results.append(
                {
                    "lang": lang,
                    "embedder": emb.identity,
                    **summary,
                    "texts": {"total": texts.total, "unique": len(texts.unique)},
                    "embedding_calls": embedding_calls(before, emb.stats),
                    "data_files": texts.templates.files,
                }
            )
    return results
