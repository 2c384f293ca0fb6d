"""The straightforward per-sample implementation of docs/methods.md#2-per-sample-measures and
#3-correlation-analysis: a Python loop over α and samples, scipy correlations, max with the first α reaching it.

``reference_correlate`` is the baseline the benchmark times the fast path against, and
``correlation_at`` (scipy, one α) checks every value the fast path reports. ``reference_maxima`` is the
same computation with each correlation written out from its definition in numpy over all α at once
(rows = α): the oracle the tests compare every maximum with (within 1e-9), one numpy pass per
segment and measure instead of one scipy call per α and kind. Not used by the CLI.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats


def _segment_key(record: dict, mode: str) -> str:
    subset = record["id"].split("-", 1)[0]
    if mode == "ratio":
        return f"{record['E']}^{subset}^KtoN^{round(record['K'] / record['Np'], 1)}"
    return f"{record['E']}^{subset}^{1 if record['Np'] <= record['K'] else 0}"


def _ndcg(in_k: list[int]) -> float:
    n = sum(in_k)
    if n == 0:
        return 0.0
    dcg = 0.0
    for i, v in enumerate(in_k):
        dcg += v / math.log2(i + 2)
    ideal = 0.0
    for i in range(n):
        ideal += 1 / math.log2(i + 2)
    return dcg / ideal


def _value(measure: str, record: dict, a: float, s: int | None) -> float:
    k, np_ = record["K"], record["Np"]
    n = sum(record["inK"])
    nn = k - n
    if measure == "F":
        return n / (a * k + (1 - a) * np_)
    if measure == "E":
        return n / (a * k + (1 - a) * (s + 1e-10))
    if measure == "T":
        return (1 - a) * n - a * nn / k
    if measure == "T'":
        return (1 - a) * n - a * nn
    if measure == "P":
        return n / k
    if measure == "R":
        return n / np_
    return _ndcg(record["inK"])


def _correlate(kind: str, x: list[float], y: list[float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "spearman":
            return float(stats.spearmanr(x, y)[0])
        if kind == "pearson":
            return float(stats.pearsonr(x, y)[0]) if len(set(x)) > 1 and len(set(y)) > 1 else math.nan
        variant = "b" if kind == "kendall_b" else "c"
        return float(stats.kendalltau(x, y, variant=variant)[0])


def segment_samples(records: list[dict], mode: str, measure: str, xk: float = 2.0) -> dict[str, list[tuple]]:
    """{segment: [(record, S)]} of the graded rows a measure can use (E: rows with an x·K sibling)."""
    n_by_k = {(r["id"], r["E"], r["Nc"], r["Np"], r["K"]): sum(r["inK"]) for r in records}
    out: dict[str, list[tuple]] = {}
    for r in records:
        if r["grade"] is None:
            continue
        s = n_by_k.get((r["id"], r["E"], r["Nc"], r["Np"], round(xk * r["K"])))
        if measure != "E" or s is not None:
            out.setdefault(_segment_key(r, mode), []).append((r, s))
    return out


def values_at(measure: str, samples: list[tuple], a: float | None, exact: bool = True) -> list[float]:
    """The measure at α = a of each sample; ``exact``: printed to 12 significant digits (ties equal in
    exact arithmetic)."""
    values = [_value(measure, r, a, s) for r, s in samples]
    return [float(f"{v:.12g}") for v in values] if exact else values


def correlate_values(kind: str, values: list[float], samples: list[tuple]) -> float:
    """The correlation of ``values`` with the grades of the samples (NaN if undefined)."""
    return _correlate(kind, values, [float(r["grade"]) for r, _ in samples])


def correlation_at(kind: str, measure: str, samples: list[tuple], a: float | None, exact: bool = True) -> float:
    """The correlation of the measure at α = a with the grades of the samples (NaN if undefined)."""
    return correlate_values(kind, values_at(measure, samples, a, exact), samples)


def reference_correlate(records: list[dict], mode: str, min_samples: int, measures: tuple[str, ...],
                        kinds: tuple[str, ...], alphas: np.ndarray, xk: float = 2.0, exact: bool = True) -> dict:
    """{(segment, measure): {"n": rows, kind: (max value or None, α or None)}}."""
    out = {}
    for measure in measures:
        for key, use in segment_samples(records, mode, measure, xk).items():
            if len(use) < min_samples:
                continue
            grid = alphas if measure in ("F", "E", "T", "T'") else [None]
            entry: dict = {"n": len(use)}
            for kind in kinds:
                best, best_a = None, None
                for a in grid:
                    value = correlation_at(kind, measure, use, a, exact)
                    if not math.isnan(value) and (best is None or value > best):
                        best, best_a = value, a
                entry[kind] = (best, None if best_a is None else float(best_a))
            out[(key, measure)] = entry
    return out


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per row of ``x``: Σ(x−x̄)(y−ȳ) / √(Σ(x−x̄)² Σ(y−ȳ)²); NaN where x or y is constant."""
    dx, dy = x - x.mean(axis=1, keepdims=True), y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx @ dy) / np.sqrt((dx * dx).sum(axis=1) * (dy @ dy))
    constant = (x.max(axis=1) == x.min(axis=1)) | (y.max() == y.min())
    return np.where(constant, np.nan, r)


def _kendall_rows(x: np.ndarray, y: np.ndarray, variant: str) -> np.ndarray:
    """Per row of ``x``, over the pairs i < j: S = Σ sign(xᵢ−xⱼ)·sign(yᵢ−yⱼ) (concordant − discordant);
    τ_b = S / √((n₀−n₁)(n₀−n₂)) with n₀ = n(n−1)/2 and n₁, n₂ the pairs tied in x, in y;
    τ_c = 2S / (n²(m−1)/m) with m = min(distinct x, distinct y). NaN where x or y is constant."""
    n = x.shape[1]
    sx = np.sign(x[:, :, None] - x[:, None, :])  # (α, n, n), symmetric up to sign: each pair counted twice
    sy = np.sign(y[:, None] - y[None, :])
    s = (sx * sy).sum(axis=(1, 2)) / 2
    n0 = n * (n - 1) / 2
    tied_x = ((sx == 0).sum(axis=(1, 2)) - n) / 2
    tied_y = ((sy == 0).sum() - n) / 2
    constant = (tied_x == n0) | (tied_y == n0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            tau = s / np.sqrt((n0 - tied_x) * (n0 - tied_y))
        else:
            m = np.minimum([len(np.unique(row)) for row in x], len(np.unique(y)))
            tau = 2 * s / (n * n * (m - 1) / m)
    return np.where(constant, np.nan, tau)


def _curves(kind: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The correlation of every row of ``x`` (one per α) with ``y``; Spearman = Pearson of average ranks."""
    if kind == "spearman":
        return _pearson_rows(stats.rankdata(x, axis=1), stats.rankdata(y))
    if kind == "pearson":
        return _pearson_rows(x, y)
    return _kendall_rows(x, y, "b" if kind == "kendall_b" else "c")


def reference_maxima(records: list[dict], mode: str, min_samples: int, measures: tuple[str, ...],
                     kinds: tuple[str, ...], alphas: np.ndarray, xk: float = 2.0, exact: bool = True) -> dict:
    """What :func:`reference_correlate` returns, the correlations computed over all α at once:
    {(segment, measure): {"n": rows, kind: (max value or None, first α reaching it or None)}}."""
    out = {}
    for measure in measures:
        for key, use in segment_samples(records, mode, measure, xk).items():
            if len(use) < min_samples:
                continue
            grid = list(alphas) if measure in ("F", "E", "T", "T'") else [None]
            values = [[_value(measure, r, a, s) for r, s in use] for a in grid]  # per sample, as the loop above
            if exact:
                values = [[float(f"{v:.12g}") for v in row] for row in values]
            x, y = np.array(values), np.array([float(r["grade"]) for r, _ in use])
            entry: dict = {"n": len(use)}
            for kind in kinds:
                curve = _curves(kind, x, y)
                if np.isnan(curve).all():
                    entry[kind] = (None, None)
                    continue
                first = int(np.nanargmax(curve))
                entry[kind] = (float(curve[first]), None if grid[first] is None else float(grid[first]))
            out[(key, measure)] = entry
    return out
