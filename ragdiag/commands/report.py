"""``ragdiag report RESULT... --out report.html``: read and classify the result files (and the
manifests beside their graded files), render one section each (:mod:`ragdiag.report.html.build`,
which opens no file) and write the self-contained page."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.commands.provenance import sidecar_manifests
from ragdiag.errors import RagdiagError
from ragdiag.report.html.inputs import Input, kind_of, own_input_kind, sidecar_subject, without_redrawn_plots
from ragdiag.report.html.page import Section


@dataclass
class ReportRequest:
    inputs: list[Path]
    out: Path
    title: str = "ragdiag report"


@dataclass
class ReportResult:
    """The page's sections (in reading order) and the notes on the files left out."""

    out: Path
    sections: list[Section]
    notes: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        """The section kinds in the order they first appear."""
        return list(dict.fromkeys(s.kind for s in self.sections))


def _load(path: Path) -> Any:
    import orjson

    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise RagdiagError(f"{path}: not valid JSON ({err}){_what_it_is(path)}") from None
    except OSError as err:
        raise RagdiagError(f"{path}: cannot read ({err.strerror})") from None


# what turns an input of a run into a result the report reads
_MAKES_A_RESULT = {
    "run": "ragdiag evaluate --run {path} --qrels QRELS --out evaluate.json",
    "qrels": "ragdiag evaluate --run RUN --qrels {path} --out evaluate.json",
    "table": "ragdiag compare --base {path} --new OTHER --out compare.json, or ragdiag correlate --table {path}",
}


def _what_it_is(path: Path) -> str:
    """``; this looks like JSON lines with fields query_id, ids, scores — a run file: …`` for a file the
    report cannot read as JSON, with the command that makes a result of it."""
    from ragdiag.data.own_inputs import KIND_LABELS, guess_kind
    from ragdiag.data.records import read_records

    try:
        records = read_records(path)
    except RagdiagError:
        return ""
    kind = guess_kind(records)
    text = f"; this looks like {records.looks_like()}"
    if kind in _MAKES_A_RESULT:
        text += f" — a {KIND_LABELS[kind]}, an input, not a result; make a result of it with `{_MAKES_A_RESULT[kind].format(path=path)}`"
    return text


def collect(paths: list[Path]) -> tuple[list[Input], list[str]]:
    """The recognised inputs in the order given (a folder's files sorted by name), each with the
    manifests beside its graded file, and notes about files of a folder that were left out."""
    inputs: list[Input] = []
    notes: list[str] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".json", ".png")):
                if child.suffix == ".png":
                    inputs.append(Input("plot", child, child.read_bytes()))
                    continue
                try:
                    doc = _load(child)
                except RagdiagError as err:
                    notes.append(f"skipped {err}")
                    continue
                kind = kind_of(doc)
                if kind is None and own_input_kind(doc):
                    notes.append(f"skipped {child}: {own_input_kind(doc)} (an input of the run, no section)")
                elif kind is None:
                    notes.append(f"skipped {child}: not a ragdiag result")
                else:
                    inputs.append(Input(kind, child, doc))
        elif path.is_file():
            if path.suffix == ".png":
                inputs.append(Input("plot", path, path.read_bytes()))
                continue
            doc = _load(path)
            kind = kind_of(doc)
            if kind is None:
                keys = ", ".join(list(doc)[:8]) if isinstance(doc, dict) else type(doc).__name__
                raise RagdiagError(f"{path}: not a ragdiag result the report knows (top-level: {keys}); expected "
                                   "correlate, robustness, sweep, evaluate, probe, generate/grade manifest or graded JSON")
            inputs.append(Input(kind, path, doc))
        else:
            raise RagdiagError(f"{path}: no such file or folder")
    if not inputs:
        raise RagdiagError("no result found in " + ", ".join(map(str, paths)))
    for item in inputs:
        item.sidecars = sidecar_manifests(sidecar_subject(item.kind, item.doc, item.path))
    return without_redrawn_plots(inputs, notes), notes


def build_report(paths: list[Path], title: str = "ragdiag report") -> tuple[str, list[Section], list[str]]:
    """The HTML text of the inputs at ``paths``, its sections (verdicts first, plots last) and notes on skipped files."""
    from ragdiag.report.html.build import build_page

    inputs, notes = collect(paths)
    html, sections = build_page(inputs, [str(p) for p in paths], title)
    return html, sections, notes


def run(request: ReportRequest) -> ReportResult:
    from ragdiag.io.writer import guard_outputs, write_text

    guard_outputs([request.out], request.inputs)
    html, sections, notes = build_report(request.inputs, request.title)
    write_text(request.out, html, inputs=request.inputs)
    return ReportResult(request.out, sections, notes)
