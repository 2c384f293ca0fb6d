"""One HTML section per result kind. Every string from an input goes through ``esc``/``table``."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError
from ragdiag.extras import install_command
from ragdiag.report.coverage_text import verdict_basis
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
from ragdiag.report.provenance import TEST_SERVER_MODELS

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _meta(doc: Any) -> dict:
    if isinstance(doc, list):
        doc = doc[0] if doc else {}
    return doc.get("meta") or {} if isinstance(doc, dict) else {}


def is_test_server(doc: Any) -> bool:
    """A reply from the local test servers: the recorded model name, or a loopback base URL."""
    text = json.dumps(doc, default=str)[:200_000]
    return any(m in text for m in TEST_SERVER_MODELS) or any(f"//{h}" in text for h in LOCAL_HOSTS)


def _png(draw: Callable[[Path], Any], name: str = "plot.png") -> list[bytes]:
    """Run a plot function that writes files into a folder (or to one path) and read the PNGs back."""
    if importlib.util.find_spec("matplotlib") is None:
        return []
    with tempfile.TemporaryDirectory(prefix="ragdiag-report-") as tmp:
        folder = Path(tmp)
        draw(folder / name)
        return [p.read_bytes() for p in sorted(folder.glob("*.png"))]


def _manifest_says_test_server(graded: Path) -> bool:
    """The grades of ``graded`` came from a test server: its sidecar manifest (``NAME.manifest.json``,
    or the older ``STEM.manifest.json``) names the test-server model or a loopback URL."""
    for manifest in (graded.with_name(f"{graded.name}.manifest.json"), graded.with_name(f"{graded.stem}.manifest.json")):
        try:
            if manifest.is_file() and is_test_server(json.loads(manifest.read_text(encoding="utf-8"))):
                return True
        except (OSError, ValueError):
            continue
    return False


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

    doc = item.doc
    meta = doc["meta"]
    graded_by = (doc.get("run_record") or {}).get("models") or {}
    body = [labels(simulated=bool(meta.get("simulated_grades")),
                   test_server=is_test_server(graded_by) or _manifest_says_test_server(Path(str(meta.get("source", "")))))]
    sentences = cr.verdict_sentences(doc)
    basis = verdict_basis(doc)
    if basis is not None:
        body.append(f'<p class="{"warning" if basis[1] else "note"}">{esc(basis[0])}</p>')
        coverage = doc["coverage"]
        body.append("<h3>coverage per K (graded / rows)</h3>" + table(
            ["K", "rows", "graded", "coverage"],
            [[e["K"], e["items"], e["covered"], f"{100 * e['coverage']:.1f}%"] for e in coverage["by_K"]]))
    if sentences:
        advice = guide.advice_line(doc)
        body.append('<div class="verdict"><strong>Verdict</strong><ul>'
                    + "".join(f"<li>{esc(s)}</li>" for s in sentences) + "</ul>"
                    + (f"<p><strong>{esc(advice)}</strong></p>" if advice else "") + "</div>")
    elif not doc.get("verdicts_withheld"):
        body.append('<p class="note">No verdict: no subset has a segment where every measure is defined.</p>')
    body.append(trust_panel(trust.correlate_trust(doc)))
    body.append(correlate_gate_html(doc))
    legend = guide.legend(doc)
    if legend:
        body.append(f'<p class="note">Measures ({esc(guide.SYMBOLS)}):</p><ul class="note">'
                    + "".join(f"<li><strong>{esc(m)}</strong>: {esc(text)}</li>" for m, text in legend) + "</ul>")
    body.append(f'<p class="note">{esc(cr.title_line(doc))}</p>')
    measures = [m for m in meta["measures"] if any(r["measure"] == m for r in doc["results"])]
    segments = list(dict.fromkeys(r["segment"] for r in doc["results"]))
    by_key = {(r["segment"], r["measure"]): r for r in doc["results"]}
    for kind in cr.shown_kinds(doc):
        rows = []
        for segment in segments:
            cells: list[Any] = [segment, max(by_key[segment, m]["n"] for m in measures if (segment, m) in by_key)]
            for m in measures:
                entry = (by_key.get((segment, m)) or {}).get(kind) or {}
                text = num(entry.get("value"))
                if entry.get("alpha") is not None:
                    text += f" (α {entry['alpha']:.3g})"
                if entry.get("ci"):
                    text += f" {interval(entry['ci'])}"
                if trust.corrected_text(entry, " "):
                    text += f"; {trust.corrected_text(entry, ' ')}"
                cells.append(Raw(esc(text)))
            rows.append(cells)
        body.append(f"<h3>{esc(kind)} correlation with the grade</h3>" + table(["segment", "n", *measures], rows))
    for note in (cr.segment_legend(doc), cr.dropped_line(doc), cr.e_note(doc)):
        if note:
            body.append(f'<p class="note">{esc(note)}</p>')
    if doc["results"]:
        body.append(_images(_png(lambda p: cr.write_heatmap(doc, p)), "correlation heatmap"))
    if doc.get("comparisons"):
        kinds = meta["kinds"]
        rows = [[c["segment"], *(Raw(esc(f"{num(c[k]['difference'], signed=True)} {interval(c[k].get('ci'))}"))
                                 for k in kinds)] for c in doc["comparisons"]]
        first, second = meta["compare"]
        body.append(f"<h3>paired difference {esc(first)} − {esc(second)}</h3>" + table(["segment", *kinds], rows))
    if doc["verdicts"]:
        rows = [[v["subset"], v["side"], " = ".join(v.get("tied") or [v["best"]]) if cr.is_tie(v) else v["best"],
                 v["best_mean"], "–" if cr.is_tie(v) else v["runner_up"] or "–", v["lead"],
                 "–" if v["lead_holds"] is None else f"{100 * v['lead_holds']:.0f}%"] for v in doc["verdicts"]]
        body.append("<h3>verdict table</h3>" + table(["subset", "side", "best", "mean", "runner-up", "lead",
                                                      "lead holds (resamples)"], rows))
    return Section("correlate", "Correlate: which measure predicts the grade", str(item.path), "".join(body))


def _with_ci(value, ci):
    """The value alone, or with its 95% bootstrap interval over queries when the result has one."""
    return value if not ci else Raw(esc(f"{num(value)} {interval(ci)}"))
def _qps_cell(point: dict) -> Any:
    """Median batch QPS, with the min–max of its repeats when there were several."""
    from ragdiag.report.robustness_plots import qps_median

    median = qps_median(point)
    runs = point.get("qps_batch_runs") or point.get("qps_batch")
    if median is None or not isinstance(runs, dict) or (runs.get("repeats") or 1) < 2 or runs.get("min") is None:
        return median
    return Raw(esc(f"{median:,.0f} ({runs['min']:,.0f}–{runs['max']:,.0f})"))


def robustness_section(item: Input) -> Section:
    from ragdiag.report.robustness_plots import write_plots

    doc = item.doc
    meta = doc.get("meta") or {}
    points = doc["points"]
    k = meta.get("k", "K")
    deltas = list(points[0]["robustness"]) if points else []
    sweep = item.kind == "sweep"
    rows = []
    for p in points:
        latency = p.get("latency_ms")
        latency = latency.get("p50", latency.get("median")) if isinstance(latency, dict) else latency
        params = ",".join(f"{a}={b}" for a, b in (p.get("params") or {}).items())
        cis = p.get("robustness_ci") or {}
        name = [p.get("label") or f"{p.get('index')} {params}"] if sweep else [p.get("index"), params]
        row = [*name, _with_ci(p.get("recall_mean"), p.get("recall_mean_ci")),
               *(_with_ci(p["robustness"][d], cis.get(d)) for d in deltas), p.get("zero_recall_queries"),
               _qps_cell(p), latency]
        if item.kind == "sweep":
            diff = p.get("grade_diff_vs_exact") or {}
            row += [Raw(esc(f"{num(p.get('grade_mean'))} {interval(p.get('grade_ci'))}")),
                    Raw(esc(f"{num(diff.get('value'), signed=True)} {interval(diff.get('ci'))}"))]
        rows.append(row)
    headers = [*(["point"] if sweep else ["index", "params"]), f"recall@{k}", *(f"R-{d}@{k}" for d in deltas),
               "zero-recall queries", "QPS (batch: median (min–max))", "latency p50 ms",
               *(("grade mean [95%]", "grade vs exact") if sweep else ())]
    truth = meta.get("ground_truth") or ("exact k-NN" if sweep else "?")
    body = [labels(test_server=sweep and is_test_server(meta)),
            f'<p class="note">ground truth: {esc(truth)} · metric {esc(meta.get("metric", "?"))}'
            f' · recall: {esc(meta.get("recall", "?"))}</p>']
    warning = (meta.get("qps_timing") or {}).get("warning")
    if warning:
        body.append(f'<p class="note">⚠ {esc(warning)}</p>')
    recommendation = doc.get("recommendation")
    if isinstance(recommendation, dict):
        chosen = recommendation.get("point") or "none"
        body.append(f'<div class="verdict"><strong>Recommendation:</strong> {esc(chosen)} — '
                    f'{esc(recommendation.get("reason") or recommendation.get("criterion") or "")}</div>')
    body.append(table(headers, rows))
    if doc.get("controls"):
        body.append("<h3>controls</h3>" + table(
            ["control", "grade mean", "95% interval", "graded"],
            [[c.get("name"), c.get("grade_mean"), interval(c.get("grade_ci")), c.get("n_graded")] for c in doc["controls"]]))
    if sweep and points and {"llm", "deltas", "dataset"} <= set(meta):
        from ragdiag.report.sweep_report import plot_sweep

        body.append(_images(_png(lambda p: plot_sweep(doc, p.parent)), "answer grade and speed per operating point"))
    if points and "recall_histogram" in points[0] and "k" in meta:
        body.append(_images(_png(lambda p: write_plots(doc, p.parent)), "robustness plots"))
    title = "Sweep" if item.kind == "sweep" else "Robustness"
    return Section(item.kind, f"{title}: Robustness-δ@K beside average recall", str(item.path), "".join(body))


HEADLINE_METRICS = ("ra_nwg", "proc", "pct_proc", "ndcg", "recall")


def evaluate_section(item: Input) -> Section:
    """The decision first, then one row per run with the headline metrics and their intervals at
    the decision's K; every metric row and the paired comparisons folded below."""
    from ragdiag.report.evaluate_report import METRIC_LABELS, decision_lines

    doc = item.doc
    body = [labels(test_server=is_test_server(doc))]
    runs = doc["runs"]
    lines = decision_lines(doc) if all(isinstance(r.get("decision"), dict) for r in runs) else []
    if lines:
        body.append('<div class="verdict"><strong>Decision</strong><ul>'
                    + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul></div>")
    ks = (doc.get("params") or {}).get("k") or sorted({m.get("k") for r in runs for m in r.get("metrics", [])})
    shown = [m for m in HEADLINE_METRICS if any(e.get("metric") == m for r in runs for e in r.get("metrics", []))]
    rows = []
    for run in runs:
        k = (run.get("decision") or {}).get("k") or (ks[-1] if ks else None)
        by_metric = {e.get("metric"): e for e in run.get("metrics", []) if e.get("k") == k}
        cells = [Raw(esc(f"{num(e.get('value'))} {interval(e.get('ci'))}".strip())) if e else "–"
                 for e in (by_metric.get(m) for m in shown)]
        rows.append([run["run"], (run.get("decision") or {}).get("verdict") or "–", k, *cells])
    body.append("<h3>runs at a glance (95% intervals)</h3>"
                + table(["run", "decision", "K", *(METRIC_LABELS.get(m, m) for m in shown)], rows))
    every = [[run["run"], m.get("metric"), m.get("k"), m.get("value"), interval(m.get("ci")), m.get("n_defined")]
             for run in runs for m in run.get("metrics", [])]
    body.append(f"<details><summary>every metric ({len(every)} rows)</summary>"
                + table(["run", "metric", "k", "value", "95% interval", "queries defined"], every) + "</details>")
    if doc.get("comparisons"):
        rows = [[c.get("a"), c.get("b"), c.get("metric"), c.get("k"), c.get("diff"), interval(c.get("ci")),
                 c.get("improved"), c.get("worsened")] for c in doc["comparisons"]]
        body.append(f"<details><summary>paired comparisons ({len(rows)} rows)</summary>"
                    + table(["a", "b", "metric", "k", "difference", "95% interval", "improved", "worsened"], rows)
                    + "</details>")
    return Section("evaluate", "Evaluate: the decision, then metrics with intervals", str(item.path), "".join(body))


def _docs(doc: Any) -> list[dict]:
    return doc if isinstance(doc, list) else [doc]


def names_section(item: Input) -> Section:
    from ragdiag.report.probe_report import names_plot

    docs = _docs(item.doc)
    body = []
    for d in docs:
        base = d["base"]
        rows = [["base", base.get("delta_name"), base.get("delta_name_sd"), None, None, base.get("delta_topic")]]
        rows += [[a["name"], a.get("delta_name"), a.get("delta_name_sd"), a.get("pct_change"), a.get("pct_change_sd"),
                  a.get("delta_topic")] for a in d["ablations"]]
        body.append(f"<h3>{esc(str(d.get('lang', '')).upper())} · {esc(d.get('embedder'))}</h3>"
                    + table(["condition", "Δ_name", "SD over runs", "% change", "% change SD", "Δ_topic"], rows))
    body.append(_images(_png(lambda p: names_plot(docs, p)), "name probe bars"))
    return Section("probe-names", "Probe: proper-name sensitivity (Δ-margins)", str(item.path), "".join(body))


def noise_section(item: Input) -> Section:
    from ragdiag.report.probe_report import noise_plot

    docs = _docs(item.doc)
    body = [labels(test_server=any("rewrite" in _meta(d) and is_test_server(_meta(d)["rewrite"]) for d in docs))]
    for d in docs:
        levels = d["levels"]
        extra = [c for c in ("recall_at_k", "overlap_at_k", "recovery_pct") if c in levels[0]]
        flagged = any(r.get("recovery_flag") for r in levels)
        rows = [[f"{r['level']} — {r.get('name', '')}", r.get("cosine_to_clean"), r.get("cosine_to_clean_sd"),
                 r.get("cosine_to_reference"), r.get("drop_pct"), *(r.get(c) for c in extra),
                 *([r.get("recovery_flag") or ""] if flagged else [])] for r in levels]
        body.append(f"<h3>{esc(str(d.get('lang', '')).upper())} · {esc(d.get('embedder'))}</h3>"
                    + table(["level", "cos → clean", "SD", "cos → reference", "drop %", *extra,
                             *(["recovery ⚠"] if flagged else [])], rows))
    body.append(_images(_png(lambda p: noise_plot(docs, p)), "noise probe lines"))
    return Section("probe-noise", "Probe: conversational noise", str(item.path), "".join(body))


SUMMARY_KEYS = ("items", "covered", "coverage", "requests", "calls", "cache_hits", "shared_in_flight", "retries",
                "failures", "prompt_tokens", "completion_tokens", "cost_usd", "seconds")


def llm_section(item: Input) -> Section:
    """A generate / grade / label / sweep manifest (:class:`ragdiag.pipeline.run_meta.RunManifest`):
    its summary, how the server was reached, and how many items failed."""
    from ragdiag.pipeline.run_meta import RunManifest

    manifest = RunManifest.from_json(item.doc)
    summary = manifest.summary.to_json()
    keys = [k for k in SUMMARY_KEYS if k in summary] + [k for k in summary if k not in SUMMARY_KEYS
                                                          and isinstance(summary[k], (int, float, str))]
    body = [labels(test_server=is_test_server(item.doc)),
            table(["quantity", "value"], [[k, summary[k]] for k in keys]), counts_html(summary)]
    if manifest.run:
        body.append(table(["run detail", "value"], [[k, json.dumps(v, default=str)] for k, v in manifest.run.items()]))
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
    body = [labels(test_server=is_test_server(rows[:20]) or _manifest_says_test_server(item.path)),
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
    from ragdiag.report.calibrate_report import ppi_gap_note

    doc = item.doc
    meta = doc.get("meta") or {}
    body = [labels(simulated=False, test_server=_manifest_says_test_server(Path(str(meta.get("graded", ""))))),
            trust_panel(trust.calibrate_trust(doc))]
    agreement = doc.get("agreement")
    if agreement:
        body.append(table(["items", "weighted κ (quadratic)", "Spearman", "exact", "within ±1", "judge − human"],
                          [[agreement["items"], agreement["kappa_quadratic"], agreement["spearman"],
                            f"{100 * agreement['exact']:.0f}%", f"{100 * agreement['within_one']:.0f}%",
                            num(agreement["mean_bias"], signed=True)]], caption="judge–human agreement"))
        body.append(table(["judge \\ human", "1", "2", "3", "4", "5"],
                          [[g, *row] for g, row in enumerate(agreement["confusion"]["counts"], start=1)],
                          caption="confusion: judge grade (rounded, rows) × human grade (columns)"))
    estimates = doc.get("estimates") or {}

    def cell(block: dict | None) -> Raw:
        return Raw(esc("–" if not block else f"{num(block['estimate'])} {interval(block['ci'])}"))

    level = f"{100 * (1 - estimates.get('alpha', 0.1)):.0f}%"
    body.append(table(["group", "items", "labelled", "PPI (judge + humans)", "judge only", "humans only"],
                      [[m["group"], m["items"], m["labelled"], cell(m["ppi"]), cell(m["judge_only"]),
                        cell(m["human_only"])] for m in estimates.get("mean_grade", [])],
                      caption=f"mean grade per {estimates.get('by', 'group')} ({level} intervals)"))
    gap = ppi_gap_note(estimates)
    if gap:
        body.append(f'<p class="note">{esc(gap)}</p>')
    body.append(table(["measure", "PPI (judge + humans)", "judge only", "humans only"],
                      [[s["measure"], cell(s["ppi"]), cell(s["judge_only"]), cell(s["human_only"])]
                       for s in estimates.get("slopes", [])],
                      caption=f"slope of grade on each retrieval measure (OLS, {level} intervals)"))
    return Section("calibrate", "Calibrate: the judge against human grades", str(item.path), "".join(body))
def corpus_run_section(item: Input) -> Section:
    """``corpus_run.json`` of ``pipeline --corpus`` (:class:`ragdiag.pipeline.corpus_run.CorpusRunManifest`):
    what was ranked, with which retrievers, and where the stages wrote (their files get their own
    sections when the run folder is given)."""
    from ragdiag.pipeline.corpus_run import CorpusRunManifest

    manifest = CorpusRunManifest.from_json(item.doc)
    meta = manifest.meta
    retrievers = ", ".join(str(r.get("spec")) for r in meta.retrievers or [] if isinstance(r, dict))
    rows = [["command", meta.command], ["dataset", meta.dataset], ["retrievers", retrievers],
            ["cut-offs K", ", ".join(map(str, meta.ks or []))], ["depth", meta.depth],
            ["queries used", meta.queries.get("used")], ["queries left out (ideal cap)", meta.queries.get("left_out")],
            ["ranked samples", meta.ranked_samples], ["evaluate", meta.evaluate]]
    outputs = [[name, path] for name, path in (meta.outputs or {}).items()]
    body = [labels(test_server=is_test_server(manifest.run_record)),
            table(["quantity", "value"], rows), "<h3>files written</h3>" + table(["output", "path"], outputs)]
    return Section("corpus-run", f"Corpus run: {meta.dataset or ''}", str(item.path), "".join(body))


def plot_section(item: Input) -> Section:
    return Section("plot", f"Plot: {item.path.name}", str(item.path), image(item.doc, item.path.name))


RENDERERS = {"correlate": correlate_section, "robustness": robustness_section, "sweep": robustness_section,
             "evaluate": evaluate_section, "probe-names": names_section, "probe-noise": noise_section,
             "llm-run": llm_section, "graded": graded_section, "corpus-run": corpus_run_section,
             "plot": plot_section, "calibrate": calibrate_section}


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
