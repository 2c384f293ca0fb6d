"""Synthetic graded samples in the exact ``samples_graded`` schema, for tests and benchmarks.

Not data about any real system: rankings come from a simple score model (positives scored
N(μ_E, 1), negatives N(0, 1)), grades from a noisy function of the top K. Used to check the fast
correlation path against a straightforward implementation and to time it at full size.
"""

from __future__ import annotations

import numpy as np

# (subset, Nc, Np, K values) per ranking kind, loosely after paper 003's Table 1.
DEFAULT_CONFIGS = (
    ("A", 50, 2, range(2, 16)), ("A", 50, 5, range(2, 16)), ("A", 100, 10, range(2, 16)),
    ("Hs-e", 10, 2, range(2, 6)), ("Hs-m", 50, 3, range(2, 16)),
    ("M", 30, 2, range(2, 16)), ("M", 50, 4, range(2, 16)),
    ("N", 30, 2, range(2, 16)),
)


def synthetic_graded(n_queries: int = 40, embedders: tuple[str, ...] = ("AM", "QM"), configs=DEFAULT_CONFIGS,
                     seed: int = 0, keep: float = 1.0, max_rows: int | None = None,
                     answers: bool = False) -> list[dict]:
    """Graded records: for each config, query and embedder one ranking and one row per K.

    ``keep`` < 1 drops rows at random (so some x·K siblings are missing); ``max_rows`` truncates.
    """
    rng = np.random.default_rng(seed)
    records: list[dict] = []
    quality = {e: 1.0 + 0.4 * i for i, e in enumerate(embedders)}
    for subset, nc, np_, k_values in configs:
        ks = list(k_values)
        for emb in embedders:
            scores = rng.normal(0.0, 1.0, size=(n_queries, nc))
            scores[:, :np_] += quality[emb]
            ranks = np.argsort(-scores, axis=1, kind="stable")
            noise = rng.normal(0.0, 0.7, size=(n_queries, len(ks)))
            for q in range(n_queries):
                flags = (ranks[q] < np_).astype(int)
                for j, k in enumerate(ks):
                    in_k = flags[:k]
                    n = int(in_k.sum())
                    latent = 1.0 + 3.2 * n / np_ - 1.2 * (k - n) / max(k, 1) + 0.6 * in_k[0] + noise[q, j]
                    records.append({
                        "id": f"{subset}-{q}", "E": emb, "Nc": nc, "Np": np_, "K": k,
                        "rank": [int(x) for x in ranks[q, :k]], "inK": [int(x) for x in in_k],
                        "answer_ideal": "ideal answer text " * 8 if answers else "",
                        "answer_topK": "top-K answer text " * 8 if answers else "",
                        "grade": int(np.clip(np.rint(latent), 1, 5)), "P": n / k, "R": n / np_,
                    })
    if keep < 1.0:
        mask = rng.random(len(records)) < keep
        records = [r for r, m in zip(records, mask) if m]
    return records[:max_rows] if max_rows else records
