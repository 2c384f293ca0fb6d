"""``ragdiag calibrate --suggest N --strategy``: draw the items humans should label (uniform, stratified,
active) with their sampling probabilities, and the estimate the filled sheet then supports.

Drawing: ``uniform`` a simple random sample of N; ``stratified`` a simple random sample inside each
stratum (judge grade rounded, judge disagreement across repeats, or a column of the graded rows), N
split by Neyman's rule on the judge's uncertainty (n_h ∝ N_h·s_h, s_h the RMS of the judge's
uncertainty in stratum h; proportional to N_h without an uncertainty signal), at least 2 per
stratum; ``active`` Bernoulli sampling with π ∝ the judge's uncertainty mixed with uniform (expected
size N; Zrnic & Candès 2024). The sheet records strategy, strata, stratum, sampling probability and
seed on every row. Math: :mod:`ragdiag.metrics.ppi_designs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ragdiag.data.human_grades import HumanGrade, ItemKey
from ragdiag.errors import RagdiagError
from ragdiag.metrics import ppi_designs as pd
from ragdiag.results.calibrate import DesignEstimate, DesignStratum, Interval

STRATEGIES = ("uniform", "stratified", "active")
STRATA_BY = ("grade", "disagreement")
ACTIVE_FLOOR = 0.2  # share of the uniform rule in the active π (Zrnic & Candès mix with uniform for stability)
MIN_PER_STRATUM = 2


@dataclass
class DesignRequest:
    strategy: str
    strata_by: str = "grade"
    strata_col: str | None = None
    seed: int = 0

    @property
    def strata(self) -> str | None:
        """How strata are defined, as the sheet records it: ``grade``, ``disagreement`` or ``column:NAME``."""
        if self.strategy != "stratified":
            return None
        return f"column:{self.strata_col}" if self.strata_col else self.strata_by


@dataclass
class Draw:
    """The drawn items (indices into the pool), their sampling probability and stratum, the expected size."""

    picked: list[int]
    pi: list[float]
    strata: list[str]
    expected: float


def check_design(design: DesignRequest | None, suggest: int, labelled_given: bool) -> None:
    """Refuse, before any work, a draw that cannot be made (one line each)."""
    if design is None:
        return
    if design.strategy not in STRATEGIES:
        raise RagdiagError(f"--strategy must be one of {', '.join(STRATEGIES)}, got {design.strategy!r}")
    if not suggest:
        raise RagdiagError("--strategy chooses how --suggest N draws its items: give --suggest N too")
    if design.strategy != "stratified" and (design.strata_col or design.strata_by != "grade"):
        raise RagdiagError("--strata-by and --strata-col only apply with --strategy stratified")
    if design.strata_col and design.strata_by != "grade":
        raise RagdiagError("give --strata-by or --strata-col, not both (a column replaces the built-in strata)")
    if labelled_given:
        raise RagdiagError("--strategy draws the sheet from every graded item and the estimate then reads that "
                           "sheet as the only human labels: run it without --human")


def judge_sd(records: list[dict[str, Any]]) -> np.ndarray | None:
    """The judge's uncertainty on the grade scale: the SD of its grade distribution when every row has
    ``grade_probs``, else the SD of its repeated ``grades`` (0 with one grade); None with neither."""
    probs = [r.get("grade_probs") for r in records]
    if all(isinstance(p, list) and len(p) == 5 and all(isinstance(x, (int, float)) and x >= 0 for x in p)
           and sum(p) > 0 for p in probs):
        p = np.array(probs, dtype=np.float64)
        p /= p.sum(axis=1, keepdims=True)
        grades = np.arange(1, 6)
        mean = p @ grades
        return np.sqrt(np.maximum(p @ grades**2 - mean**2, 0.0))
    repeats = [[g for g in (r.get("grades") or []) if isinstance(g, (int, float))] for r in records]
    if any(len(g) >= 2 for g in repeats):
        return np.array([float(np.std(g, ddof=1)) if len(g) >= 2 else 0.0 for g in repeats])
    return None


def strata_of(records: list[dict[str, Any]], judge: np.ndarray, strata: str, where: str) -> list[str]:
    """Each row's stratum: ``grade`` = the judge grade rounded (1–5), ``disagreement`` = how far its
    repeats spread (``agree`` range 0, ``near`` range 1, ``far`` range ≥ 2), ``column:NAME`` = the
    row's value of NAME (text)."""
    if strata == "grade":
        return [str(int(np.clip(np.floor(g + 0.5), 1, 5))) for g in judge]
    if strata == "disagreement":
        spreads = []
        for record in records:
            grades = [g for g in (record.get("grades") or []) if isinstance(g, (int, float))]
            if len(grades) < 2:
                raise RagdiagError(f"--strata-by disagreement: {where} has rows without repeated grades (id "
                                   f"{record['id']!r}); grade with --repeats 3 or use --strata-by grade")
            spread = max(grades) - min(grades)
            spreads.append("agree" if spread == 0 else "near" if spread <= 1 else "far")
        return spreads
    name = strata.removeprefix("column:")
    values = []
    for record in records:
        value = record.get(name)
        if value is None or isinstance(value, (dict, list)) or str(value) == "":
            raise RagdiagError(f"--strata-col {name}: {where} row id {record['id']!r} has no scalar value for "
                               f"{name!r}; every graded row needs one")
        values.append(str(value))
    return values


def _allocate(sizes: dict[str, int], spread: dict[str, float], n: int) -> dict[str, int]:
    """Neyman allocation n_h ∝ N_h·s_h (proportional when every s_h is 0), at least 2 and at most N_h
    per stratum, summing to n (largest remainders)."""
    names = sorted(sizes)
    score = np.array([sizes[h] * spread[h] for h in names], dtype=np.float64)
    if score.sum() == 0:
        score = np.array([sizes[h] for h in names], dtype=np.float64)
    alloc = dict.fromkeys(names, MIN_PER_STRATUM)
    left = n - MIN_PER_STRATUM * len(names)
    while left > 0:
        room = np.array([sizes[h] - alloc[h] for h in names])
        share = np.where(room > 0, score, 0.0)
        if share.sum() == 0:
            share = (room > 0).astype(float)
        ideal = left * share / share.sum()
        add = np.minimum(np.floor(ideal).astype(int), room)
        if add.sum() == 0:  # hand out one at a time by largest remainder
            add = np.zeros(len(names), dtype=int)
            add[int(np.argmax(np.where(room > 0, ideal, -1.0)))] = 1
        for h, extra in zip(names, add):
            alloc[h] += int(extra)
        left -= int(add.sum())
    return alloc


def draw(design: DesignRequest, n: int, pool_records: list[dict[str, Any]], pool_judge: np.ndarray,
         where: str) -> Draw:
    """Draw the sheet's items from the pool (seeded by ``design.seed``)."""
    size = len(pool_records)
    if n > size:
        raise RagdiagError(f"--suggest {n} is more than the {size} unlabelled graded items of {where}; "
                           f"give --suggest 1 to {size}")
    rng = np.random.default_rng(design.seed)
    if design.strategy == "uniform":
        picked = sorted(int(i) for i in rng.choice(size, n, replace=False))
        return Draw(picked, [n / size] * n, [""] * n, float(n))
    sd = judge_sd(pool_records)
    if design.strategy == "active":
        if sd is None:
            raise RagdiagError(f"--strategy active: {where} has no judge uncertainty signal (no grade_probs, no "
                               "repeated grades); grade with --repeats 3 (or --grade-mode logprobs) first")
        pi = pd.sampling_probabilities(sd, n, ACTIVE_FLOOR)
        chosen = np.flatnonzero(rng.random(size) < pi)
        return Draw([int(i) for i in chosen], [float(pi[i]) for i in chosen], [""] * len(chosen), float(n))
    assert design.strata is not None
    strata = strata_of(pool_records, pool_judge, design.strata, where)
    sizes = {h: strata.count(h) for h in set(strata)}
    small = sorted(h for h, count in sizes.items() if count < MIN_PER_STRATUM)
    if small:
        raise RagdiagError(f"--strategy stratified ({design.strata}): stratum {small[0]!r} holds {sizes[small[0]]} "
                           f"item; every stratum needs at least {MIN_PER_STRATUM} (coarser strata: another "
                           "--strata-by or --strata-col)")
    if n < MIN_PER_STRATUM * len(sizes):
        raise RagdiagError(f"--suggest {n} is too few for {len(sizes)} strata ({design.strata}); give at least "
                           f"{MIN_PER_STRATUM * len(sizes)} ({MIN_PER_STRATUM} per stratum)")
    labels = np.array(strata)
    spread = {h: float(np.sqrt(np.mean(sd[labels == h] ** 2))) if sd is not None else 1.0 for h in sizes}
    alloc = _allocate(sizes, spread, n)
    picked, pis, names = [], [], []
    for h in sorted(sizes):
        members = np.flatnonzero(labels == h)
        for i in sorted(int(j) for j in rng.choice(members, alloc[h], replace=False)):
            picked.append(i)
            pis.append(alloc[h] / sizes[h])
            names.append(h)
    order = np.argsort(picked, kind="stable")
    return Draw([picked[i] for i in order], [pis[i] for i in order], [names[i] for i in order], float(n))


def _probability(row: HumanGrade, where: str) -> float:
    text = dict(row.design).get("sampling_probability")
    if text is None:
        raise RagdiagError(f"{where}: line {row.line}: field 'sampling_probability': missing; the sheet says how "
                           "its items were drawn, so every row needs the probability --suggest wrote")
    try:
        value = float(text)
    except ValueError:
        raise RagdiagError(f"{where}: line {row.line}: field 'sampling_probability': expected a number in (0, 1], "
                           f"got {text!r}") from None
    if not 0 < value <= 1:
        raise RagdiagError(f"{where}: line {row.line}: field 'sampling_probability': {text} is outside (0, 1]; "
                           "an item drawn with probability 0 cannot be in the sheet (keep the value --suggest wrote)")
    return value


def sheet_design(rows: dict[ItemKey, HumanGrade], where: str) -> tuple[str, str | None, int | None] | None:
    """(strategy, strata, seed) the sheet records, or None for a plain human-grade file; a sheet that
    records it on some rows only, or mixes strategies, is an error naming the line."""
    marked = [row for row in rows.values() if dict(row.design).get("strategy")]
    if not marked:
        return None
    bare = [row for row in rows.values() if not dict(row.design).get("strategy")]
    if bare:
        raise RagdiagError(f"{where}: line {bare[0].line}: field 'strategy': missing while other rows have one; "
                           "a sheet holds the items of one --suggest draw")
    first = dict(marked[0].design)
    for row in marked:
        fields = dict(row.design)
        for name in ("strategy", "strata", "seed"):
            if fields.get(name) != first.get(name):
                raise RagdiagError(f"{where}: line {row.line}: field '{name}': {fields.get(name)!r} differs from "
                                   f"line {marked[0].line}'s {first.get(name)!r}; a sheet holds one draw")
    strategy = first["strategy"]
    if strategy not in STRATEGIES:
        raise RagdiagError(f"{where}: line {marked[0].line}: field 'strategy': {strategy!r} is not one of "
                           f"{', '.join(STRATEGIES)}")
    strata = first.get("strata")
    if strategy == "stratified" and not strata:
        raise RagdiagError(f"{where}: line {marked[0].line}: field 'strata': missing for a stratified sheet")
    seed = first.get("seed")
    return strategy, strata, int(seed) if seed and seed.isdigit() else None


def design_estimate(rows: dict[ItemKey, HumanGrade], keys: list[ItemKey], records: list[dict[str, Any]],
                    judge: np.ndarray, human: dict[ItemKey, int], ppi: Interval | None, alpha: float,
                    where: str) -> DesignEstimate | None:
    """The design's estimate of the mean grade over all ``keys`` (the graded items used, with their
    ``records`` and ``judge`` grades), from the sheet's ``rows``; None for a plain human-grade file."""
    recorded = sheet_design(rows, where)
    if recorded is None:
        return None
    strategy, strata, seed = recorded
    used = set(keys)
    sheet = {key: row for key, row in rows.items() if key in used}
    pis = {key: _probability(row, where) for key, row in sheet.items()}
    position = {key: i for i, key in enumerate(keys)}
    lab = [key for key in keys if key in human]
    y = np.array([human[k] for k in lab], dtype=np.float64)
    yhat = np.array([judge[position[k]] for k in lab])
    unlabelled_rows = sum(1 for key in sheet if key not in human)
    note = (f"{unlabelled_rows} of the sheet's {len(sheet)} rows have no grade yet: the estimate treats them as "
            "not drawn, which is unbiased only if they are missing at random; label them all" if unlabelled_rows
            else None)
    if strategy != "uniform":
        skew = (f"the per-group (--by) and slope estimates treat the labels as a uniform draw, which a {strategy} "
                "sheet is not: read the design's mean above, not those")
        note = skew if note is None else f"{note}; {skew}"
    parts = None
    if strategy == "active":
        estimate = pd.active_ppi_mean(y, yhat, judge, np.array([pis[k] for k in lab]), alpha)
        classical = pd.active_classical_mean(y, np.array([pis[k] for k in lab]), len(keys), alpha)
    elif strategy == "stratified":
        assert strata is not None
        labels = strata_of(records, judge, strata, where)
        for key in sheet:
            written = dict(sheet[key].design).get("stratum")
            if written != labels[position[key]]:
                raise RagdiagError(f"{where}: line {sheet[key].line}: field 'stratum': {written!r}, but the graded "
                                   f"file puts this item in {labels[position[key]]!r} ({strata}); the sheet was "
                                   "drawn from another graded file")
        lab_strata = np.array([labels[position[k]] for k in lab])
        unl = [i for i, key in enumerate(keys) if key not in human]
        try:
            found = pd.stratified_parts(y, yhat, judge[unl], lab_strata, np.array([labels[i] for i in unl]))
        except ValueError as err:
            raise RagdiagError(f"{where}: {err} (strata {strata}); label more items of it or draw coarser strata"
                               ) from None
        estimate = pd.stratified_ppi_mean(y, yhat, judge[unl], lab_strata, np.array([labels[i] for i in unl]),
                                          alpha)
        classical = pd.stratified_classical_mean(y, lab_strata, {p[0]: p[3] for p in found}, alpha)
        parts = [DesignStratum(h, n_lab, n_unl, w, est, lam) for h, n_lab, n_unl, w, est, _, lam in found]
    else:  # uniform: the design's estimate is PPI++ itself
        estimate = (float("nan"),) * 3 if ppi is None or ppi.estimate is None or None in ppi.ci else (
            ppi.estimate, float(ppi.ci[0] or 0.0), float(ppi.ci[1] or 0.0))
        classical = _classical_uniform(y, alpha)
    return DesignEstimate(strategy, strata, seed, len(sheet), len(lab), _as_interval(classical), ppi,
                          _as_interval(estimate), parts, note)


def _classical_uniform(y: np.ndarray, alpha: float) -> tuple[float, float, float]:
    from scipy.stats import norm

    half = float(norm.ppf(1 - alpha / 2)) * float(np.std(y)) / np.sqrt(len(y))
    return float(y.mean()), float(y.mean()) - half, float(y.mean()) + half


def _as_interval(triple: tuple[float, float, float]) -> Interval:
    estimate, low, high = (float(v) if np.isfinite(v) else None for v in triple)
    return Interval(estimate, [low, high])
