"""Agreement between an LLM utility judge and human grades (1–5) on the pairs both graded.

* Confusion matrix C[i, j] = pairs the judge graded i+1 and the human j+1.
* Weighted Cohen's κ with quadratic weights (Cohen 1968; Fleiss & Cohen 1973):
  κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij, w_ij = (i − j)² / (k − 1)², O the observed proportions,
  E = outer product of the two marginals; undefined (None) when Σ w E = 0 (one grade only).
* Krippendorff's α (ordinal, ``krippendorff`` package) is added by the caller
  (:func:`ragdiag.answers.agreement.ordinal_alpha`), so this module stays below the pipeline layer.
* Mean absolute difference |judge − human|.
* :func:`judge_human_agreement` (``ragdiag calibrate``) adds Spearman, ±1 agreement and the mean bias.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

GRADES = 5


def confusion(judge: np.ndarray, human: np.ndarray) -> np.ndarray:
    """5 × 5 counts, rows = judge grade, columns = human grade."""
    matrix = np.zeros((GRADES, GRADES), dtype=np.int64)
    np.add.at(matrix, (judge.astype(int) - 1, human.astype(int) - 1), 1)
    return matrix


def quadratic_weighted_kappa(matrix: np.ndarray) -> float | None:
    """Cohen's weighted κ with quadratic disagreement weights from a confusion matrix."""
    counts = np.asarray(matrix, dtype=np.float64)
    total = counts.sum()
    if total == 0:
        return None
    observed = counts / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    k = counts.shape[0]
    i, j = np.indices((k, k))
    weights = (i - j) ** 2 / (k - 1) ** 2
    denominator = float((weights * expected).sum())
    if denominator == 0:
        return None
    return 1.0 - float((weights * observed).sum()) / denominator


def shared_pairs(judge: Mapping[tuple[str, str], int], human: Mapping[tuple[str, str], int]) -> np.ndarray:
    """(2, n) grades of the pairs both graded, judge first, in sorted pair order."""
    pairs = sorted(set(judge) & set(human))
    return np.array([[judge[p] for p in pairs], [human[p] for p in pairs]], dtype=np.float64).reshape(2, len(pairs))


def judge_vs_human(judge: Mapping[tuple[str, str], int], human: Mapping[tuple[str, str], int]) -> dict[str, Any]:
    """Agreement on the (query, doc) pairs present in both mappings (grades 1–5)."""
    pairs = sorted(set(judge) & set(human))
    result: dict[str, Any] = {"pairs": len(pairs), "judge_only": len(set(judge) - set(human)),
                              "human_only": len(set(human) - set(judge))}
    if not pairs:
        return {**result, "confusion": None, "kappa_quadratic": None, "mean_abs_diff": None}
    a = np.array([judge[p] for p in pairs], dtype=np.float64)
    b = np.array([human[p] for p in pairs], dtype=np.float64)
    matrix = confusion(a, b)
    return {**result, "confusion": {"rows": "judge grade 1-5", "columns": "human grade 1-5", "counts": matrix.tolist()},
            "kappa_quadratic": quadratic_weighted_kappa(matrix),
            "mean_abs_diff": float(np.abs(a - b).mean()), "exact_agreement": float((a == b).mean())}


def rounded_grade(grade: np.ndarray) -> np.ndarray:
    """Nearest integer grade 1–5, halves rounded up (a mean of repeats 3.5 → 4)."""
    return np.clip(np.floor(np.asarray(grade, dtype=np.float64) + 0.5), 1, 5)


def judge_human_agreement(judge: np.ndarray, human: np.ndarray) -> dict:
    """Agreement of a judge grade (a mean of repeats or an expected grade allowed) with integer human
    grades on the same items: quadratic κ, confusion matrix, exact and ±1 agreement on the judge grade
    rounded; Spearman ρ and the mean bias mean(judge − human) on it as is (``ragdiag calibrate``)."""
    import warnings

    from scipy import stats

    judge, human = np.asarray(judge, dtype=np.float64), np.asarray(human, dtype=np.float64)
    whole = rounded_grade(judge)
    matrix = confusion(whole, human)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = stats.spearmanr(judge, human)[0] if len(judge) > 2 else np.nan
    return {"items": int(len(judge)), "kappa_quadratic": quadratic_weighted_kappa(matrix),
            "spearman": float(rho) if np.isfinite(rho) else None,
            "exact": float(np.mean(whole == human)), "within_one": float(np.mean(np.abs(whole - human) <= 1)),
            "mean_bias": float(np.mean(judge - human)),
            "confusion": {"rows": "judge grade 1-5 (rounded)", "columns": "human grade 1-5", "counts": matrix.tolist()}}
