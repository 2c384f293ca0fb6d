"""``ragdiag triage`` in the terminal: the decision first, then each cause's share with its bootstrap
interval, the evidence it rests on and its fix, the cost, and eRAG's τ when single-passage ran."""

from __future__ import annotations

from typing import Any

from ragdiag.results.triage import ERagSummary, KendallTau, TriageResult


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0%}"


def summary_lines(result: TriageResult) -> list[str]:
    """Plain lines (also used by the HTML report): decision, causes, cost, eRAG."""
    lines = [result.decision()]
    for cause, v in result.ranked_causes():
        lines.append(f"  {cause:<15} {v.count:>4}  {_pct(v.share)} [{_pct(v.ci_low)}, {_pct(v.ci_high)}]  "
                     f"rests on: {result.rests_on(cause)}; fix: {v.fix}")
    calls, cost = result.calls, result.cost
    per = calls.paid_per_triaged_query
    lines.append(f"cost: {cost.worst_case_calls} new calls at most (computed before any call), "
                 f"{calls.paid} paid, {calls.reused} reused; {calls.triaged_queries} queries "
                 f"triaged, {'n/a' if per is None else f'{per:.2f}'} paid calls per triaged query"
                 + (f"; --max-calls {cost.max_calls}" if cost.max_calls is not None else ""))
    if result.left_out:
        lines.append(f"left out: {len(result.left_out)} queries (first: {result.left_out[0].id}: "
                     f"{result.left_out[0].reason})")
    lines += [f"note: {n}" for n in result.notes]
    if result.erag is not None:
        lines.append(erag_line(result.erag))
    over = ("the triaged queries and their repeats (attribution uncertainty)" if result.meta.intervals != "queries"
            else "the triaged queries")
    lines.append(f"seed {result.meta.seed}; bootstrap {result.meta.bootstrap} resamples of {over}")
    return lines


def erag_line(erag: ERagSummary) -> str:
    def tau(part: dict[str, KendallTau], agg: str) -> str:
        t = part[agg].tau if agg in part else None
        return "n/a" if t is None else f"{t:+.2f}"

    return (f"eRAG, Kendall τ with the end-to-end grade over {erag.queries} queries: utility P@k "
            f"{tau(erag.utility, 'p_at_k_mean')}, success@k {tau(erag.utility, 'success_at_k_max')}; relevance P@k "
            f"{tau(erag.relevance, 'p_at_k_mean')}, success@k {tau(erag.relevance, 'success_at_k_max')}")


def print_triage(result: TriageResult, echo: Any) -> None:
    for line in summary_lines(result):
        echo(line)
