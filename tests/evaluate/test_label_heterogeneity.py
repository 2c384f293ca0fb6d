"""Label heterogeneity (paper 001 §3.5) against a per-query count written from the qrels text,
on the bundled graded fixture and on the MS MARCO graded labels when ../shared is present."""

from __future__ import annotations

import collections
import statistics
from pathlib import Path

import pytest

from ragdiag.evaluate.inputs import load_graded_qrels
from ragdiag.evaluate.label_heterogeneity import label_heterogeneity
from ragdiag.report.evaluate_report import heterogeneity_line

ROOT = Path(__file__).resolve().parents[2]
MSMARCO_GRADED = ROOT.parent / "shared" / "data" / "msmarco-passage-sample" / "qrels" / "graded_thesis.tsv"


def _reference(path: Path) -> dict:
    """Per query: grades of the judged passages, read as text (TREC 4 columns or TSV with a header)."""
    per_query: dict[str, list[int]] = collections.defaultdict(list)
    for line in path.read_text().splitlines():
        cells = line.split()
        if len(cells) == 4:
            query, doc, grade = cells[0], cells[2], cells[3]
        elif len(cells) == 3:
            query, doc, grade = cells
        else:
            continue
        if grade.lstrip("-").isdigit():
            per_query[query].append(int(grade))
    n5 = [g.count(5) for g in per_query.values()]
    n4 = [g.count(4) for g in per_query.values()]
    prevalence = [(g.count(4) + g.count(5)) / len(g) for g in per_query.values()]
    return {"queries": len(per_query), "n5": n5, "n4": n4, "prev": prevalence}


@pytest.mark.parametrize("path", [ROOT / "fixtures" / "graded-utility" / "qrels.tsv", MSMARCO_GRADED],
                         ids=["fixture", "msmarco-graded"])
def test_matches_a_count_from_the_qrels_text(path):
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared data folder is not beside this clone)")
    qrels = load_graded_qrels(path)
    if qrels.binary:
        pytest.skip("binary qrels carry no grade-4/5 split")
    h = label_heterogeneity(qrels.pool_counts())
    ref = _reference(path)
    assert h.queries == ref["queries"]
    assert h.grade5.median == statistics.median(ref["n5"]) and h.grade5.mean == pytest.approx(statistics.mean(ref["n5"]))
    assert h.grade4.median == statistics.median(ref["n4"])
    assert h.grade45.median == statistics.median([a + b for a, b in zip(ref["n4"], ref["n5"])])
    assert h.prevalence45.median == pytest.approx(statistics.median(ref["prev"]), abs=1e-12)
    assert h.queries_without_grade5 == sum(1 for x in ref["n5"] if x == 0)
    line = heterogeneity_line(h)
    assert line.startswith(f"label heterogeneity over {h.queries} queries") and "%" in line
