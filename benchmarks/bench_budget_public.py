"""Benchmark of the budget planner (issue 43) on public human judgements of RAG answers: predicted PPI++
interval widths against the realised ones, coverage of the 90% intervals, and the labels that
stratified and active designs need to reach the uniform design's width.

Data: ``fixtures/ragchecker-meta/pairs.csv`` (RAGChecker's meta-evaluation, Apache-2.0; see its
SOURCE.md): 280 pairs of RAG answers to one question, each with two annotators' preference of answer 2
over answer 1 (−2 … 2) and RAGChecker's automatic F1 of each answer. Per pair, the human grade Y is the
mean of the two annotators' ``overall`` preference, the judge grade Ŷ is RAGChecker's F1 of answer 2
minus that of answer 1 (the automatic score of the paired Δ). The estimand θ is the mean of Y over the
280 pairs; each resample draws the questions from them with replacement (the pairs as the population,
so draws are independent as the planner assumes) and labels m of them.

1. **Predicted vs realised width.** For each design (n questions, m labels), the realised width is the
   mean width of ppi_py's PPI++ 90% interval (``ppi_mean_ci``, power-tuned λ: what ``calibrate``
   reports) over the resamples; the predicted width is :func:`ragdiag.metrics.budget_plan.width` from
   the variance components of (a) all 280 pairs and (b) a pilot of 280 questions with 40 labels drawn
   like a resample (the median over the pilots, with its 5–95% range): the planner as a user runs it.
   Target: within ±10%.
2. **Coverage**: the share of resamples whose 90% interval holds θ. Target: [88%, 92%].
3. **Designs** (needs ``ragdiag.metrics.ppi_designs``; skipped with a message when absent): strata are
   the quintiles of Ŷ; a pilot of 40 uniform labels (drawn once, seeded) gives each stratum's residual
   SD of Y − Ŷ. Stratified: labels allocated to the strata ∝ N_h·σ_h (Neyman), estimated by
   ``stratified_ppi_mean``. Active: each question labelled with probability π from
   ``sampling_probabilities`` (uncertainty = its stratum's σ_h, the expected m labels, floor 0.1),
   estimated by ``active_ppi_mean`` (inverse-probability weights). For each, the fewest labels (on a
   grid of 5) whose mean width reaches the uniform design's at m = 80. Target: ≥ 25% fewer labels.

Usage: python benchmarks/bench_budget_public.py [--resamples 500] [--pilots 200] [--seed 0] [--no-write]
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, write_section

sys.path.insert(0, str(ROOT))
from ragdiag.metrics import budget_plan as bp

DATA = ROOT / "fixtures" / "ragchecker-meta" / "pairs.csv"
ALPHA = 0.1
PILOT_LABELS = 40
DESIGNS = ((280, 40), (280, 80), (560, 80), (280, 120))  # (questions n, labels m)
UNIFORM_REFERENCE = (280, 80)
STRATA = 5
ACTIVE_FLOOR = 0.1


def load() -> tuple[np.ndarray, np.ndarray, int]:
    """Y (the annotators' mean overall preference) and Ŷ (RAGChecker's F1 difference) per pair, and the
    count of pairs left out for a missing score."""
    y, yhat, missing = [], [], 0
    with DATA.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            if not row["ragchecker1_overall"] or not row["ragchecker2_overall"]:
                missing += 1
                continue
            y.append((float(row["human1_overall"]) + float(row["human2_overall"])) / 2)
            yhat.append(float(row["ragchecker2_overall"]) - float(row["ragchecker1_overall"]))
    return np.array(y), np.array(yhat), missing


def components(y: np.ndarray, yhat: np.ndarray, labelled: np.ndarray) -> bp.Components:
    """The planner's components (no judge repeats: RAGChecker scores once)."""
    return bp.components([[float(v)] for v in yhat], yhat, y[labelled], yhat[labelled])


def ppi_interval(y_lab: np.ndarray, yhat_lab: np.ndarray, yhat_unl: np.ndarray) -> tuple[float, float]:
    import ppi_py

    low, high = ppi_py.ppi_mean_ci(y_lab, yhat_lab, yhat_unl, alpha=ALPHA)
    return float(np.ravel(low)[0]), float(np.ravel(high)[0])


def draw(rng: np.random.Generator, size: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """n questions drawn with replacement from the ``size`` pairs; a uniform m of them labelled."""
    pick = rng.integers(0, size, n)
    labelled = np.zeros(n, dtype=bool)
    labelled[rng.choice(n, m, replace=False)] = True
    return pick, labelled


def uniform(y: np.ndarray, yhat: np.ndarray, resamples: int, pilots: int, seed: int) -> list[dict]:
    """Per design: realised mean width and coverage of PPI++ 90% intervals; predicted widths."""
    theta, size = float(y.mean()), len(y)
    full = components(y, yhat, np.ones(size, dtype=bool))
    rng = np.random.default_rng(seed)
    pilot_comps = []
    for _ in range(pilots):
        pick, labelled = draw(rng, size, size, PILOT_LABELS)
        pilot_comps.append(components(y[pick], yhat[pick], labelled))
    pilot = bp.Pilot(size, 1, PILOT_LABELS)
    rows = []
    for n, m in DESIGNS:
        widths, covered = np.empty(resamples), 0
        for r in range(resamples):
            pick, labelled = draw(rng, size, n, m)
            low, high = ppi_interval(y[pick][labelled], yhat[pick][labelled], yhat[pick][~labelled])
            widths[r] = high - low
            covered += low <= theta <= high
        alloc = bp.Allocation(n - size, 1, m - PILOT_LABELS)
        from_pilots = np.array([bp.width(c, pilot, alloc, ALPHA) for c in pilot_comps])
        realised = float(widths.mean())
        rows.append({"n": n, "m": m, "realised": realised, "realised_se": float(widths.std(ddof=1) / math.sqrt(resamples)),
                     "predicted_full": bp.width(full, pilot, alloc, ALPHA),
                     "predicted_pilot": float(np.median(from_pilots)),
                     "pilot_range": [float(v) for v in np.percentile(from_pilots, [5, 95])],
                     "coverage": covered / resamples})
    return rows


def _ci_width(result: object) -> tuple[float, float]:
    """(low, high) from what a ppi_designs estimator returns: an object with ``ci`` or ``low``/``high``,
    a mapping with ``ci``, or a tuple (low, high) / (estimate, low, high) / (estimate, (low, high))."""
    if isinstance(result, dict):
        result = result["ci"]
    for names in (("low", "high"), ("ci_low", "ci_high")):
        if all(hasattr(result, a) for a in names):
            return float(getattr(result, names[0])), float(getattr(result, names[1]))
    if hasattr(result, "ci"):
        result = result.ci
    parts = list(result)  # type: ignore[call-overload]
    if len(parts) == 2 and np.ndim(parts[1]) == 1 and len(np.ravel(parts[1])) == 2:
        parts = list(np.ravel(parts[1]))
    low, high = parts[-2], parts[-1]
    return float(np.ravel(low)[0]), float(np.ravel(high)[0])


def designs(y: np.ndarray, yhat: np.ndarray, target: float, resamples: int, seed: int) -> tuple[list[dict], str] | str:
    """Labels the stratified and the active design need to reach ``target`` (uniform's mean width)."""
    try:
        from ragdiag.metrics import ppi_designs
    except ImportError as err:
        return (f"skipped: {err} (ragdiag.metrics.ppi_designs, issue 43's stratified and active estimators, "
                "is not in this checkout)")
    size, n = len(y), UNIFORM_REFERENCE[0]
    theta = float(y.mean())
    edges = np.quantile(yhat, np.linspace(0, 1, STRATA + 1)[1:-1])
    stratum = np.searchsorted(edges, yhat, side="right")
    rng = np.random.default_rng(seed + 1)
    pilot = rng.choice(size, PILOT_LABELS, replace=False)
    sd = np.array([max(float(np.std((y - yhat)[pilot][stratum[pilot] == h], ddof=1))
                       if (stratum[pilot] == h).sum() >= 2 else 0.0, 1e-3) for h in range(STRATA)])
    found = []
    for name in ("stratified", "active"):
        chosen = None
        for m in range(20, UNIFORM_REFERENCE[1] + 1, 5):
            widths, covered = np.empty(resamples), 0
            for r in range(resamples):
                pick = rng.integers(0, size, n)
                s = stratum[pick]
                if name == "stratified":
                    counts = np.bincount(s, minlength=STRATA)
                    share = counts * sd / (counts * sd).sum()
                    want = np.minimum(np.maximum(np.round(share * m).astype(int), 2), np.maximum(counts - 1, 0))
                    labelled = np.zeros(n, dtype=bool)
                    for h in range(STRATA):
                        members = np.flatnonzero(s == h)
                        labelled[rng.choice(members, want[h], replace=False)] = True
                    out = ppi_designs.stratified_ppi_mean(y[pick][labelled], yhat[pick][labelled],
                                                          yhat[pick][~labelled], s[labelled], s[~labelled], ALPHA)
                else:
                    pi = np.asarray(ppi_designs.sampling_probabilities(sd[s], m, ACTIVE_FLOOR), dtype=np.float64)
                    labelled = rng.random(n) < pi
                    out = ppi_designs.active_ppi_mean(y[pick][labelled], yhat[pick][labelled], yhat[pick],
                                                      pi[labelled], ALPHA)
                low, high = _ci_width(out)
                widths[r] = high - low
                covered += low <= theta <= high
            se = float(widths.std(ddof=1) / math.sqrt(resamples))
            chosen = {"design": name, "m": m, "width": float(widths.mean()), "width_se": se,
                      "coverage": covered / resamples}
            if widths.mean() <= target:
                break
        assert chosen is not None
        chosen["reached"] = chosen["width"] <= target
        chosen["saving"] = 1 - chosen["m"] / UNIFORM_REFERENCE[1] if chosen["reached"] else None
        found.append(chosen)
    why = ("Per stratum of Ŷ (quintiles): mean Y " + ", ".join(f"{y[stratum == h].mean():+.2f}" for h in range(STRATA))
           + "; residual SD of Y − Ŷ on all pairs " + ", ".join(f"{np.std((y - yhat)[stratum == h], ddof=1):.3f}"
                                                               for h in range(STRATA))
           + ", from the pilot " + ", ".join(f"{v:.3f}" for v in sd) + ".")
    return found, why


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--pilots", type=int, default=200)
    parser.add_argument("--design-resamples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md as it is")
    args = parser.parse_args()
    start = time.perf_counter()
    y, yhat, missing = load()
    rows = uniform(y, yhat, args.resamples, args.pilots, args.seed)
    reference = next(r for r in rows if (r["n"], r["m"]) == UNIFORM_REFERENCE)
    compared = designs(y, yhat, reference["realised"], args.design_resamples, args.seed)
    seconds = time.perf_counter() - start
    full = components(y, yhat, np.ones(len(y), dtype=bool))
    lines = [
        "## Budget planner on public human judgements (`benchmarks/bench_budget_public.py`)", "",
        f"RAGChecker meta-evaluation (`fixtures/ragchecker-meta/`, Apache-2.0): {len(y)} answer pairs"
        + (f" ({missing} left out: no RAGChecker score)" if missing else "")
        + "; Y = the two annotators' mean overall preference (−2 … 2), Ŷ = RAGChecker's F1 difference; "
        f"θ = {y.mean():+.4f}; R² between judge and human {bp.r_squared(full, 1):.3f}. Each resample draws "
        f"n questions with replacement and labels m uniformly; {args.resamples} resamples a design, "
        f"{args.pilots} pilots of {PILOT_LABELS} labels, seed {args.seed}; 90% intervals (ppi_py `ppi_mean_ci`, "
        "PPI++ power-tuned λ).", "",
        "| n | m | realised width (± SE) | predicted, all pairs | vs realised | predicted from a pilot (median; 5–95%) "
        "| vs realised | coverage |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['m']} | {r['realised']:.4f} ± {r['realised_se']:.4f} | {r['predicted_full']:.4f} | "
                     f"{r['predicted_full'] / r['realised'] - 1:+.1%} | {r['predicted_pilot']:.4f} "
                     f"({r['pilot_range'][0]:.4f}–{r['pilot_range'][1]:.4f}) | "
                     f"{r['predicted_pilot'] / r['realised'] - 1:+.1%} | {_pct(r['coverage'])} |")
    worst = max(max(abs(r["predicted_full"] / r["realised"] - 1), abs(r["predicted_pilot"] / r["realised"] - 1))
                for r in rows)
    cover = [r["coverage"] for r in rows]
    lines += ["", f"Predicted width within ±10% of the realised: {'met' if worst <= 0.10 else 'not met'} "
              f"(largest gap {worst:.1%}). Coverage in [88%, 92%]: "
              f"{'met' if all(0.88 <= c <= 0.92 for c in cover) else 'not met'} ({_pct(min(cover))}–{_pct(max(cover))}; "
              f"SE of a coverage near 90% over {args.resamples} resamples: "
              f"{_pct(math.sqrt(0.09 / args.resamples))}).", ""]
    lines.append(f"### Stratified and active designs against uniform (n = {UNIFORM_REFERENCE[0]}, "
                 f"uniform m = {UNIFORM_REFERENCE[1]}: width {reference['realised']:.4f})")
    lines.append("")
    if isinstance(compared, str):
        lines.append(compared)
    else:
        compared, why = compared
        lines += ["| design | labels | mean width (± SE) | coverage | labels saved vs uniform |", "|---|--:|--:|--:|--:|"]
        for c in compared:
            saved = "not reached by m = 80" if c["saving"] is None else _pct(c["saving"])
            lines.append(f"| {c['design']} | {c['m']} | {c['width']:.4f} ± {c['width_se']:.4f} | {_pct(c['coverage'])} "
                         f"| {saved} |")
        top = max(compared, key=lambda c: c["saving"] or 0.0)
        best = top["saving"] or 0.0
        verdict = ("not met" if best < 0.25 else "met" if top["coverage"] >= 0.88
                   else f"met on width, not on coverage ({top['design']} covers {_pct(top['coverage'])})")
        lines += ["", f"≥ 25% fewer labels: {verdict} (best saving {_pct(best)}; "
                  f"{args.design_resamples} resamples per label count; the labels are the first count on the grid "
                  "whose mean width reaches uniform's, so the saving is known to ±5 labels). " + why]
        low = [c for c in compared if c["coverage"] < 0.88]
        if low:
            lines += ["", "Coverage of the designs' 90% intervals below 88%: " + ", ".join(
                f"{c['design']} {_pct(c['coverage'])}" for c in low) + f" (SE {_pct(math.sqrt(0.09 / args.design_resamples))} "
                f"over {args.design_resamples} resamples): a narrower interval that covers less is not yet a saving."]
    lines += ["", f"Whole run: {seconds:.1f} s."]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section("budget-public", text)


if __name__ == "__main__":
    main()
