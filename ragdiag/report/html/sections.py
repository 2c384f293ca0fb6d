"""One HTML section per result kind. Every string from an input goes through ``esc``/``table``."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragdiag.errors import DataError
from ragdiag.extras import install_command
from ragdiag.measures.registry import HEADLINE
from ragdiag.report.coverage_text import verdict_basis
from ragdiag.report.fields import required
from ragdiag.report.html.inputs import Input
from ragdiag.report.html.page import (
    Raw,
    Section,
    esc,
    image,
    interval,
    labels,
    num,
    record_block,
    table,
)
from ragdiag.report.html.reference_gate import (
    correlate_gate_html,
    counts_html,
    graded_notes,
)
from ragdiag.report.html.shapes import check_shape
from ragdiag.report.html.triage_section import triage_section
from ragdiag.report.plot_text import NamedFigure
from ragdiag.report.provenance import TEST_SERVER_MODELS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ragdiag.results.robustness import RobustnessPoint

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _meta(doc: Any) -> dict:
    if isinstance(doc, list):
        doc = doc[0] if doc else {}
    return doc.get("meta") or {} if isinstance(doc, dict) else {}


def is_test_server(doc: Any) -> bool:
    """A reply from the local test servers: the recorded model name, or a loopback base URL."""
    text = json.dumps(doc, default=str)[:200_000]
    return ('"test_server_replies"' in text or any(m in text for m in TEST_SERVER_MODELS)
            or any(f"//{h}" in text for h in LOCAL_HOSTS))


def _png(draw: Callable[[], Figure | list[NamedFigure]]) -> list[bytes]:
    """The PNGs of a plot function's figures, drawn in memory (:func:`ragdiag.io.figures.png_bytes`);
    several named figures in the order of their names; none without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return []
    from ragdiag.io.figures import png_bytes

    drawn = draw()
    figures = [f.figure for f in sorted(drawn, key=lambda f: f.name)] if isinstance(drawn, list) else [drawn]
    return [png_bytes(figure) for figure in figures]


def _sidecar_says_test_server(item: Input) -> bool:
    """The grades behind ``item`` came from a test server: a manifest beside its graded file (read by
    the command into ``item.sidecars``) names the test-server model or a loopback URL."""
    return any(is_test_server(doc) for doc in item.sidecars)


def _images(pngs: list[bytes], alt: str) -> str:
    """The images, or a note that plots need matplotlib (the page is still written without them)."""
    if not pngs:
        return f'<p class="note">{esc(alt)}: not drawn — plots need matplotlib: {esc(install_command("plot"))}</p>'
    return "".join(image(png, alt) for png in pngs)


def trust_panel(sentences: list[str]) -> str:
    """The 'How far to trust this' panel: plain sentences first (empty string when none)."""
    if not sentences:
        return ""
    return ('<div class="verdict"><strong>How far to trust this</strong><ul>'
            + "".join(f"<li>{esc(s)}</li>" for s in sentences) + "</ul></div>")


def correlate_section(item: Input) -> Section:
    from ragdiag.report import correlate_guide as guide
    from ragdiag.report import correlate_report as cr
    from ragdiag.report import trust
    from ragdiag.results.correlate import CorrelateResult

    result = CorrelateResult.from_json(item.doc)
    meta = result.meta
    graded_by = (result.run_record or {}).get("models") or {}
    body = [labels(simulated=bool(meta.simulated_grades),
                   test_server=is_test_server(graded_by) or _sidecar_says_test_server(item))]
    sentences = cr.verdict_sentences(result)
    basis = verdict_basis(result)
    if basis is not None:
        body.append(f'<p class="{"warning" if basis[1] else "note"}">{esc(basis[0])}</p>')
        body.append("<h3>coverage per K (graded / rows)</h3>" + table(
            ["K", "rows", "graded", "coverage"],
            [[e.K, e.items, e.covered, f"{100 * e.coverage:.1f}%"]
             for e in required(result.coverage, "correlate result", "coverage").by_K]))
    if sentences:
        advice = guide.advice_line(result)
        body.append('<div class="verdict"><strong>Verdict</strong><ul>'
                    + "".join(f"<li>{esc(s)}</li>" for s in sentences) + "</ul>"
                    + (f"<p><strong>{esc(advice)}</strong></p>" if advice else "") + "</div>")
    elif not result.verdicts_withheld:
        body.append('<p class="note">No verdict: no subset has a segment where every measure is defined.</p>')
    body.append(trust_panel(trust.correlate_trust(result)))
    body.append(correlate_gate_html(result))
    legend = guide.legend(result)
    if legend:
        body.append(f'<p class="note">Measures ({esc(guide.SYMBOLS)}):</p><ul class="note">'
                    + "".join(f"<li><strong>{esc(m)}</strong>: {esc(text)}</li>" for m, text in legend) + "</ul>")
    body.append(f'<p class="note">{esc(cr.title_line(result))}</p>')
    measures = result.measures_with_values()
    segments = list(dict.fromkeys(r.segment for r in result.results))
    by_key = {(r.segment, r.measure): r for r in result.results}
    for kind in cr.shown_kinds(result):
        rows = []
        for segment in segments:
            cells: list[Any] = [segment, max(by_key[segment, m].n for m in measures if (segment, m) in by_key)]
            for m in measures:
                entry = by_key[segment, m].kinds.get(kind) if (segment, m) in by_key else None
                text = num(entry.value if entry else None)
                if entry and entry.alpha is not None:
                    text += f" (α {entry.alpha:.3g})"
                if entry and entry.ci:
                    text += f" {interval(entry.ci)}"
                if entry and trust.corrected_text(entry, " "):
                    text += f"; {trust.corrected_text(entry, ' ')}"
                cells.append(Raw(esc(text)))
            rows.append(cells)
        body.append(f"<h3>{esc(kind)} correlation with the grade</h3>" + table(["segment", "n", *measures], rows))
    for note in (cr.segment_legend(result), cr.dropped_line(result), cr.e_note(result)):
        if note:
            body.append(f'<p class="note">{esc(note)}</p>')
    if result.results:
        body.append(_images(_png(lambda: cr.heatmap(result)), "correlation heatmap"))
    if result.comparisons:
        kinds = meta.kinds
        rows = [[c.segment, *(Raw(esc(f"{num(c.kinds[k].difference, signed=True)} {interval(c.kinds[k].ci)}"))
                              for k in kinds)] for c in result.comparisons]
        first, second = required(meta.compare, "correlate result", "meta.compare")
        body.append(f"<h3>paired difference {esc(first)} − {esc(second)}</h3>" + table(["segment", *kinds], rows))
    if result.verdicts:
        rows = [[v.subset, v.side, " = ".join(v.tied or [v.best]) if cr.is_tie(v) else v.best,
                 v.best_mean, "–" if cr.is_tie(v) else v.runner_up or "–", v.lead,
                 "–" if v.lead_holds is None else f"{100 * v.lead_holds:.0f}%"] for v in result.verdicts]
        body.append("<h3>verdict table</h3>" + table(["subset", "side", "best", "mean", "runner-up", "lead",
                                                      "lead holds (resamples)"], rows))
    return Section("correlate", "Correlate: which measure predicts the grade", str(item.path), "".join(body))


def _with_ci(value, ci):
    """The value alone, or with its 95% bootstrap interval over queries when the result has one."""
    return value if not ci else Raw(esc(f"{num(value)} {interval(ci)}"))
def _qps_cell(point: RobustnessPoint) -> Any:
    """Median batch QPS, with the min–max of its repeats when there were several."""
    median = point.qps_median
    runs = point.get("qps_batch_runs") or point.qps_batch
    if median is None or not isinstance(runs, dict) or (runs.get("repeats") or 1) < 2 or runs.get("min") is None:
        return median
    return Raw(esc(f"{median:,.0f} ({runs['min']:,.0f}–{runs['max']:,.0f})"))


def robustness_section(item: Input) -> Section:
    """A robustness result or a sweep.json, read as :class:`RobustnessResult` / :class:`SweepResult`."""
    from ragdiag.report.robustness_plots import robustness_figures
    from ragdiag.results.robustness import RobustnessResult
    from ragdiag.results.sweep import SweepPoint, SweepResult

    sweep = item.kind == "sweep"
    result = (SweepResult if sweep else RobustnessResult).from_json(item.doc)
    meta, points = result.meta, result.points
    k = meta.k if meta.k is not None else "K"
    deltas = result.deltas
    rows = []
    for p in points:
        latency = p.latency_ms
        latency = latency.get("p50", latency.get("median")) if isinstance(latency, dict) else latency
        name = [p.label or f"{p.index} {p.params_text}"] if sweep else [p.index, p.params_text]
        row = [*name, _with_ci(p.recall_mean, p.recall_mean_ci),
               *(_with_ci(p.robustness[d], p.interval(d)) for d in deltas), p.zero_recall_queries,
               _qps_cell(p), latency]
        if isinstance(p, SweepPoint):  # the points of a sweep
            diff = p.grade_diff_vs_exact or {}
            row += [Raw(esc(f"{num(p.grade_mean)} {interval(p.grade_ci)}")),
                    Raw(esc(f"{num(diff.get('value'), signed=True)} {interval(diff.get('ci'))}"))]
        rows.append(row)
    headers = [*(["point"] if sweep else ["index", "params"]), f"recall@{k}", *(f"R-{d}@{k}" for d in deltas),
               "zero-recall queries", "QPS (batch: median (min–max))", "latency p50 ms",
               *(("grade mean [95%]", "grade vs exact") if sweep else ())]
    truth = meta.get("ground_truth") or ("exact k-NN" if sweep else "?")
    body = [labels(test_server=sweep and is_test_server(item.doc.get("meta") or {})),
            f'<p class="note">ground truth: {esc(truth)} · metric {esc(meta.get("metric", "?"))}'
            f' · recall: {esc(meta.get("recall", "?"))}</p>']
    warning = (meta.get("qps_timing") or {}).get("warning")
    if warning:
        body.append(f'<p class="note">⚠ {esc(warning)}</p>')
    recommendation = result.get("recommendation")
    if isinstance(recommendation, dict):
        chosen = recommendation.get("point") or "none"
        body.append(f'<div class="verdict"><strong>Recommendation:</strong> {esc(chosen)} — '
                    f'{esc(recommendation.get("reason") or recommendation.get("criterion") or "")}</div>')
    body.append(table(headers, rows))
    if isinstance(result, SweepResult) and result.controls:
        body.append("<h3>controls</h3>" + table(
            ["control", "grade mean", "95% interval", "graded"],
            [[c.name, c.grade_mean, interval(c.grade_ci), c.n_graded] for c in result.controls]))
    if isinstance(result, SweepResult) and points and meta.has("llm") and meta.has("deltas") and meta.has("dataset"):
        from ragdiag.report.sweep_report import plot_sweep

        body.append(_images(_png(lambda: plot_sweep(result)), "answer grade and speed per operating point"))
    if points and points[0].has("recall_histogram") and meta.has("k"):
        body.append(_images(_png(lambda: robustness_figures(result)), "robustness plots"))
    title = "Sweep" if item.kind == "sweep" else "Robustness"
    return Section(item.kind, f"{title}: Robustness-δ@K beside average recall", str(item.path), "".join(body))


HEADLINE_METRICS = HEADLINE  # the measure registry's runs-at-a-glance columns


def evaluate_section(item: Input) -> Section:
    """The decision first, then one row per run with the headline metrics and their intervals at
    the decision's K; every metric row and the paired comparisons folded below."""
    from ragdiag.measures.registry import label
    from ragdiag.report.evaluate_report import decision_lines
    from ragdiag.results.evaluate import EvaluateResult

    try:
        result = EvaluateResult.from_json(item.doc)
    except (KeyError, TypeError) as err:
        raise DataError(f"{item.path}: not a complete ragdiag evaluate result (missing or wrong {err})") from None
    body = [labels(test_server=is_test_server(item.doc))]
    runs = result.runs
    lines = decision_lines(result)
    if lines:
        body.append('<div class="verdict"><strong>Decision</strong><ul>'
                    + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul></div>")
    ks = result.params.k or sorted({m.k for r in runs for m in r.metrics})
    shown = [m for m in HEADLINE_METRICS if any(e.metric == m for r in runs for e in r.metrics)]
    rows = []
    for run in runs:
        k = run.decision.k or (ks[-1] if ks else None)
        by_metric = {e.metric: e for e in run.metrics if e.k == k}
        cells = [Raw(esc(f"{num(e.value)} {interval(e.ci)}".strip())) if e else "–"
                 for e in (by_metric.get(m) for m in shown)]
        rows.append([run.run, run.decision.verdict or "–", k, *cells])
    body.append("<h3>runs at a glance (95% intervals)</h3>"
                + table(["run", "decision", "K", *(label(m) for m in shown)], rows))
    every = [[run.run, label(m.metric), m.k, m.value, interval(m.ci), m.n_defined] for run in runs for m in run.metrics]
    body.append(f"<details><summary>every metric ({len(every)} rows)</summary>"
                + table(["run", "metric", "k", "value", "95% interval", "queries defined"], every) + "</details>")
    if result.comparisons:
        pairs = [[c.a, c.b, c.metric, c.k, c.diff, interval(c.ci), c.improved, c.worsened] for c in result.comparisons]
        body.append(f"<details><summary>paired comparisons ({len(pairs)} rows)</summary>"
                    + table(["a", "b", "metric", "k", "difference", "95% interval", "improved", "worsened"], pairs)
                    + "</details>")
    return Section("evaluate", "Evaluate: the decision, then metrics with intervals", str(item.path), "".join(body))


def _digits(value: float | None, digits: int) -> Raw:
    """A number cell with the terminal table's decimals (cost 2, milliseconds and mean K 1)."""
    return Raw(esc(num(value, digits)))


def _scrolling(headers: list[str], rows: list[list[Any]], caption: str) -> str:
    """A table too wide for the page (one column per metric), scrolling sideways inside it."""
    return f'<div style="overflow-x:auto">{table(headers, rows, caption)}</div>'


def _decision(lines: list[str], title: str = "Decision", failing: bool = False) -> str:
    """The decision lines in a box; ``failing`` (a gate that fails) draws it red, not green."""
    kind = "verdict failing" if failing else "verdict"
    return (f'<div class="{kind}"><strong>{esc(title)}</strong><ul>'
            + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul></div>")


def clq_section(item: Input) -> Section:
    """``ragdiag clq`` (:class:`ragdiag.results.clq.ClqResult`): the frontier and the SLO/budget
    choices first (the terminal's lines, measures by their registry labels), then every configuration
    with cost, latency, quality and efficiency, what dominates what, and the frontier plot."""
    from ragdiag.measures.registry import label_at
    from ragdiag.report import clq_report
    from ragdiag.results.clq import ClqResult

    result = ClqResult.from_json(item.doc)
    lines = clq_report.summary_lines(result, label_at)
    head = 1 + result.choices.given
    body = [labels(test_server=is_test_server(item.doc))]
    if result.meta is not None:
        body.append(f'<p class="note">configurations: {esc(result.meta.configs)} · first measure '
                    f'{esc(label_at(result.choices.primary))} drives the SLO/budget choices</p>')
    body.append(_decision(lines[:head]))
    optional = [(title, key, digits) for title, key, digits in (("p95 ms", "latency_p95", 1), ("e2e p50 ms", "e2e_p50", 1),
                                                                ("eff. e2e", "efficiency_e2e", 3))
                if any(getattr(c, key) is not None for c in result.configs)]
    rows = [[c.name, "★" if c.pareto else ", ".join(result.dominated.get(c.name, [])), _digits(c.cost, 2),
             _digits(c.latency_p50, 1), *(c.quality[q] for q in result.quality), c.efficiency_retrieval,
             *(_digits(getattr(c, key), digits) for _, key, digits in optional)] for c in result.configs]
    body.append(table(["config", "frontier ★ / dominated by", "cost/1k", "p50 ms",
                       *(label_at(q) for q in result.quality), "eff.", *(title for title, _, _ in optional)],
                      rows, caption="configurations (★ = on the Pareto frontier)"))
    notes = lines[head + len(result.dominated):]  # the dominated lines are the table's second column
    body.append('<ul class="note">' + "".join(f"<li>{esc(line)}</li>" for line in notes) + "</ul>")
    if result.configs:
        body.append(_images(_png(lambda: clq_report.plot(result)), "cost–latency–quality frontier"))
    return Section("clq", "Cost–latency–quality: the configuration to run", str(item.path), "".join(body))


def dynamic_k_section(item: Input) -> Section:
    """``ragdiag dynamic-k`` (:class:`ragdiag.results.dynamic_k.DynamicKResult`): which policy
    reaches fixed K_high's quality at the fewest candidates (the terminal's lines), then every policy
    — fixed K_low, each θ, fixed K_high — with its means and paired bootstrap intervals, and the plot."""
    from ragdiag.measures.registry import label_at
    from ragdiag.report import dynamic_k_report as dk
    from ragdiag.results.dynamic_k import DynamicKResult

    result = DynamicKResult.from_json(item.doc)
    names = result.metric_names if result.policies else []
    if len(result.policies) < 2 or not dk.decidable(names):
        raise DataError(f"{item.path}: a dynamic-k result whose field 'policies' is wrong: expected fixed K_low, "
                        f"the thresholds and fixed K_high, each with ra_nwg@K and proc@K")
    lines = dk.summary_lines(result)
    decided = (dk.headline(result), dk.proc_metric(result))  # the metrics of the decision lines
    picks: dict[int, list[str]] = {}
    for metric in decided:
        pick = dk.recommended(result, metric) or result.policies[-1]
        picks.setdefault(id(pick), []).append(label_at(metric))
    priced = result.params.price_per_mtok > 0
    intervals = " [95% bootstrap interval]" if result.params.bootstrap else " (--bootstrap 0: no intervals)"

    def mean(entry) -> Raw:
        return Raw(esc(f"{num(entry.value)} {interval(entry.ci)}".strip()))

    def difference(entry, with_ci: bool = True) -> Raw:
        return Raw(esc(f"{num(entry.value, signed=True)} {interval(entry.ci) if with_ci else ''}".strip()))

    rows = [[row.label, ", ".join(picks.get(id(row), [])), Raw(f"{100 * row.share_escalated:.0f}%"),
             _digits(row.mean_candidates, 1), *((_digits(row.cost_per_1k, 2),) if priced else ()),
             *(difference(row.vs_high[m]) for m in decided), difference(row.vs_low[decided[0]], with_ci=False),
             *(row.metrics[n].value for n in names)] for row in result.policies]
    body = [labels(test_server=is_test_server(item.doc)), f'<p class="note">{esc(lines[0])}</p>',
            _decision(lines[1:]),
            _scrolling(["policy", "cheapest reaching K_high on", "esc.", "mean K", *(("cost/1k",) if priced else ()),
                        *(f"Δ {label_at(m)} vs K_high" for m in decided),
                        f"Δ {label_at(decided[0])} vs K_low", *(label_at(n) for n in names)], rows,
                       caption=f"per policy (θ: dynamic, escalating when the signal is {result.signal.escalate_when} θ): "
                               f"means over queries; Δ = paired difference{intervals}")]
    every = [[row.label, label_at(n), mean(row.metrics[n]), difference(row.vs_low[n]),
              difference(row.vs_high[n])] for row in result.policies for n in names]
    body.append(f"<details><summary>every metric with its interval and paired differences ({len(every)} rows)"
                "</summary>" + table(["policy", "metric", "mean", "Δ vs fixed K_low", "Δ vs fixed K_high"], every,
                                     caption=f"means over queries and policy − fixed K paired over queries"
                                             f"{intervals}") + "</details>")
    body.append(_images(_png(lambda: dk.plot(result)), "quality against mean candidates per query"))
    return Section("dynamic-k", "Dynamic K: escalate only the uncertain queries", str(item.path), "".join(body))


def _docs(doc: Any) -> list[dict]:
    return doc if isinstance(doc, list) else [doc]


def names_section(item: Input) -> Section:
    from ragdiag.report.probe_report import names_plot
    from ragdiag.results.probes import NamesResult

    results = [NamesResult.from_json(d) for d in _docs(item.doc)]
    body = []
    for r in results:
        base = r.base
        rows = [["base", base.delta_name, base.delta_name_sd, None, None, base.delta_topic]]
        rows += [[a.name, a.delta_name, a.delta_name_sd, a.pct_change, a.pct_change_sd, a.delta_topic]
                 for a in r.ablations]
        body.append(f"<h3>{esc(str(r.lang or '').upper())} · {esc(r.embedder)}</h3>"
                    + table(["condition", "Δ_name", "SD over runs", "% change", "% change SD", "Δ_topic"], rows))
    body.append(_images(_png(lambda: names_plot(results)), "name probe bars"))
    return Section("probe-names", "Probe: proper-name sensitivity (Δ-margins)", str(item.path), "".join(body))


def names_queries_section(item: Input) -> Section:
    """``probe names --queries``: per ablation the change of each metric against the qrels (with its
    paired bootstrap interval), then the queries that lose the most RA-nWG."""
    from ragdiag.report.names_real_report import LABELS
    from ragdiag.results.probes import NamesRealResult

    result = NamesRealResult.from_json(item.doc)
    meta = result.meta
    body = [labels(test_server=is_test_server(result.embedder)),
            f'<p class="note">{esc(f"{meta.queries} · corpus {meta.corpus} · qrels {meta.qrels} · embedder {result.embedder} · bootstrap {meta.bootstrap} · seed {meta.seed}")}</p>',
            *(f'<p class="note">{esc(note)}</p>' for note in result.notes)]
    metrics = list(result.impacts[0].difference) if result.impacts else list(LABELS)
    body.append(table(["ablation", "queries", *(f"Δ {LABELS.get(m, m)}@{meta.k}" for m in metrics)],
                      [[i.name, i.changed_queries, *(Raw(esc("–" if i.difference[m].value is None else
                                                             f"{num(i.difference[m].value, signed=True)} "
                                                             f"{interval(i.difference[m].ci) if i.difference[m].ci else ''}"))
                                                      for m in metrics)] for i in result.impacts],
                      caption="ablated − original, mean over the queries with a name [95% paired bootstrap interval]"))
    for impact in result.impacts:
        if impact.worst:
            body.append(table(["query", "original", "ablated", "RA-nWG before", "RA-nWG after", "recall before",
                               "recall after"],
                              [[w.query_id, w.original, w.changed, w.ra_nwg_before, w.ra_nwg_after, w.recall_before,
                                w.recall_after] for w in impact.worst],
                              caption=f"{impact.name}: the queries that lose RA-nWG@{meta.k}, most first"))
    return Section("probe-names-queries", "Probe: names on your own queries", str(item.path), "".join(body))


NOISE_COLUMNS = {  # optional columns of the noise section: present when the run measured them
    "recall_at_k": lambda lv: lv.retrieval.recall_at_k if lv.retrieval else None,
    "overlap_at_k": lambda lv: lv.retrieval.overlap_at_k if lv.retrieval else None,
    "recovery_pct": lambda lv: lv.rewritten.recovery_pct if lv.rewritten else None,
}


def noise_section(item: Input) -> Section:
    from ragdiag.report.probe_report import noise_plot
    from ragdiag.results.probes import NoiseResult

    results = [NoiseResult.from_json(d) for d in _docs(item.doc)]
    body = [labels(test_server=any(r.meta.rewrite is not None and is_test_server(r.meta.rewrite) for r in results))]
    for r in results:
        levels = r.levels
        first = levels[0] if levels else None
        measured = {"recall_at_k": first and first.retrieval, "overlap_at_k": first and first.retrieval,
                    "recovery_pct": first and first.rewritten}
        extra = [c for c in NOISE_COLUMNS if measured[c] is not None]
        flags = [lv.rewritten.recovery_flag if lv.rewritten else None for lv in levels]
        flagged = any(flags)
        rows = [[f"{lv.level} — {lv.name or ''}", lv.cosine_to_clean, lv.cosine_to_clean_sd, lv.cosine_to_reference,
                 lv.drop_pct, *(NOISE_COLUMNS[c](lv) for c in extra), *([flag or ""] if flagged else [])]
                for lv, flag in zip(levels, flags)]
        body.append(f"<h3>{esc(str(r.lang or '').upper())} · {esc(r.embedder)}</h3>"
                    + table(["level", "cos → clean", "SD", "cos → reference", "drop %", *extra,
                             *(["recovery ⚠"] if flagged else [])], rows))
    body.append(_images(_png(lambda: noise_plot(results)), "noise probe lines"))
    return Section("probe-noise", "Probe: conversational noise", str(item.path), "".join(body))


SUMMARY_KEYS = ("items", "covered", "coverage", "requests", "calls", "cache_hits", "shared_in_flight", "retries",
                "failures", "prompt_tokens", "completion_tokens", "cost_usd", "seconds")


def llm_section(item: Input) -> Section:
    """A generate / grade / label / sweep manifest (:class:`ragdiag.results.llm_run.RunManifest`):
    its summary, how the server was reached, and how many items failed."""
    from ragdiag.results.llm_run import RunManifest

    manifest = RunManifest.from_json(item.doc)
    summary = manifest.summary.to_json()
    keys = [k for k in SUMMARY_KEYS if k in summary] + [k for k in summary if k not in SUMMARY_KEYS
                                                          and isinstance(summary[k], (int, float, str))]
    body = [labels(test_server=is_test_server(item.doc)),
            table(["quantity", "value"], [[k, summary[k]] for k in keys]), counts_html(summary)]
    run = manifest.run.to_json()
    if run:
        body.append(table(["run detail", "value"], [[k, json.dumps(v, default=str)] for k, v in run.items()]))
    body.append(f'<p class="note">{len(manifest.failures)} failed and {len(manifest.unparsed or [])} unparseable items '
                "(listed in the manifest)</p>")
    return Section("llm-run", f"LLM run summary: {manifest.command or 'LLM run'}", str(item.path), "".join(body))


def graded_section(item: Input) -> Section:
    rows = item.doc
    grades = [r["grade"] for r in rows if isinstance(r.get("grade"), (int, float))]
    per_k: dict[Any, list[float]] = {}
    for r in rows:
        if isinstance(r.get("grade"), (int, float)):
            per_k.setdefault(r.get("K"), []).append(r["grade"])
    body = [labels(test_server=is_test_server(rows[:20]) or _sidecar_says_test_server(item)),
            table(["quantity", "value"], [["rows", len(rows)], ["graded", len(grades)],
                                          ["missing grade", len(rows) - len(grades)],
                                          ["mean grade", sum(grades) / len(grades) if grades else None],
                                          *graded_notes(rows)]),
            table(["K", "rows graded", "mean grade"], [[k, len(v), sum(v) / len(v)] for k, v in sorted(
                per_k.items(), key=lambda kv: (str(type(kv[0])), kv[0]))])]
    return Section("graded", "Graded answers", str(item.path), "".join(body))


def calibrate_section(item: Input) -> Section:
    """``ragdiag calibrate``: the trust panel in plain words, then agreement, PPI intervals and slopes."""
    from ragdiag.report import trust
    from ragdiag.report.calibrate_report import DESIGN_NAMES, ppi_gap_note
    from ragdiag.results.calibrate import CalibrateResult, Interval

    result = CalibrateResult.from_json(item.doc)
    body = [labels(simulated=False, test_server=_sidecar_says_test_server(item)),
            trust_panel(trust.calibrate_trust(item.doc))]
    agreement = result.agreement
    if agreement:
        body.append(table(["items", "weighted κ (quadratic)", "Spearman", "exact", "within ±1", "judge − human"],
                          [[agreement.items, agreement.kappa_quadratic, agreement.spearman,
                            f"{100 * agreement.exact:.0f}%", f"{100 * agreement.within_one:.0f}%",
                            num(agreement.mean_bias, signed=True)]], caption="judge–human agreement"))
        body.append(table(["judge \\ human", "1", "2", "3", "4", "5"],
                          [[g, *row] for g, row in enumerate(agreement.confusion.counts, start=1)],
                          caption="confusion: judge grade (rounded, rows) × human grade (columns)"))
    estimates = result.estimates

    def cell(block: Interval | None) -> Raw:
        return Raw(esc("–" if not block else f"{num(block.estimate)} {interval(block.ci)}"))

    level = estimates.level
    body.append(table(["group", "items", "labelled", "PPI (judge + humans)", "judge only", "humans only"],
                      [[m.group, m.items, m.labelled, cell(m.ppi), cell(m.judge_only), cell(m.human_only)]
                       for m in estimates.mean_grade],
                      caption=f"mean grade per {estimates.by} ({level} intervals)"))
    gap = ppi_gap_note(estimates)
    if gap:
        body.append(f'<p class="note">{esc(gap)}</p>')
    body.append(table(["measure", "PPI (judge + humans)", "judge only", "humans only"],
                      [[s.measure, cell(s.ppi), cell(s.judge_only), cell(s.human_only)] for s in estimates.slopes],
                      caption=f"slope of grade on each retrieval measure (OLS, {level} intervals)"))
    design = result.design
    if design:
        how = design.strategy + (f" by {design.strata}" if design.strata else "")
        body.append(table(["classical (labels alone, weighted by the design)", "PPI++ (as if a uniform draw)",
                           DESIGN_NAMES.get(design.strategy, design.strategy)],
                          [[cell(design.classical), cell(design.ppi), cell(design.design)]],
                          caption=f"mean grade over all items by the sheet's design: {how}, seed {design.seed}; "
                                  f"{design.labelled} labelled of {design.sheet_rows} drawn ({level} intervals)"))
        if design.note:
            body.append(f'<p class="note">{esc(design.note)}</p>')
    return Section("calibrate", "Calibrate: the judge against human grades", str(item.path), "".join(body))


def corpus_run_section(item: Input) -> Section:
    """``corpus_run.json`` of ``pipeline --corpus`` (:class:`ragdiag.results.pipeline.CorpusRunManifest`):
    what was ranked, with which retrievers, and where the stages wrote (their files get their own
    sections when the run folder is given)."""
    from ragdiag.results.pipeline import CorpusRunManifest

    manifest = CorpusRunManifest.from_json(item.doc)
    meta = manifest.meta
    retrievers = ", ".join(str(r.get("spec")) for r in meta.retrievers or [] if isinstance(r, dict))
    rows: list[list[object]] = [["command", meta.command], ["dataset", meta.dataset], ["retrievers", retrievers],
            ["cut-offs K", ", ".join(map(str, meta.ks or []))], ["depth", meta.depth],
            ["queries used", meta.queries.get("used")], ["queries left out (ideal cap)", meta.queries.get("left_out")],
            ["ranked samples", meta.ranked_samples], ["evaluate", meta.evaluate]]
    outputs = [[name, path] for name, path in (meta.outputs or {}).items()]
    body = [labels(test_server=is_test_server(manifest.run_record)),
            table(["quantity", "value"], rows), "<h3>files written</h3>" + table(["output", "path"], outputs)]
    return Section("corpus-run", f"Corpus run: {meta.dataset or ''}", str(item.path), "".join(body))


def compare_section(item: Input) -> Section:
    """``ragdiag compare`` (:class:`ragdiag.results.compare.CompareResult`): the gate's decision and one
    line per metric first, the planning and judge-noise lines, then the table, the forest plot of Δ with
    its interval per metric and the most regressed queries."""
    from ragdiag.report import compare_report
    from ragdiag.results.compare import CompareResult

    result = CompareResult.from_json(item.doc)
    lines = compare_report.summary_lines(result)
    head = 1 + len(result.metrics) if result.decision is not None else 0
    body = [_decision(lines[:head], failing=result.decision == "fail") if head else "", f'<p class="note">{esc(compare_report.settings_line(result))}</p>']
    if lines[head:]:
        body.append(_decision(lines[head:], "Planning"))
    if result.metrics:
        from ragdiag.measures.registry import label_at

        rows = [[mc.decision, label_at(mc.metric), mc.n, mc.mean_base, mc.mean_new, mc.delta,
                 interval([mc.ci_low, mc.ci_high]), mc.p, mc.p_adjusted, mc.d_z,
                 "–" if mc.queries_needed is None else mc.queries_needed] for mc in result.metrics]
        body.append(table(["decision", "metric", "n", "base", "new", "Δ", f"{100 * result.meta['interval_level']:g}% interval",
                           "p", "p adjusted", "d_z", "queries to decide if Δ stays"], rows))
        body.append(_images(_png(lambda: compare_report.plot(result)), "forest plot of Δ per metric"))
        if result.sequential is not None:
            from ragdiag.report import sequential_report

            body.append(_images(_png(lambda: sequential_report.plot(result)),
                                "confidence sequence of Δ per metric against the queries read"))
    if result.worst:
        body.append(table(["query", *(label for label in result.worst[0]["delta"])],
                          [[w["query_id"], *w["delta"].values()] for w in result.worst],
                          caption="most regressed queries: Δ = new − base per metric"))
    gate = {"fail": "FAIL", "pass": "PASS"}.get(result.decision or "", "plan")
    return Section("compare", f"Compare: the regression gate — {gate}", str(item.path), "".join(body))


def plot_section(item: Input) -> Section:
    return Section("plot", f"Plot: {item.path.name}", str(item.path), image(item.doc, item.path.name))


RENDERERS = {"correlate": correlate_section, "robustness": robustness_section, "sweep": robustness_section,
             "evaluate": evaluate_section, "probe-names": names_section, "probe-noise": noise_section,
             "probe-names-queries": names_queries_section,
             "llm-run": llm_section, "graded": graded_section, "corpus-run": corpus_run_section,
             "plot": plot_section, "calibrate": calibrate_section, "clq": clq_section,
             "dynamic-k": dynamic_k_section, "compare": compare_section,
             "triage": lambda item: triage_section(item, is_test_server(item.doc))}


def render(item: Input) -> Section:
    """The section of one input, with its run record (``run_record``, else ``meta``) at the end; the
    input's shape is checked first (:mod:`.shapes`), and a field the check does not cover that still
    has the wrong type is one line naming the file, never a traceback."""
    check_shape(item.kind, item.doc, str(item.path))
    try:
        section = RENDERERS[item.kind](item)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        what = f"field {err.args[0]!r} missing" if isinstance(err, KeyError) and err.args else f"{type(err).__name__}: {err}"
        raise DataError(f"{item.path}: a {item.kind} result with a field of the wrong type or missing ({what[:200]})") from None
    doc = item.doc[0] if isinstance(item.doc, list) and item.kind.startswith("probe") else item.doc
    if item.kind != "plot":
        section.body += record_block(doc) or '<p class="note">no run record in this file</p>'
    return section
