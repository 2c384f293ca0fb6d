"""``ragdiag compare``: check every input and output, read and pair both sides, run the gate, write
``--out`` / ``--per-query`` / ``--summary-md`` (and append the summary to ``$GITHUB_STEP_SUMMARY``,
once when it is the ``--summary-md`` file), and stamp the run record. Math: :mod:`ragdiag.compare.gate`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ragdiag.compare.gate import GateOptions, gate, per_query_rows
from ragdiag.compare.inputs import read_pair
from ragdiag.compare.paired import CORRECTIONS, TESTS
from ragdiag.errors import RagdiagError
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.io.writer import write_json, write_jsonl, write_text
from ragdiag.results.compare import CompareResult

__all__ = ["STEP_SUMMARY", "CompareRequest", "GateOptions", "check_options", "run"]

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


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

    @property
    def inputs(self) -> list[Path]:
        return [p for p in (self.base, self.new, self.qrels) if p is not None]


def check_options(o: GateOptions) -> None:
    """The ranges of issue 31, checked again for callers of the library (the CLI checks them first)."""
    if o.test not in TESTS:
        raise RagdiagError(f"--test must be one of {', '.join(TESTS)}, got {o.test!r}")
    if o.correction not in CORRECTIONS:
        raise RagdiagError(f"--correction must be one of {', '.join(CORRECTIONS)}, got {o.correction!r}")
    if not 0 < o.alpha < 0.5:
        raise RagdiagError(f"--alpha must be in (0, 0.5), got {o.alpha}")
    if not 0 < o.power < 1:
        raise RagdiagError(f"--power must be in (0, 1), got {o.power}")
    if not o.mde > 0:
        raise RagdiagError(f"--mde must be above 0, got {o.mde}")
    if not o.max_drop >= 0:
        raise RagdiagError(f"--max-drop must be at least 0, got {o.max_drop}")
    if o.plan and o.mde <= o.max_drop:
        raise RagdiagError(f"--mde {o.mde:g} must exceed --max-drop {o.max_drop:g}: the plan sizes the test that tells a "
                           "drop of --mde from one within the margin")


NAME_MAX = 80


def check_name(flag: str, name: str) -> None:
    """A side's name (--base-name, --new-name): 1–80 characters, none of them a control character."""
    if not name.strip() or len(name) > NAME_MAX or not name.isprintable():
        raise RagdiagError(f"{flag} {name!r}: expected 1–{NAME_MAX} printable characters (no line breaks or control "
                           "characters)")


def side_names(request: CompareRequest) -> tuple[str, str | None]:
    """The names the outputs call the two sides: --base-name / --new-name, else the file names (the
    paths as given when both files have the same name)."""
    base, new = request.base, request.new
    same = new is not None and base.name == new.name
    return (request.base_name or (str(base) if same else base.name),
            None if new is None else request.new_name or (str(new) if same else new.name))


def _same_file(one: Path, two: Path) -> bool:
    return one.resolve() == two.resolve()


def _check(request: CompareRequest) -> None:
    check_options(request.options)
    for flag, name in (("--base-name", request.base_name), ("--new-name", request.new_name)):
        if name is not None:
            check_name(flag, name)
    if request.new_name is not None and request.new is None:
        raise RagdiagError("--new-name names --new: give --new too")
    if request.new is None and not request.options.plan:
        raise RagdiagError("give --new (the changed system), or --plan to size a comparison from --base alone")
    check_paths(inputs={"--base": request.base, "--new": request.new, "--qrels": request.qrels},
                outputs={"--out": request.out, "--per-query": request.per_query, "--summary-md": request.summary_md})
    for flag, path in (("--base", request.base), ("--new", request.new), ("--qrels", request.qrels)):
        if path is not None and not path.is_file():
            raise RagdiagError(f"{flag} {path}: no such file")
    if request.per_query is not None and request.new is None:
        raise RagdiagError("--per-query needs --new: it writes the per-query differences")
    summary = os.environ.get(STEP_SUMMARY)
    if summary:
        check_paths(inputs={"--base": request.base, "--new": request.new, "--qrels": request.qrels},
                    outputs={f"${STEP_SUMMARY}": Path(summary)})


def run(request: CompareRequest) -> CompareResult:
    """Check, read, compute, write; the result carries its run record (exit code: ``result.exit_code``)."""
    from ragdiag.report.compare_report import markdown

    _check(request)
    o = request.options
    record = start_run("ragdiag compare", inputs=request.inputs, seeds={"compare": o.seed})
    data = read_pair(request.base, request.new, request.qrels, request.metrics, request.id_col, request.allow_missing)
    base_name, new_name = side_names(request)
    meta = {"command": "ragdiag compare", "base": str(request.base), "new": None if request.new is None else str(request.new),
            "base_name": base_name, "new_name": new_name, "qrels": None if request.qrels is None else str(request.qrels), "input_kind": data.kind,
            "queries": len(data.ids), "dropped": data.dropped, "test": o.test, "correction": o.correction,
            "alpha": o.alpha, "interval_level": 1 - 2 * o.alpha, "max_drop": o.max_drop, "seed": o.seed,
            "strict": o.strict, "power": o.power, "mde": o.mde if o.plan else None}
    result = gate(data, o, meta)
    result.run_record = record.to_json()
    inputs = request.inputs
    if request.out is not None:
        write_json(request.out, result.to_json(), inputs=inputs)
    if request.per_query is not None:
        write_jsonl(request.per_query, per_query_rows(data), inputs=inputs)
    text = markdown(result)
    summary = os.environ.get(STEP_SUMMARY)
    step = Path(summary) if summary else None
    if request.summary_md is not None and not (step is not None and _same_file(step, request.summary_md)):
        write_text(request.summary_md, text, inputs=inputs)
    if step is not None:  # appended to (GitHub's step summary collects every step's text); once when it is --summary-md
        before = step.read_text(encoding="utf-8") if step.is_file() else ""
        write_text(step, before + ("\n" if before and not before.endswith("\n") else "") + text, inputs=inputs)
    return result
