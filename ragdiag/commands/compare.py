"""``ragdiag compare``: check every input and output, read and pair both sides, run the gate, write
``--out`` / ``--per-query`` / ``--summary-md`` (and append the summary to ``$GITHUB_STEP_SUMMARY``,
once when it is the ``--summary-md`` file), and stamp the run record. Math: :mod:`ragdiag.compare.gate`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragdiag.compare import checks
from ragdiag.compare.gate import GateOptions, gate, per_query_rows
from ragdiag.compare.inputs import Paired, read_pair
from ragdiag.compare.sequential_gate import SequentialOptions
from ragdiag.compare.spend import SpendRequest, check_spend
from ragdiag.compare.step_summary import STEP_SUMMARY, step_summary_path, summary_writes
from ragdiag.errors import RagdiagError
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.io.writer import write_json, write_jsonl, write_text
from ragdiag.llm.prices import CallPrice
from ragdiag.results.compare import CompareResult

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CompareRequest", "GateOptions", "SequentialOptions", "SpendRequest", "run"]


@dataclass
class CompareRequest:
    base: Path
    new: Path | None = None
    qrels: Path | None = None
    metrics: str | None = None
    id_col: str = "query_id"
    options: GateOptions = GateOptions()
    allow_missing: bool = False
    out: Path | None = None
    per_query: Path | None = None
    summary_md: Path | None = None
    base_name: str | None = None
    new_name: str | None = None
    sequential: SequentialOptions | None = None  # --sequential
    cluster_col: str | None = None
    cluster_by: str | None = None  # "doc"
    queries: Path | None = None  # --queries: the questions' source documents for --cluster-by doc
    spend: SpendRequest | None = None  # --plan with --budget / --target-width
    prices: Path | None = None  # --prices: the price table the known call price comes from

    @property
    def inputs(self) -> list[Path]:
        human = None if self.spend is None else self.spend.human
        return [p for p in (self.base, self.new, self.qrels, self.queries, human) if p is not None]


def side_names(request: CompareRequest) -> tuple[str, str | None]:
    """The names the outputs call the two sides (:func:`ragdiag.compare.checks.side_names`)."""
    return checks.side_names(request.base, request.new, request.base_name, request.new_name)


def _check_grouping(request: CompareRequest) -> None:
    """--sequential, --cluster-col, --cluster-by and --order-col: what each needs, before anything is read."""
    if request.cluster_col is not None and request.cluster_by is not None:
        raise RagdiagError("give --cluster-col or --cluster-by, not both")
    if request.cluster_by is not None and request.cluster_by != "doc":
        raise RagdiagError(f"--cluster-by must be doc, got {request.cluster_by!r}")
    if request.cluster_col is not None and request.qrels is not None:
        raise RagdiagError("--cluster-col reads a column of per-query tables; with runs and --qrels use "
                           "--cluster-by doc --queries QUERIES.jsonl")
    if request.cluster_by == "doc" and request.qrels is not None and request.queries is None:
        raise RagdiagError("--cluster-by doc with runs needs --queries QUERIES.jsonl (the questions, each naming its "
                           "source document in metadata.source_doc, as `ragdiag testset` writes them)")
    clustered = request.cluster_col is not None or request.cluster_by is not None
    if request.sequential is not None:
        if request.new is None:
            raise RagdiagError("--sequential compares two sides: give --new")
        if clustered:
            raise RagdiagError("--sequential reads queries one by one as independent draws; it does not take "
                               "--cluster-col / --cluster-by (use the fixed gate for clustered questions)")
        if request.options.plan:
            raise RagdiagError("--sequential decides as it goes: leave out --plan (the fixed gate's sizing)")
        if request.sequential.order_col is not None and request.qrels is not None:
            raise RagdiagError("--order-col reads a column of per-query tables; runs are replayed in the seeded random order")


def _check_spend(request: CompareRequest) -> CallPrice | None:
    """--plan --budget / --target-width: the ranges, two graded files, and the price of a call (given, or
    the judge model's known price from the grade manifests), all before anything is read."""
    spend = request.spend
    if spend is None:
        return None
    check_spend(spend)
    if not request.options.plan:
        raise RagdiagError("--budget / --target-width plan a spend: add --plan")
    if request.new is None or request.qrels is not None:
        raise RagdiagError("--plan --budget / --target-width plans a paired Δ of judge grades: give two graded files "
                           "as --base and --new (no --qrels)")
    if request.sequential is not None:
        raise RagdiagError("--sequential decides as it goes: leave out --budget / --target-width")
    if not spend.human.is_file():
        raise RagdiagError(f"--human {spend.human}: no such file")
    if spend.price_call is not None:
        return CallPrice(spend.price_call, "--price-call")
    from ragdiag.commands.provenance import sidecar_manifests
    from ragdiag.llm.prices import load_prices, manifest_call_price

    return manifest_call_price([(str(path), sidecar_manifests(path)) for path in (request.base, request.new)],
                            load_prices(request.prices))


def _check(request: CompareRequest) -> CallPrice | None:
    """Every check before anything is read; the price of a call when a spend is planned."""
    checks.check_options(request.options)
    checks.check_names(request.base_name, request.new_name)
    if request.new_name is not None and request.new is None:
        raise RagdiagError("--new-name names --new: give --new too")
    _check_grouping(request)
    if request.new is None and not request.options.plan:
        raise RagdiagError("give --new (the changed system), or --plan to size a comparison from --base alone")
    check_paths(inputs={"--base": request.base, "--new": request.new, "--qrels": request.qrels, "--queries": request.queries,
                        "--human": None if request.spend is None else request.spend.human},
                outputs={"--out": request.out, "--per-query": request.per_query, "--summary-md": request.summary_md})
    for flag, path in (("--base", request.base), ("--new", request.new), ("--qrels", request.qrels),
                       ("--queries", request.queries)):
        if path is not None and not path.is_file():
            raise RagdiagError(f"{flag} {path}: no such file")
    if request.per_query is not None and request.new is None:
        raise RagdiagError("--per-query needs --new: it writes the per-query differences")
    step = step_summary_path()
    if step is not None:
        check_paths(inputs={"--base": request.base, "--new": request.new, "--qrels": request.qrels},
                    outputs={f"${STEP_SUMMARY}": step})
    return _check_spend(request)


def _attach_groups(request: CompareRequest, data: Paired) -> np.ndarray | None:
    """Set ``data.clusters`` from --cluster-col / --cluster-by and return --order-col's values (or None)."""
    import numpy as np

    from ragdiag.compare import clustered, labels

    if request.cluster_col is not None:
        data.clusters = labels.column_labels(request.base, request.id_col, request.cluster_col, data.ids)
    elif request.cluster_by == "doc":
        data.clusters = (labels.source_documents(request.queries, data.ids) if request.queries is not None
                         else labels.column_labels(request.base, request.id_col, labels.SOURCE_DOC_KEYS[0], data.ids))
    if data.clusters is not None:
        clustered.check_clusters(clustered.cluster_index(data.clusters), str(request.queries or request.base))
    seq = request.sequential
    if seq is not None and seq.order_col is not None:
        return np.array(labels.column_order(request.base, request.id_col, seq.order_col, data.ids))
    return None


def _human_pairs(request: CompareRequest, data: Paired) -> tuple[np.ndarray, np.ndarray] | None:
    """--human's grades of both sides per paired question, when a spend is planned (graded files only)."""
    if request.spend is None:
        return None
    if data.kind != "graded":
        raise RagdiagError(f"--plan --budget / --target-width plans over graded files (judge grades, their repeats); "
                           f"--base {request.base} is a {data.kind} input")
    from ragdiag.compare.spend import read_human_pairs

    return read_human_pairs(request.spend.human, data.ids)


def run(request: CompareRequest) -> CompareResult:
    """Check, read, compute, write; the result carries its run record (exit code: ``result.exit_code``)."""
    price = _check(request)
    o = request.options
    record = start_run("ragdiag compare", inputs=request.inputs, seeds={"compare": o.seed})
    data = read_pair(request.base, request.new, request.qrels, request.metrics, request.id_col, request.allow_missing)
    base_name, new_name = side_names(request)
    meta = {"command": "ragdiag compare", "base": str(request.base), "new": None if request.new is None else str(request.new),
            "base_name": base_name, "new_name": new_name, "qrels": None if request.qrels is None else str(request.qrels), "input_kind": data.kind,
            "queries": len(data.ids), "dropped": data.dropped, "test": o.test, "correction": o.correction,
            "alpha": o.alpha, "interval_level": 1 - 2 * o.alpha, "max_drop": o.max_drop, "seed": o.seed,
            "strict": o.strict, "power": o.power, "mde": o.mde if o.plan else None}
    order = _attach_groups(request, data)
    if request.sequential is not None:
        meta["sequential"] = True
    if data.clusters is not None:
        meta["clusters"] = len(set(data.clusters))
        meta["cluster_by"] = request.cluster_col or "doc"
    human = _human_pairs(request, data)
    result = gate(data, o, meta, request.sequential, order)
    if request.spend is not None and price is not None and human is not None:
        from ragdiag.compare.spend import paired_plan

        assert data.new is not None
        result.meta.update({"human": str(request.spend.human), "price_call_source": price.source})
        result.budget_plan = paired_plan(data.base_repeats, data.new_repeats, data.base[:, 0], data.new[:, 0], *human,
                                         2 * o.alpha, request.spend, price.value, o.seed)
    result.run_record = record.to_json()
    inputs = request.inputs
    if request.out is not None:
        write_json(request.out, result.to_json(), inputs=inputs)
    if request.per_query is not None:
        write_jsonl(request.per_query, per_query_rows(data), inputs=inputs)
    write_summary(result, request.summary_md, inputs)
    return result


def write_summary(result: CompareResult, summary_md: Path | None, inputs: list[Path]) -> None:
    """The Markdown summary to ``--summary-md`` and appended to ``$GITHUB_STEP_SUMMARY`` (once when they are one file)."""
    from ragdiag.report.compare_report import markdown

    for path, text in summary_writes(markdown(result), summary_md):
        write_text(path, text, inputs=inputs)
