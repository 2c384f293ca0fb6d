"""Entry points of ``ragdiag probe names`` and ``ragdiag noise``: run, build meta, write outputs (rendering in report/probe_report.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table

from ragdiag.errors import RagdiagError
from ragdiag.io.files import file_sha256
from ragdiag.io.out_format import out_format
from ragdiag.io.run_record import RunRecord, stamp, start_run
from ragdiag.io.writer import guard_outputs, write_text
from ragdiag.probes.ablations import NEAR_MISS_DISTANCE, parse_ablations
from ragdiag.probes.embedding import load_embedders, make_meta
from ragdiag.probes.names import FAKER_LOCALES, run_names_probe
from ragdiag.probes.noise import parse_levels, run_noise_probe
from ragdiag.probes.probe_data import bundled_queries_path, load_queries, parse_langs
from ragdiag.report import probe_report as render

FORMATS = ("table", "json")


@dataclass
class ProbeOutput:
    """What the command shows: rich tables or JSON text for stdout, and notes for stderr."""

    tables: list[Table] = field(default_factory=list)
    json_text: str | None = None
    notes: list[str] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)


def _check_format(fmt: str | None, out: Path | None) -> None:
    """An unknown --format, or an --out suffix asking for a format the probes do not write (CSV)."""
    if fmt is not None and fmt not in FORMATS:
        raise RagdiagError(f"unknown format '{fmt}': expected table or json")
    if out is not None:
        out_format(out, fmt, FORMATS)


def _stamped(doc, record: RunRecord):
    """The run record in every JSON document (one per language and embedder)."""
    for one in doc if isinstance(doc, list) else [doc]:
        stamp(one, record)
    return doc


def _emit(output: ProbeOutput, doc, fmt: str | None, out: Path | None, plot: Path | None, plot_fn) -> ProbeOutput:
    """Fill stdout/--out (table text or JSON; the file's format by :func:`out_format`), draw --plot,
    and add the call counters as notes."""
    chosen = out_format(out, fmt, FORMATS) if out is not None else (fmt or "table")
    text = render.dumps(doc) if chosen == "json" else None
    if out is not None:
        write_text(out, (text if text is not None else render.render_tables(output.tables)) + "\n")
        output.notes.append(f"wrote {out}")
        output.tables = []
    else:
        output.json_text = text
        if text is not None:
            output.tables = []
    if plot is not None:
        plot_fn(output.results, Path(plot))
        output.notes.append(f"wrote {plot}")
    output.notes[:0] = render.counter_lines(output.results) + render.recovery_flags(output.results)
    return output


def probe_names(
    lang: str,
    embedders: list[str],
    queries: int,
    runs: int,
    seed: int,
    ablations: str,
    epsilon: float,
    fmt: str | None,
    out: Path | None,
    plot: Path | None,
    cache_dir: Path | None,
    cache_mode: str | None = None,
) -> ProbeOutput:
    """The Δ-margin name probe for each language and embedder (docs/methods.md#6-name-probe)."""
    langs, abl = parse_langs(lang), parse_ablations(ablations)
    _check_format(fmt, out)
    if epsilon < 0:
        raise RagdiagError(f"--epsilon must be non-negative (got {epsilon})")
    embs = load_embedders(embedders, cache_dir, cache_mode=cache_mode)
    record = start_run("ragdiag probe names", models={"embedders": [e.identity for e in embs]}, seeds={"seed": seed})
    results = run_names_probe(langs, embs, queries, runs, seed, abl, epsilon, progress=True)
    params = {
        "langs": langs, "queries": queries, "runs": runs, "seed": seed, "ablations": abl, "epsilon": epsilon,
        "near_miss_distance": NEAR_MISS_DISTANCE, "faker_locales": {lg: FAKER_LOCALES[lg] for lg in langs},
    }
    meta = make_meta("names", params, embs, {})
    output = ProbeOutput(tables=render.names_tables(results, seed), results=results)
    return _emit(output, _stamped(render.documents(results, meta), record), fmt, out, plot, render.names_plot)


def probe_noise(
    lang: str,
    embedders: list[str],
    levels: str,
    queries: str,
    seed: int,
    variants: int,
    corpus: Path | None,
    k: int,
    fmt: str | None,
    out: Path | None,
    plot: Path | None,
    cache_dir: Path | None,
    rewrite: bool = False,
    model: str | None = None,
    base_url: str | None = None,
    cache_mode: str | None = None,
    qrels: Path | None = None,
    bootstrap: int = 1000,
) -> ProbeOutput:
    """The conversational-noise probe for each language and embedder (docs/methods.md#7-noise-probe).

    With ``rewrite``, queries are first rewritten through the LLM layer (prompt ``query-rewrite``).
    """
    langs, lv = parse_langs(lang), parse_levels(levels)
    _check_format(fmt, out)
    guard_outputs([out, plot], [None if queries == "bundled" else Path(queries), corpus])
    if (model or base_url) and not rewrite:
        raise RagdiagError("--model and --base-url only apply with --rewrite")
    if qrels is not None and corpus is None:
        raise RagdiagError("--qrels needs --corpus (the collection the judged passages belong to)")
    query_sets = {lg: load_queries(bundled_queries_path(lg) if queries == "bundled" else Path(queries)) for lg in langs}
    files = {}
    if queries != "bundled":
        files[Path(queries).name] = file_sha256(Path(queries))
    corpus_data = None
    if corpus is not None:
        from ragdiag.probes.noise_retrieval import load_corpus

        corpus_data = load_corpus(corpus)
        files[str(corpus_data.path)] = corpus_data.sha256
    embs = load_embedders(embedders, cache_dir, cache_mode=cache_mode)
    record = start_run("ragdiag noise", inputs=[None if queries == "bundled" else queries, corpus],
                       models={"embedders": [e.identity for e in embs], **({"rewrite": model} if rewrite else {})},
                       seeds={"seed": seed})
    rewrite_meta: list[dict] = []
    rewrite_fn = None
    if rewrite:
        from ragdiag.probes.noise_rewrite import rewrite_queries

        def rewrite_fn(texts: list[str]):
            rewrites = rewrite_queries(texts, model, base_url, cache_dir, True, cache_mode or "rw")
            rewrite_meta.append(rewrites.meta)
            return rewrites

    graded = None
    if qrels is not None:
        from ragdiag.evaluate.inputs import load_graded_qrels

        graded = load_graded_qrels(qrels)
        files[str(qrels)] = file_sha256(qrels)
    results = []
    for lg in langs:
        judged = None
        if graded is not None:
            from ragdiag.probes.noise_retrieval import JudgedQueries

            judged = JudgedQueries.of([q.id for q in query_sets[lg]], graded, bootstrap, seed)
        results += run_noise_probe(lg, query_sets[lg], embs, lv, variants, seed, corpus_data, k, rewrite_fn,
                                   True, judged)
    for res in results:
        if queries == "bundled":
            res["data_files"][bundled_queries_path(res["lang"]).name] = file_sha256(bundled_queries_path(res["lang"]))
    params = {"langs": langs, "levels": lv, "queries": queries, "variants": variants, "seed": seed,
              "corpus": str(corpus) if corpus else None, "k": k if corpus else None, "rewrite": rewrite,
              **({"qrels": str(qrels), "bootstrap": bootstrap} if qrels else {})}
    meta = make_meta("noise", params, embs, files)
    if rewrite:
        meta["rewrite"] = rewrite_meta
    output = ProbeOutput(tables=render.noise_tables(results, seed), results=results)
    for lg, rw in zip(langs, rewrite_meta):
        calls = rw["llm_calls"]
        output.notes.append(f"llm calls [{lg} · {rw['model']} · {rw['prompt']}]: {calls['calls']} calls, "
                            f"{calls['cache_hits']} cache hits, {calls['failures']} failures")
    return _emit(output, _stamped(render.documents(results, meta), record), fmt, out, plot, render.noise_plot)
