"""Build the bundled retrieval-response sample (subset M) in the exact schema of paper 003, A.1.

Texts are written by :mod:`tools.sample_passages`; candidates are ranked for real by
cosine similarity with the bundled all-MiniLM-L6-v2 (code ``L6``) through
:func:`ragdiag.pipeline.rank.rank_texts`, the path ``--rank-with local`` takes;
grades are SIMULATED (no LLM is reachable) by :data:`GRADE_FORMULA`. Provenance goes to
``meta.json`` beside the three data files, whose records keep the exact schema.

    python -m tools.sample_builder --out fixtures/retrieval-response-sample --seed 0
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag import __version__
from ragdiag.pipeline.rank import COSINE_DECIMALS
from tools.sample_passages import load_topics, topics_path, write_texts_samples

EMBEDDER_SPEC = "local"
EMBEDDER_CODE = "L6"  # all-MiniLM-L6-v2; the paper's codes are AM, EM, ES, QM (docs/methods.md#1-the-retrieval-response-dataset)
NC_VALUES = (30, 50)
NP_VALUES = (2, 3, 4, 5)
K_VALUES = tuple(range(2, 16))

# Grade model constants (see GRADE_FORMULA).
USEFULNESS_RANGE = (0.25, 0.75)
QUERY_SD = 0.5
POSITION_SCALE = 8.0
NEGATIVE_WEIGHT = 2.5
NEGATIVE_HALF = 8.0
NOISE_SD = 0.6

GRADE_FORMULA = f"""\
SIMULATED grades (no LLM judge). Per query i, rng = numpy.random.default_rng([seed, 2, i]) draws,
in this order: usefulness u_1..u_5 ~ Uniform{USEFULNESS_RANGE} of its positives, a query offset
b ~ Normal(0, {QUERY_SD}), then one noise e ~ Normal(0, {NOISE_SD}) per graded row, rows in the
order Nc in {list(NC_VALUES)}, Np in {list(NP_VALUES)}, K in {K_VALUES[0]}..{K_VALUES[-1]}.
For a row with top-K ranking r_0..r_(K-1):
  coverage = 1 - prod over positions j < K holding a positive r_j < Np of (1 - u_(r_j) / (1 + j/{POSITION_SCALE}))
  ideal    = 1 - prod over i < Np of (1 - u_i)          (the ideal answer sees every positive)
  nn       = negatives in the top K
  s        = 1 + 4 * coverage / ideal - {NEGATIVE_WEIGHT} * nn / (nn + {NEGATIVE_HALF}) + b + e
  grade    = min(5, max(1, round(s)))                   (numpy.rint: half to even)
So: more retrieved positives and better-ranked ones raise the grade with diminishing returns,
negatives in the top K lower it more as K grows, and queries and rows vary at random."""


def simulated_grade(top_k: list[int], np_: int, usefulness: np.ndarray, offset: float, noise: float) -> int:
    """One simulated 1–5 grade for a top-K ranking (the formula in :data:`GRADE_FORMULA`)."""
    missed = 1.0
    for j, index in enumerate(top_k):
        if index < np_:
            missed *= 1.0 - usefulness[index] / (1.0 + j / POSITION_SCALE)
    ideal = 1.0 - float(np.prod(1.0 - usefulness[:np_]))
    negatives = sum(1 for index in top_k if index >= np_)
    score = 1.0 + 4.0 * (1.0 - missed) / ideal - NEGATIVE_WEIGHT * negatives / (negatives + NEGATIVE_HALF)
    return int(min(5, max(1, np.rint(score + offset + noise))))


def graded_records(ranked: list[dict[str, Any]], query_index: int, seed: int) -> list[dict[str, Any]]:
    """Graded samples (A.1.3) of one query's ranked samples, one per K, with simulated grades."""
    rng = np.random.default_rng([seed, 2, query_index])
    usefulness = rng.uniform(*USEFULNESS_RANGE, size=max(NP_VALUES))
    offset = float(rng.normal(0.0, QUERY_SD))
    records = []
    for sample in ranked:
        np_ = sample["Np"]
        for pos, k in enumerate(sample["K"]):
            top_k = sample["rank"][:k]
            grade = simulated_grade(top_k, np_, usefulness, offset, float(rng.normal(0.0, NOISE_SD)))
            records.append({
                "id": sample["id"], "E": sample["E"], "Nc": sample["Nc"], "Np": np_, "K": k, "rank": top_k,
                "inK": [1 if i < np_ else 0 for i in top_k], "answer_ideal": "", "answer_topK": "",
                "grade": grade, "P": sample["P"][pos], "R": sample["R"][pos],
            })
    return records


def embedder_identity(cache_dir: Path | None) -> str:
    """The identity string of the embedder the sample is ranked with (``st:all-MiniLM-L6-v2``)."""
    from ragdiag.retrieval.embedders import load_embedder

    return load_embedder(EMBEDDER_SPEC, cache_dir).identity


def _dump(records: list[dict[str, Any]], path: Path) -> str:
    """Write one JSON list, one compact record per line; return the file's sha256."""
    text = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records) + "\n]\n"
    data = text.encode("utf-8")
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def build_sample(out_dir: Path, seed: int = 0, cache_dir: Path | None = None, n_queries: int | None = None,
                 progress: bool = False) -> dict[str, int]:
    """Write samples_texts/ranked/graded.json and meta.json to ``out_dir``; return the counts.

    ``n_queries`` keeps only the first queries (for quick checks); their records are identical
    to the full build's, since every random draw is seeded per query.
    """
    from ragdiag.data.schema import TextsSample
    from ragdiag.pipeline.rank import rank_texts

    texts = write_texts_samples(seed, load_topics())[:n_queries]
    distinct = {t for s in texts for t in (s["q"], *s["p"], *s["n"])}
    variants = [(nc, np_) for nc in NC_VALUES for np_ in NP_VALUES]
    samples = [TextsSample.from_json(t, "samples_texts.json", i) for i, t in enumerate(texts, start=1)]
    ranked = [r.to_json() for r in rank_texts(samples, EMBEDDER_SPEC, list(K_VALUES), cache_dir, progress, variants)]
    graded = []
    for index in range(len(texts)):
        graded += graded_records(ranked[index * len(variants) : (index + 1) * len(variants)], index, seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    hashes = {name: _dump(records, out_dir / name) for name, records in (
        ("samples_texts.json", texts), ("samples_ranked.json", ranked), ("samples_graded.json", graded))}
    counts = {"queries": len(texts), "ranked": len(ranked), "graded": len(graded), "distinct_texts": len(distinct)}
    meta = {
        "simulated_grades": True,
        "formula": GRADE_FORMULA,
        "seed": seed,
        "embedder": {"E": EMBEDDER_CODE, "spec": EMBEDDER_SPEC, "identity": embedder_identity(cache_dir),
                     "ranking": f"cosine similarity rounded to {COSINE_DECIMALS} decimals, ties by candidate index"},
        "built_with": f"ragdiag {__version__}",
        "command": f"python -m tools.sample_builder --out <dir> --seed {seed}"
                   + (f" --queries {n_queries}" if n_queries is not None else ""),
        "params": {"Nc": list(NC_VALUES), "Np": list(NP_VALUES), "K": list(K_VALUES)},
        "source": {"file": "source/topics.json",
                   "sha256": hashlib.sha256(topics_path().read_bytes()).hexdigest()},
        "files": hashes,
        "counts": counts,
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.sample_builder --out DIR --seed 0``."""
    parser = argparse.ArgumentParser(description="Build the bundled retrieval-response sample (simulated grades).")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    parser.add_argument("--queries", type=int, default=None, help="keep only the first N queries")
    args = parser.parse_args(argv)
    counts = build_sample(args.out, args.seed, args.cache_dir, args.queries, progress=True)
    print(json.dumps({"seed": args.seed, "out": str(args.out), "counts": counts}))


if __name__ == "__main__":
    main()
