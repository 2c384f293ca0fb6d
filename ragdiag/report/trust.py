"""'How far to trust this': plain sentences on the judge behind a correlate or calibrate result.

Correlate: read from a :class:`~ragdiag.results.correlate.CorrelateResult` (``judge_reliability``,
each result's ``corrected`` and each verdict's ``lead_holds_joint`` from the judge-noise correction,
``meta.reference_gate`` from the reference-quality gate). Calibrate: from its JSON keys
(``agreement`` / ``estimates``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from ragdiag.results.correlate import CorrelateResult, JudgeReliability, KindEntry, ReferenceGate, Verdict


def survival_clause(verdict: Verdict) -> str | None:
    """'lead holds in 97% of joint resamples' or 'lead does not survive judge noise (…)'; None without
    a joint bootstrap."""
    holds = verdict.lead_holds_joint
    if holds is None:
        return None
    if verdict.survives_judge_noise:
        return f"lead holds in {100 * holds:.0f}% of joint resamples"
    return f"lead does not survive judge noise (holds in {100 * holds:.0f}% of joint resamples)"


def corrected_text(entry: KindEntry, sep: str = "\n") -> str | None:
    """'corrected 0.420 (rel 0.71)' and its interval for a result entry; None when not computed."""
    block = entry.corrected
    if not block:
        return None
    rel = block.reliability
    if block.value is None:
        return "corrected – (rel " + ("undefined)" if rel is None else f"{rel:.2f} ≤ 0)")
    text = f"corrected {block.value:.3f} (rel {rel:.2f})"
    if block.ci:
        text += f"{sep}[{block.ci[0]:.3f}, {block.ci[1]:.3f}]"
    return text


def reliability_sentence(reliability: JudgeReliability) -> str:
    """One sentence: where the reliability comes from and its values."""
    used = reliability.reliability
    source = ("the mean of its repeated grades" if reliability.source == "repeats"
              else "one judge's grade, compared with the other judge's")
    parts = [f"judge reliability ({source}, {reliability.ratings_per_row:g} ratings per row): "
             + ("undefined (no spread between or within rows)" if used is None
                else f"{reliability.used.replace('icc_1_k', 'ICC(1,k)').replace('icc_1_1', 'ICC(1,1)')} = {used:.2f}")]
    if reliability.icc_1_1 is not None and reliability.source == "repeats":
        parts.append(f"one grade alone ICC(1,1) = {reliability.icc_1_1:.2f}")
    if reliability.alpha_ordinal is not None:
        parts.append(f"Krippendorff's α (ordinal) = {reliability.alpha_ordinal:.2f}")
    elif reliability.alpha_interval is not None:
        parts.append(f"Krippendorff's α (interval, expected grades) = {reliability.alpha_interval:.2f}")
    text = "; ".join(parts)
    if used is not None:
        text += (f"; correlations are divided by √{used:.2f} = {used ** 0.5:.2f} (Spearman's correction), "
                 "capped at 1")
    if reliability.ratings_note:
        text += f"; {reliability.ratings_note}"
    return text


def degenerate_sentence(gate: ReferenceGate | None) -> str | None:
    """The reference-quality gate's counts as correlate records them in ``meta.reference_gate``
    (``applied``, ``excluded_rows``, ``rows_checked``, ``by_kind``); None when the gate did not apply."""
    if gate is None or not gate.applied:
        return None
    kinds = ", ".join(f"{kind} {count}" for kind, count in (gate.by_kind or {}).items() if count)
    excluded = gate.excluded_rows
    checked = "?" if gate.rows_checked is None else gate.rows_checked
    text = (f"{excluded} of {checked} rows left out: graded against a degenerate ideal answer"
            if excluded else "no row was graded against a degenerate ideal answer")
    return text + (f" ({kinds})" if kinds else "")


def correlate_trust(report: CorrelateResult) -> list[str]:
    """Plain sentences for a correlate result (empty when it carries nothing about the judge)."""
    lines = []
    degenerate = degenerate_sentence(report.meta.reference_gate)
    if degenerate:
        lines.append(degenerate)
    reliability = report.judge_reliability
    if reliability:
        lines.append(reliability_sentence(reliability))
        for verdict in report.verdicts:
            clause = survival_clause(verdict)
            where = verdict.subset if verdict.side in ("pooled", "all") else f"{verdict.subset}, {verdict.side}"
            if clause and verdict.runner_up:
                pair = f"lead of {verdict.best} over {verdict.runner_up}"
                lines.append(f"{where}: the {clause.replace('lead', pair, 1)}")
            elif verdict.runner_up and not reliability.joint_bootstrap:
                lines.append(f"{where}: survival of the lead under judge noise needs --bootstrap N")
    return lines


def _known(block: dict | None) -> TypeGuard[dict]:
    """An estimate with its interval, all numbers (a field left null in a file is not)."""
    if not block:
        return False
    return all(isinstance(v, (int, float)) for v in (block.get("estimate"), *(block.get("ci") or [None])))


def _interval_text(block: dict | None) -> str:
    if not _known(block):
        return "–"
    return f"{block['estimate']:.3f} [{block['ci'][0]:.3f}, {block['ci'][1]:.3f}]"


def calibrate_trust(result: dict) -> list[str]:
    """Plain sentences for a calibrate result: rows left out by the reference gate (when any), agreement,
    then what the human labels changed."""
    lines = []
    gate = (result.get("meta") or {}).get("reference_gate") or {}
    if gate.get("degenerate_rows"):
        kinds = ", ".join(f"{kind} {count}" for kind, count in (gate.get("by_kind") or {}).items() if count)
        lines.append(f"{gate['degenerate_rows']} of {gate['rows_checked']} graded rows have a degenerate ideal answer "
                     f"({kinds}): " + ("kept (--keep-degenerate)" if gate.get("kept")
                                      else "left out of everything below; --keep-degenerate uses them"))
    agreement = result.get("agreement")
    if agreement:
        text = (f"the judge agrees with humans within one grade on {100 * agreement['within_one']:.0f}% of "
                f"{agreement['items']} items (exactly on {100 * agreement['exact']:.0f}%)")
        bias = agreement["mean_bias"]
        text += f"; it grades {abs(bias):.2f} {'higher' if bias >= 0 else 'lower'} than humans on average"
        if agreement.get("kappa_quadratic") is not None:
            text += f"; weighted κ (quadratic) = {agreement['kappa_quadratic']:.2f}"
        lines.append(text)
    estimates = result.get("estimates") or {}
    level = 100 * (1 - estimates.get("alpha", 0.1))
    overall = next((m for m in estimates.get("mean_grade", []) if m["group"] == "all"), None)
    if overall and _known(overall.get("ppi")) and _known(overall.get("judge_only")):
        ppi, judge = overall["ppi"], overall["judge_only"]
        inside = judge["ci"][0] <= ppi["estimate"] <= judge["ci"][1]
        lines.append(f"mean grade with the human labels (PPI, {level:.0f}% interval): {_interval_text(ppi)}; "
                     f"the judge alone says {_interval_text(judge)}"
                     + ("" if inside else ", an interval that misses the human-anchored estimate"))
    for slope in estimates.get("slopes", []):
        if _known(slope.get("ppi")):
            ci = slope["ppi"]["ci"]
            sign = "rises" if ci[0] > 0 else "falls" if ci[1] < 0 else "may not change"
            lines.append(f"grade {sign} with {slope['measure']} once anchored on humans: slope "
                         f"{_interval_text(slope['ppi'])} (judge alone {_interval_text(slope.get('judge_only'))})")
    return lines
