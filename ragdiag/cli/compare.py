"""``ragdiag compare``: did the change make retrieval or answers worse, and how many queries does it take to know?"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ragdiag.cli import options as o

if TYPE_CHECKING:
    from ragdiag.commands.compare import SpendRequest
    from ragdiag.commands.compare_judged import CorpusSource


class PairedTest(str, Enum):
    """The paired test of each metric: Student's t, sign-flip randomization, percentile bootstrap."""

    t = "t"
    randomization = "randomization"
    bootstrap = "bootstrap"


class Sequence(str, Enum):
    """The confidence sequence of --sequential: asymptotic (any metric) or betting (bounded metrics, finite-sample)."""

    asymptotic = "asymptotic"
    betting = "betting"


class ClusterBy(str, Enum):
    """What groups the questions for cluster-robust errors: the document each was generated from."""

    doc = "doc"


class Correction(str, Enum):
    """Family correction of the metrics' p-values: Holm, Benjamini–Hochberg, none."""

    holm = "holm"
    bh = "bh"
    none = "none"


def compare(
    base: Annotated[Optional[Path], o.path_option(o.INPUT, "--base", "The reference side: a run (with --qrels), a graded file, or a per-query table (.csv, .tsv, .jsonl, .json, .parquet).")] = None,
    new: Annotated[Optional[Path], o.path_option(o.INPUT, "--new", "The changed side, same kind as --base; paired with it by query id.")] = None,
    texts: Annotated[Optional[str], o.retold(o.Texts, "The judged loop (with --sequential, instead of --base/--new): the questions' texts samples (JSON/JSONL), answered from --base-ranked and --new-ranked and graded batch by batch.")] = None,
    base_ranked: Annotated[Optional[Path], o.path_option(o.INPUT, "--base-ranked", "The judged loop: the reference side's ranked samples of --texts.")] = None,
    new_ranked: Annotated[Optional[Path], o.path_option(o.INPUT, "--new-ranked", "The judged loop: the changed side's ranked samples of the same questions (with --new-model it may be left out: both sides answer from --base-ranked).")] = None,
    corpus: Annotated[Optional[Path], o.retold(o.CorpusFolder, "The judged loop, instead of --texts and the ranked files: a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv), a corpus file or a folder of documents (with --queries and --qrels), ranked by --base-retriever and --new-retriever once, before any LLM call.")] = None,
    base_retriever: Annotated[Optional[str], o.text_option(o.INPUT, "--base-retriever", "With --corpus: the reference side's retriever, bm25[:VARIANT[:k1=..,b=..]], dense:EMBEDDER[:INDEX_SPEC] or hybrid:A+B (RRF).")] = None,
    new_retriever: Annotated[Optional[str], o.text_option(o.INPUT, "--new-retriever", "With --corpus: the changed side's retriever, same forms (with --new-model it may be left out: both sides answer from --base-retriever's ranking).")] = None,
    client: o.ClientGroup = o.CLIENT,
    k: Annotated[int, o.int_option(o.LLM, "--k", "The judged loop: answer from each side's top K passages.", 1, 1000)] = 5,
    new_model: Annotated[Optional[str], o.text_option(o.LLM, "--new-model", "The judged loop: the model answering the new side (--model answers the base side); the same questions and passages, graded on one ruler.")] = None,
    base_prompt: Annotated[Optional[str], o.text_option(o.LLM, "--base-prompt", "The judged loop: the base side's generation prompt, a bundled id (e.g. generation@v2) or a TOML file in the same schema whose template fences $query and $references (default: the bundled generation prompt).")] = None,
    new_prompt: Annotated[Optional[str], o.text_option(o.LLM, "--new-prompt", "The judged loop: the new side's generation prompt, same forms (with it --new-ranked may be left out: both sides answer from --base-ranked); a file's SHA-256 enters its id and every cache key.")] = None,
    judge_model: Annotated[Optional[str], o.text_option(o.LLM, "--judge-model", "The judged loop: the model that writes the ideal answers and grades both sides against them (default --model).")] = None,
    batch_size: Annotated[int, o.int_option(o.LLM, "--batch-size", "The judged loop: questions answered and graded per batch before the gate looks again (a multiple of --look-every).", 1, 10_000)] = 10,
    max_calls: Annotated[Optional[int], o.retold(o.MaxCalls, "The judged loop: stop before a batch whose worst case (every call uncached) would take the new calls past N; refused before any call when the first batch does not fit.")] = None,
    qrels: Annotated[Optional[Path], o.retold(o.Qrels, "With runs: graded qrels 1–5 (or binary) to score both runs with the evaluate metrics; with --corpus: its qrels, BEIR or TREC (default: the folder's qrels/test.tsv).")] = None,
    metrics: Annotated[Optional[str], o.text_option(o.STATISTICS, "--metrics", "Runs: comma list of METRIC@K from the evaluate registry (default ndcg@10,ra_nwg@10,recall@20); tables: metric columns (default: every numeric column); graded files: grade.")] = None,
    id_col: Annotated[str, o.retold(o.IdCol, "Tables: the query-id column that pairs the two sides.")] = "query_id",
    max_drop: Annotated[float, o.float_option(o.STATISTICS, "--max-drop", "Margin: a drop of Δ up to this much is not a regression (metric units).", 0.0, 1000.0)] = 0.01,
    alpha: Annotated[float, o.float_option(o.STATISTICS, "--alpha", "Error level of each one-sided decision; intervals are two-sided at 1 − 2α.", 0.0, 0.5, lo_open=True, hi_open=True)] = 0.05,
    test: Annotated[PairedTest, o.option(o.STATISTICS, "--test", help="Paired test: t (scipy ttest_rel), randomization (sign flips: exact up to 20 queries, else 10,000 seeded draws) or bootstrap (2,000 paired percentile resamples).", metavar=o.choices_metavar(PairedTest))] = PairedTest.t,
    correction: Annotated[Correction, o.option(o.STATISTICS, "--correction", help="Family correction of the p-values across metrics: holm, bh (Benjamini–Hochberg) or none.", metavar=o.choices_metavar(Correction))] = Correction.holm,
    per_query: Annotated[Optional[Path], o.retold(o.PerQuery, "Write one JSON line per query: each metric's Δ = new − base, and its two values.")] = None,
    summary_md: Annotated[Optional[Path], o.path_option(o.OUTPUT, "--summary-md", "Write the Markdown summary here (also appended to $GITHUB_STEP_SUMMARY when set).")] = None,
    out: Annotated[Optional[Path], o.retold(o.Out, "Write the result as JSON (with its run record).")] = None,
    strict: Annotated[bool, o.option(o.STATISTICS, "--strict", help="Fail the gate (exit 1) on an inconclusive metric too.")] = False,
    allow_missing: Annotated[bool, o.option(o.INPUT, "--allow-missing", help="Drop queries found on one side only (counted in the output) instead of refusing.")] = False,
    plan: Annotated[bool, o.option(o.STATISTICS, "--plan", help="Also report the queries needed to detect a drop of --mde with --power, and the drop detectable now (--new optional: one run gives the unpaired bound).")] = False,
    mde: Annotated[float, o.float_option(o.STATISTICS, "--mde", "With --plan: the drop to detect (metric units, above --max-drop).", 0.0, 1000.0, lo_open=True)] = 0.02,
    base_name: Annotated[Optional[str], o.text_option(o.OUTPUT, "--base-name", "The base side's name in every output (default: its file name); 1–80 printable characters.")] = None,
    new_name: Annotated[Optional[str], o.text_option(o.OUTPUT, "--new-name", "The new side's name in every output (default: its file name); 1–80 printable characters.")] = None,
    human: Annotated[Optional[Path], o.retold(o.Human, "With --plan --budget/--target-width: the pilot's human grades of both answers per question: id, base, new (1–5; both empty: not labelled; at least 10 labelled).")] = None,
    price_call: Annotated[Optional[float], o.retold(o.PriceCall, "--plan: price of one LLM call (an answer or one judge grade), in any currency; default: the judge model's price in ragdiag's table (--prices adds models) times the tokens per call the graded files' grade manifests recorded. Range (0, 1e+06].")] = None,
    price_human: Annotated[Optional[float], o.retold(o.PriceHuman, "--plan: price of one human grade, same currency (a labelled question takes two: base and new). Range (0, 1e+06].")] = None,
    budget: Annotated[Optional[float], o.retold(o.PlanBudget, "--plan: the spend to allocate over new questions, judge repeats and human labels for the paired Δ (the narrowest interval it buys); at least one labelled question (two human grades). Range (0, 1e+09].")] = None,
    target_width: Annotated[Optional[float], o.retold(o.TargetWidth, "--plan: the width of the Δ's interval to reach at the least cost (grade units). Range (0, 4].")] = None,
    power: Annotated[float, o.float_option(o.STATISTICS, "--power", "Power wanted: of the plan, and of the queries an inconclusive metric needs.", 0.0, 1.0, lo_open=True, hi_open=True)] = 0.8,
    sequential: Annotated[bool, o.option(o.STATISTICS, "--sequential", help="Anytime-valid gate: read the queries in a seeded random order (or --order-col), update a confidence sequence per metric after every --look-every queries, and decide each metric as soon as e-Holm over the metrics allows; valid however often it is watched.")] = False,
    sequence: Annotated[Sequence, o.option(o.STATISTICS, "--sequence", help="With --sequential: asymptotic (any metric; first look after --burn-in; decides in about a third of the fixed design's queries for a drop of twice the MDE) or betting (exact in finite samples, needs the metric's bounds: runs [0, 1], grades [1, 5], tables --bounds; wider when the differences are small against those bounds).", metavar=o.choices_metavar(Sequence))] = Sequence.asymptotic,
    look_every: Annotated[int, o.int_option(o.STATISTICS, "--look-every", "With --sequential: look after every N queries.", 1, 1_000_000)] = 1,
    burn_in: Annotated[int, o.int_option(o.STATISTICS, "--burn-in", "With --sequential --sequence asymptotic: the first look, after N queries.", 2, 1_000_000)] = 20,
    max_queries: Annotated[Optional[int], o.int_option(o.STATISTICS, "--max-queries", "With --sequential: stop after N queries, decided or not.", 5, 1_000_000_000)] = None,
    bounds: Annotated[Optional[str], o.text_option(o.STATISTICS, "--bounds", "With --sequential on tables: LOW,HIGH, the range every per-query value lies in (for the betting sequence).")] = None,
    order_col: Annotated[Optional[str], o.text_option(o.INPUT, "--order-col", "With --sequential on tables: a numeric column (time stamp, arrival index) giving the order queries are read in.")] = None,
    cluster_col: Annotated[Optional[str], o.text_option(o.INPUT, "--cluster-col", "Tables: a column grouping the queries (e.g. the source document); intervals and p-values become cluster-robust (CR1 t, cluster bootstrap, cluster sign flips).")] = None,
    cluster_by: Annotated[Optional[ClusterBy], o.option(o.INPUT, "--cluster-by", help="doc: group the questions by the document each was generated from (--queries metadata.source_doc for runs, the source_doc column for tables); cluster-robust as --cluster-col.", metavar=o.choices_metavar(ClusterBy))] = None,
    queries: Annotated[Optional[Path], o.path_option(o.INPUT, "--queries", "With --cluster-by doc on runs: the questions (BEIR queries.jsonl) naming their source document; with --corpus: its questions (default: the folder's queries.jsonl).")] = None,
    fields: o.Fields = None,
    score_field: o.ScoreField = None,
    qrels_format: o.QrelsFormat = None,
    run_format: o.RunFormat = None,
    table_format: o.PerQueryFormat = None,
    by_document: o.ByDocument = False,
    chunk_size: o.ChunkSize = o.DEFAULT_CHUNK_SIZE,
    chunk_overlap: o.ChunkOverlap = o.DEFAULT_CHUNK_OVERLAP,
    answer: o.AnswerGroup = o.ANSWER,
    grading: o.GradingGroup = o.GRADING,
    engine: o.EngineGroup = o.ENGINE,
) -> None:
    """Paired regression gate: per metric Δ = new − base with its interval, p-value, d_z and a decision
    (regression, no regression, inconclusive), corrected across metrics; exit 0 pass, 1 fail, 2 bad input.
    --plan: queries needed (Sakai's topic set size design); with --budget or --target-width, how to spend on new
    questions, judge repeats and human labels (PPI++ on the paired Δ). Methods: docs/methods.md#regression-gate-compare."""
    from rich.console import Console

    from ragdiag.commands.compare import CompareRequest, GateOptions, SequentialOptions, run
    from ragdiag.errors import RagdiagError
    from ragdiag.io.lists import parse_bounds
    from ragdiag.report.compare_report import render

    alone = [flag for flag, given in (("--bounds", bounds is not None), ("--order-col", order_col is not None),
                                      ("--max-queries", max_queries is not None), ("--look-every", look_every != 1),
                                      ("--burn-in", burn_in != 20), ("--sequence", sequence != Sequence.asymptotic)) if given]
    if alone and not sequential:
        raise RagdiagError(f"{alone[0]} goes with --sequential (add --sequential, or leave out {alone[0]})")
    spend = _spend(plan, human, price_call, price_human, budget, target_width)
    options = GateOptions(test.value, correction.value, alpha, max_drop, client.seed, plan, mde, power, strict)
    seq = (SequentialOptions(sequence.value, look_every, burn_in, max_queries,
                             None if bounds is None else parse_bounds(bounds, "--bounds"), order_col)
           if sequential else None)
    judged = [flag for flag, path in (("--texts", texts), ("--base-ranked", base_ranked), ("--new-ranked", new_ranked),
                                      ("--corpus", corpus), ("--base-retriever", base_retriever),
                                      ("--new-retriever", new_retriever), ("--new-model", new_model),
                                      ("--judge-model", judge_model), ("--base-prompt", base_prompt),
                                      ("--new-prompt", new_prompt)) if path]
    if judged:
        corpus_files = corpus is not None and "--texts" not in judged and "--base-ranked" not in judged
        files = [flag for flag, path in (("--base", base), ("--new", new), ("--qrels", qrels), ("--queries", queries))
                 if path and not (corpus_files and flag in ("--qrels", "--queries"))]
        if files:
            raise RagdiagError(f"{judged[0]} (the judged loop) and {files[0]} (files already scored) are two ways to give "
                               "the sides: give --texts --base-ranked --new-ranked, or --base/--new, not both")
        if seq is None:
            raise RagdiagError(f"{judged[0]}: the judged loop answers and grades as the gate decides; add --sequential")
        prompts = (base_prompt, new_prompt)
        source = _corpus_source(judged, corpus, queries, qrels, base_retriever, new_retriever,
                                new_model or base_prompt or new_prompt)
        if source is not None:
            with o.reading_of(chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
                _judged(None, None, None, k, batch_size, max_calls, client, answer, grading, engine, options, seq, out,
                        summary_md, base_name, new_name, per_query, plan, cluster_col, cluster_by, metrics, allow_missing,
                        new_model, judge_model, prompts, source)
        needed = ("--texts", "--base-ranked") + (() if new_model or base_prompt or new_prompt else ("--new-ranked",))
        missing = [flag for flag in needed if flag not in judged]
        if missing:
            raise RagdiagError(f"the judged loop needs --texts, --base-ranked and --new-ranked (or --new-model / --new-prompt: "
                               f"another model or prompt answering from --base-ranked); give {missing[0]}")
        assert texts is not None and base_ranked is not None
        _judged(Path(texts), base_ranked, new_ranked, k, batch_size, max_calls, client, answer, grading, engine, options, seq,
                out, summary_md, base_name, new_name, per_query, plan, cluster_col, cluster_by, metrics, allow_missing,
                new_model, judge_model, prompts)
    if base is None:
        raise RagdiagError("give --base (the reference side), or --texts --base-ranked --new-ranked with --sequential "
                           "(the judged loop)")
    with o.reading_of(fields, score_field=score_field, qrels=qrels_format, run=run_format, table=table_format,
                      by_document=by_document, chunk_size=chunk_size, chunk_overlap=chunk_overlap).activate():
        result = run(CompareRequest(base, new, qrels, metrics, id_col, options, allow_missing, out, per_query, summary_md,
                                    base_name, new_name, seq, cluster_col, None if cluster_by is None else cluster_by.value,
                                    queries, spend, client.prices))
    render(result, Console(width=max(Console().width, 80)))
    for label, path in (("result", out), ("per-query differences", per_query), ("summary", summary_md)):
        if path is not None:
            typer.echo(f"wrote {path} ({label})", err=True)
    raise typer.Exit(result.exit_code)


def _spend(plan: bool, human: Optional[Path], price_call: Optional[float], price_human: Optional[float],
           budget: Optional[float], target_width: Optional[float]) -> SpendRequest | None:
    """The spend --plan --budget / --target-width asks for (None without one); flags given alone refused."""
    from ragdiag.commands.compare import SpendRequest
    from ragdiag.errors import RagdiagError

    given = [flag for flag, value in (("--human", human), ("--price-call", price_call), ("--price-human", price_human),
                                      ("--budget", budget), ("--target-width", target_width)) if value is not None]
    if given and not plan:
        raise RagdiagError(f"{given[0]} goes with --plan (add --plan, or leave out {given[0]})")
    if not given:
        return None
    if budget is None and target_width is None:
        raise RagdiagError(f"{given[0]}: --plan spends with --budget (the narrowest interval it buys) or "
                           "--target-width (the cheapest design reaching it); give one")
    if human is None or price_human is None:
        raise RagdiagError("--plan --budget/--target-width needs --human (the pilot's human grades: id, base, new) and "
                           "--price-human (the price of one human grade)")
    return SpendRequest(human, price_human, price_call, budget, target_width)


def _corpus_source(judged: list[str], corpus: Optional[Path], queries: Optional[Path], qrels: Optional[Path],
                   base_retriever: Optional[str], new_retriever: Optional[str],
                   other_answerer: Optional[str]) -> Optional[CorpusSource]:
    """The two retrievers on one corpus (None when the judged loop reads files): --corpus with --base-retriever,
    and --new-retriever unless another answerer (--new-model or a prompt flag); the file flags refused beside it, the retriever flags without it."""
    from ragdiag.commands.compare_judged import CorpusSource
    from ragdiag.errors import RagdiagError

    retrievers = [flag for flag in ("--base-retriever", "--new-retriever") if flag in judged]
    if corpus is None:
        if retrievers:
            raise RagdiagError(f"{retrievers[0]} goes with --corpus (the corpus both retrievers rank): add --corpus")
        return None
    files = [flag for flag in ("--texts", "--base-ranked", "--new-ranked") if flag in judged]
    if files:
        raise RagdiagError(f"--corpus (two retrievers on one corpus) and {files[0]} (rankings already made) are two "
                           "ways to give the judged loop's sides: give --corpus --base-retriever --new-retriever, or "
                           "--texts --base-ranked --new-ranked, not both")
    if base_retriever is None:
        raise RagdiagError("--corpus needs --base-retriever (the reference side's retriever, e.g. bm25)")
    if new_retriever is None and other_answerer is None:
        raise RagdiagError("--corpus needs --new-retriever (the changed side's retriever, e.g. bm25:lucene:k1=1.2,b=0.75), "
                           "or --new-model / --new-prompt (another model or prompt answering from --base-retriever's "
                           "ranking)")
    return CorpusSource(corpus, queries, qrels, base_retriever, new_retriever)


def _judged(texts: Optional[Path], base_ranked: Optional[Path], new_ranked: Optional[Path], k: int, batch_size: int, max_calls: Optional[int],
            client: o.ClientGroup, answer: o.AnswerGroup, grading: o.GradingGroup, engine: o.EngineGroup,
            options: object, seq: object, out: Optional[Path], summary_md: Optional[Path], base_name: Optional[str],
            new_name: Optional[str], per_query: Optional[Path], plan: bool, cluster_col: Optional[str],
            cluster_by: object, metrics: Optional[str], allow_missing: bool, new_model: Optional[str],
            judge_model: Optional[str], prompts: tuple[Optional[str], Optional[str]] = (None, None),
            corpus: Optional[CorpusSource] = None) -> None:
    """``compare --sequential --texts … --base-ranked … --new-ranked …`` (or ``--corpus … --base-retriever …
    --new-retriever …``): judge batch by batch until decided."""
    from rich.console import Console

    from ragdiag.commands import compare_judged as command
    from ragdiag.commands.llm_files import stderr_notice
    from ragdiag.errors import RagdiagError
    from ragdiag.report.compare_report import render

    refused = [flag for flag, given in (("--per-query", per_query), ("--plan", plan), ("--cluster-col", cluster_col),
                                        ("--cluster-by", cluster_by), ("--metrics", metrics),
                                        ("--allow-missing", allow_missing)) if given]
    if refused:
        raise RagdiagError(f"{refused[0]} does not go with the judged loop (--texts, --base-ranked, --new-ranked or "
                           f"--corpus): leave it out")
    with o.llm_run(client, engine):
        request = command.JudgedRequest(
            texts, base_ranked, new_ranked, k, client.config(), options, seq,  # type: ignore[arg-type]
            command.JudgedOptions(batch_size, max_calls, answer=answer.settings(), grading=grading.options(),
                                  progress=client.progress),
            out, summary_md, base_name, new_name, new_model, judge_model, corpus, *prompts)
        result = command.run(request, stderr_notice)
    render(result, Console(width=max(Console().width, 80)))
    for label, path in (("result", out), ("summary", summary_md)):
        if path is not None:
            typer.echo(f"wrote {path} ({label})", err=True)
    raise typer.Exit(result.exit_code)
