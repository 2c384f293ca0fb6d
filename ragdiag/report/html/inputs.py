"""Which result files the report is given, and what kind each is (recognised by its JSON keys).

Kinds: ``correlate`` (results + verdicts), ``calibrate`` (agreement + estimates), ``robustness`` / ``sweep`` (points), ``evaluate`` (runs +
params), ``probe-names`` (base + ablations), ``probe-names-queries`` (``probe names --queries``:
detected + impacts), ``probe-noise`` (levels), ``llm-run`` (a generate /
grade / pipeline manifest: summary + run or failures), ``graded`` (a list of samples_graded rows)
``corpus-run`` (``corpus_run.json`` of ``pipeline --corpus``), ``clq`` (``meta.command`` ``ragdiag clq``, or
configs + frontier + choices), ``dynamic-k`` (``meta.command`` ``ragdiag dynamic-k``, or signal + policies)
``compare`` (``meta.command`` ``ragdiag compare``) and ``plot`` (a PNG in a run folder). A run folder contributes the files it holds; a file given by
name that is none of these is an error naming it. The files are read by :mod:`ragdiag.commands.report`;
this module classifies what it read and opens none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("correlate", "robustness", "sweep", "evaluate", "probe-names", "probe-names-queries", "probe-noise", "llm-run",
         "graded", "corpus-run", "plot", "calibrate", "clq", "dynamic-k", "triage", "compare")


@dataclass
class Input:
    """One result given to the report, read by the command (:mod:`ragdiag.commands.report`)."""

    kind: str
    path: Path
    doc: Any  # parsed JSON, or the PNG bytes for a plot
    sidecars: list[Any] = field(default_factory=list)  # parsed manifests beside its graded file (sidecar_subject)


def _probe_kind(item: Any) -> str | None:
    if isinstance(item, dict) and "ablations" in item and "base" in item:
        return "probe-names"
    if isinstance(item, dict) and "levels" in item and "embedder" in item:
        return "probe-noise"
    return None


def kind_of(doc: Any) -> str | None:
    """The result kind of a parsed JSON document, or None."""
    if isinstance(doc, list):
        if doc and all(isinstance(r, dict) and "grade" in r and "inK" in r for r in doc[:50]):
            return "graded"
        kinds = {_probe_kind(item) for item in doc}
        return kinds.pop() if len(kinds) == 1 and None not in kinds else None
    if not isinstance(doc, dict):
        return None
    if "results" in doc and "verdicts" in doc:
        return "correlate"
    if "agreement" in doc and "estimates" in doc:
        return "calibrate"
    if "points" in doc and isinstance(doc["points"], list):
        command = str((doc.get("meta") or {}).get("command", "")) + str((doc.get("run_record") or {}).get("command", ""))
        return "sweep" if "sweep" in command or "controls" in doc else "robustness"
    if "runs" in doc and "params" in doc:
        return "evaluate"
    named = doc["meta"].get("command") if isinstance(doc.get("meta"), dict) else None
    if named == "ragdiag compare":
        return "compare"
    if named == "ragdiag clq" or {"configs", "frontier", "choices"} <= set(doc):
        return "clq"
    if named == "ragdiag dynamic-k" or {"signal", "policies"} <= set(doc):
        return "dynamic-k"
    if named == "ragdiag triage" or {"queries", "causes", "calls", "cost"} <= set(doc):
        return "triage"
    if "summary" in doc and ("run" in doc or "failures" in doc):
        return "llm-run"
    if str((doc.get("meta") or {}).get("command", "")) == "ragdiag pipeline --corpus":
        return "corpus-run"
    if "detected" in doc and "impacts" in doc:
        return "probe-names-queries"
    return _probe_kind(doc)


def own_input_kind(doc: Any) -> str | None:
    """A ragdiag file that is an input to a later stage, not a result: texts or ranked samples."""
    if isinstance(doc, list) and doc and all(isinstance(r, dict) for r in doc[:50]):
        if all({"q", "p", "n"} <= set(r) for r in doc[:50]):
            return "texts samples"
        if all({"rank", "Nc", "Np"} <= set(r) for r in doc[:50]):
            return "ranked samples"
    return None


def sidecar_subject(kind: str, doc: Any, path: Path) -> str | None:
    """The graded file whose manifest (beside it) tells where a section's grades came from: the
    graded file itself, the ``meta.source`` of a correlate result, the ``meta.graded`` of a
    calibrate result; None for the other kinds."""
    if kind == "graded":
        return str(path)
    meta = doc.get("meta") if isinstance(doc, dict) else None
    if not isinstance(meta, dict):
        return None
    value = meta.get("source") if kind == "correlate" else meta.get("graded") if kind == "calibrate" else None
    return None if value is None else str(value)


DRAWING_KINDS = ("correlate", "robustness", "sweep", "probe-names", "probe-noise", "clq", "dynamic-k", "compare")


def without_redrawn_plots(inputs: list[Input], notes: list[str]) -> list[Input]:
    """PNGs beside a result whose section redraws its plots (robustness, sweep, probes, correlate, clq,
    dynamic-k) would show twice: they are left out, with a note."""
    drawn = {item.path.parent for item in inputs if item.kind in DRAWING_KINDS}
    kept = []
    for item in inputs:
        if item.kind == "plot" and item.path.parent in drawn:
            notes.append(f"skipped {item.path}: its plot is redrawn from the result beside it")
        else:
            kept.append(item)
    return kept
