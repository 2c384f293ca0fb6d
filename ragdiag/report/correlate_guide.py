"""The plain-words part of a ``correlate`` result: where the numbers come from (simulated grades,
test server), one line of advice drawn from the verdict, and a legend line for every measure shown.

Shared by the terminal (:func:`ragdiag.report.correlate_report.print_report`) and the HTML report.
Measures as in :mod:`ragdiag.measures.sample` (paper 003, eqs. 1–3). The manifest beside the graded
file is read by the caller (:func:`ragdiag.commands.provenance.sidecar_manifests`) and passed in.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from ragdiag.measures import registry
from ragdiag.metrics.analysis import TIE_TOLERANCE
from ragdiag.report.provenance import SIMULATED_LINE, TEST_SERVER_MODELS, record_marked, test_server_line
from ragdiag.results.correlate import CorrelateResult, Verdict

SYMBOLS = registry.LEGEND_SYMBOLS
LEGEND = {m.name: m.legend for m in registry.CORRELATE.measures}


def _models(report: CorrelateResult) -> list[str]:
    """Every LLM model name the result records (run record, pipeline metadata)."""
    models = ((report.run_record or {}).get("models") or {}).get("llm") or []
    models = list(models) if isinstance(models, list) else [models]
    for stage in ("generate_meta", "grade_meta"):
        llm = ((report.meta.extra.get("pipeline") or {}).get(stage) or {}).get("llm") or {}
        models.append(llm.get("model"))
    return [str(m) for m in models if m]


def _sidecar_models(sidecars: Sequence[Any]) -> list[str]:
    """Model names in the first manifest beside the graded file (``NAME.manifest.json``, else
    ``STEM.manifest.json``; parsed JSON), if any, and ``ragdiag-test-server`` when its run record
    counts test-server replies."""
    for doc in sidecars:
        if isinstance(doc, dict):
            llm = ((doc.get("meta") or {}).get("llm") or {}).get("model")
            recorded = ((doc.get("run_record") or {}).get("models") or {}).get("llm") or []
            marked = [TEST_SERVER_MODELS[0]] if record_marked(doc.get("run_record")) else []
            return [str(m) for m in ([llm] + (recorded if isinstance(recorded, list) else [recorded])) if m] + marked
    return []


def provenance_lines(report: CorrelateResult, sidecars: Sequence[Any] = ()) -> list[str]:
    """The loud lines a result from the bundled sample or the test server starts with; ``sidecars``:
    the manifests beside its graded file (:func:`ragdiag.commands.provenance.sidecar_manifests`)."""
    lines = [SIMULATED_LINE] if report.meta.simulated_grades else []
    models = _models(report) + _sidecar_models(sidecars)
    return lines + [line for line in (test_server_line(models, record_marked(report.run_record)),) if line]


def legend(report: CorrelateResult) -> list[tuple[str, str]]:
    """(measure, definition) for every measure shown that the registry defines (:mod:`ragdiag.measures.registry`)."""
    return registry.legend(report.measures_with_values())


def _tie(verdict: Verdict) -> bool:
    return verdict.lead is not None and abs(verdict.lead) < TIE_TOLERANCE


def _typical_alpha(report: CorrelateResult, verdict: Verdict, measure: str) -> float | None:
    """Median α at the maximum of ``measure`` over the verdict's segments (None without an α grid)."""
    alphas = [r.kinds[verdict.kind].alpha for r in report.results
              if r.measure == measure and r.side == verdict.side
              and r.segment.split("^")[1:2] == [verdict.subset] and r.kinds[verdict.kind].value is not None]
    found = [a for a in alphas if a is not None]
    return statistics.median(found) if found else None


OWN_DATA_LINE = ("Your own data: ragdiag pipeline --corpus YOUR_BEIR_FOLDER --base-url URL --model MODEL "
                 "--out-dir OUT ranks, answers, grades and runs this analysis; a graded file you already have: "
                 "ragdiag correlate --graded YOUR_GRADED.json; per-query measures and grades in a table: "
                 "ragdiag correlate --table YOUR.csv")


def _reading(measure: str, alpha: float | None) -> tuple[str | None, str | None]:
    """(what the measure is at this α, what to raise) in plain words, from the registry; (None, None) for a
    measure that has no plainer name (a column of your own table): advice never defines a measure by itself."""
    found = registry.CORRELATE.by_name.get(measure)
    if found is None or found.reading is None:
        return None, None
    return found.reading.at(alpha)


def _where(report: CorrelateResult, verdict: Verdict) -> str:
    group_col = report.meta.group_col
    if group_col:
        return f"for {group_col} = {verdict.subset}"
    several = len({v.subset for v in report.verdicts}) > 1
    subset = f"subset {verdict.subset}'s " if several else ""
    sides = {"wide": "wide segments (K ≥ Np)", "narrow": "narrow segments (K < Np)"}
    return f"in {subset}{sides[verdict.side]}" if verdict.side in sides else f"in subset {verdict.subset}"


def advice_line(report: CorrelateResult) -> str | None:
    """One line: the lever the clearest verdict points at, e.g. 'F at α≈0 is recall: raising
    recall@K moves answer quality most in wide segments …'. None without a verdict that compares."""
    verdicts = [(v, v.runner_up) for v in report.verdicts if v.runner_up is not None]
    if not verdicts:
        return None
    pick, runner_up = max(verdicts, key=lambda vr: (not _tie(vr[0]), vr[0].lead or 0.0))
    names = (pick.tied or [pick.best, runner_up]) if _tie(pick) else [pick.best]
    alpha = _typical_alpha(report, pick, pick.best)
    meaning, lever = _reading(pick.best, alpha)
    at = "" if alpha is None else f" at α≈{alpha:.2g}"
    who = f"{', '.join(names[:-1])} and {names[-1]} (tied)" if len(names) > 1 else names[0]
    verb = "are" if len(names) > 1 else "is"
    if meaning is None:
        it, tracks = ("them", "track") if len(names) > 1 else ("it", "tracks")
        text = (f"Advice: {who}{at} {tracks} answer quality best {_where(report, pick)}: raising {it} moves "
                "answer quality most")
    else:
        text = f"Advice: {who}{at} {verb} {meaning}: raising {lever} moves answer quality most {_where(report, pick)}"
    if pick.lead_holds is None and not _tie(pick):
        text += f" (lead {pick.lead:+.3f}: --bootstrap 1000 tells whether it holds)"
    elif pick.lead_holds is not None and pick.lead_holds < 0.95 and not _tie(pick):
        text += f" (the lead holds in only {100 * pick.lead_holds:.0f}% of resamples: a hint, not a finding)"
    return text
