"""results/ holds the result types and nothing else (issue 30): every class is a JsonRecord (but the
listed exceptions), the package imports nothing of ragdiag outside itself, no function in it returns
a dict but the JSON views, and no module of ragdiag keeps to_dict / as_dict / from_dict."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.import_graph import folder_graph
from tests.architecture.source_trees import nodes, tree

PACKAGE = Path(__file__).resolve().parents[2] / "ragdiag"
RESULTS = PACKAGE / "results"
# classes of results/ that are not JsonRecords, and why
NOT_RECORDS = {
    "JsonRecord": "the base itself",
    "ProbeRun": "its JSON is one result object or a list of them (each a JsonRecord)",
    "CollectTotals": "a Protocol: what BatchResult reads of llm.batch.Collected (results/ imports no library)",
    "Stamp": "a Protocol: the run record BatchResult stamps (io.run_record.RunRecord)",
}
# functions of results/ returning a dict: the JSON views
JSON_VIEWS = {"to_json", "sections", "skip_counts"}


def _trees() -> list[tuple[str, ast.Module]]:
    return [(p.name, tree(p)) for p in sorted(RESULTS.glob("*.py"))]


def _is_record(node: ast.ClassDef, records: set[str]) -> bool:
    return any(ast.unparse(b) in records for b in node.bases)


def test_every_class_is_a_json_record_but_the_listed_ones():
    classes = [node for _, tree in _trees() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    records = {"JsonRecord"}
    for _ in range(5):  # subclasses of subclasses (SweepPoint(RobustnessPoint))
        records |= {c.name for c in classes if _is_record(c, records)}
    others = sorted(c.name for c in classes if c.name not in records and c.name not in NOT_RECORDS)
    assert others == [], f"classes of results/ that are not JsonRecords: {others}"
    assert set(NOT_RECORDS) <= {c.name for c in classes}, "an exception listed here is gone: drop it"


def test_results_import_nothing_of_ragdiag_outside_itself():
    assert folder_graph().get("results", set()) <= {"results"}


def test_no_function_of_results_returns_a_dict_but_the_json_views():
    found = [f"{name}:{node.lineno} {node.name}" for name, tree in _trees() for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef) and node.returns is not None
             and ast.unparse(node.returns).startswith("dict") and node.name not in JSON_VIEWS]
    assert found == []


def test_no_module_keeps_to_dict_as_dict_or_from_dict():
    found = [f"{p.relative_to(PACKAGE)}:{node.lineno} {node.name}" for p in sorted(PACKAGE.rglob("*.py"))
             for node in nodes(p)
             if isinstance(node, ast.FunctionDef) and node.name in {"to_dict", "as_dict", "from_dict"}]
    assert found == []
