"""The ``ragdiag triage`` section of the HTML report (:class:`ragdiag.results.triage.TriageResult`): the
decision first ("ranking explains 42% [35%, 49%] of the failures: a reranker or a larger K is the
lever"), then each cause with its share, bootstrap interval, count, the evidence it rests on and fix, the cost, and eRAG's τ."""

from __future__ import annotations

from ragdiag.report.html.inputs import Input
from ragdiag.report.html.page import Section, esc, labels, table


def triage_section(item: Input, test_server: bool) -> Section:
    from ragdiag.report.triage_report import erag_line, summary_lines
    from ragdiag.results.triage import TriageResult

    result = TriageResult.from_json(item.doc)
    lines = summary_lines(result)
    body = [labels(test_server=test_server),
            f'<div class="verdict"><strong>Decision</strong><ul><li>{esc(lines[0])}</li></ul></div>']
    rows = [[cause, v.count, f"{v.share:.0%}" if v.share is not None else "n/a",
             "n/a" if v.ci_low is None or v.ci_high is None else f"[{v.ci_low:.0%}, {v.ci_high:.0%}]",
             result.rests_on(cause), v.fix]
            for cause, v in result.ranked_causes()]
    body.append(table(["cause", "queries", "share", "95% interval", "rests on", "fix"], rows,
                      caption=f"primary cause of each failing query (bootstrap over {result.meta.intervals})"))
    notes = [line for line in lines[1:] if not line.startswith("  ")]
    if result.erag is not None:
        notes = [n for n in notes if n != erag_line(result.erag)] + [erag_line(result.erag)]
    body.append('<ul class="note">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return Section("triage", "Triage: why the failing answers failed", str(item.path), "".join(body))
