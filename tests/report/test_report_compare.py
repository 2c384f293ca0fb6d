"""``ragdiag report`` on the result of ``ragdiag compare --out`` (written by the real command on the
bundled fixture): the gate's decision first, one table row per metric, the forest plot, the planning
line and the run record; a wrong field is one error line."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.report.compare_report import metric_line, summary_lines
from ragdiag.report.html.inputs import kind_of
from ragdiag.results.compare import CompareResult
from tests.report.tamper import assert_report_refuses

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "compare"
runner = CliRunner()


@pytest.fixture(scope="module")
def compare_json(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compare") / "compare.json"
    result = runner.invoke(app, ["compare", "--base", str(FIX / "base.jsonl"), "--new", str(FIX / "new.trec"),
                                 "--qrels", str(FIX / "qrels.tsv"), "--plan", "--out", str(out)])
    assert result.exit_code == 1, result.output
    return out


def _text(fragment: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_compare_section_leads_with_the_gate(compare_json, tmp_path):
    doc = json.loads(compare_json.read_text())
    assert kind_of(doc) == "compare"
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(compare_json), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    start = page.index('data-kind="compare"')
    section = page[start:page.index("</section>", start)]
    assert "Compare: the regression gate — FAIL" in section
    typed = CompareResult.from_json(doc)
    box = re.search(r'<div class="verdict failing"><strong>Decision</strong><ul>(.*?)</ul></div>', section).group(1)
    items = [_text(item) for item in re.findall(r"<li>(.*?)</li>", box)]
    assert items == summary_lines(typed)[:1 + len(typed.metrics)]
    assert items[1] == metric_line(typed.metrics[0], typed)
    planning = re.search(r'<div class="verdict"><strong>Planning</strong><ul>(.*?)</ul></div>', section).group(1)
    assert _text(planning).startswith("plan — nDCG@10: ")
    assert section.index("Decision") < section.index("<table") < section.index('<img alt="forest plot')
    body = section[section.index("<tbody>"):section.index("</tbody>")]
    rows = [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)] for row in re.findall(r"<tr>(.*?)</tr>", body)]
    assert [row[:2] for row in rows] == [[m["decision"], label] for m, label in
                                         zip(doc["metrics"], ("nDCG@10", "RA-nWG@10", "Recall@20"))]
    assert "<summary>run_record</summary>" in section and "ragdiag compare" in section
    assert "new.trec against base.jsonl: 60 paired queries" in _text(section)  # what was compared (issue 42)


def test_a_wrong_field_is_one_error_line(compare_json, tmp_path):
    doc = json.loads(compare_json.read_text())
    assert_report_refuses(doc, ["metrics", 0, "ci_low"], "low", "metrics[0].ci_low", tmp_path / "bad.json")
    assert_report_refuses(doc, ["meta", "max_drop"], KeyError, "meta.max_drop", tmp_path / "bad2.json")


def test_a_sequential_compare_draws_its_confidence_sequences(tmp_path):
    """Issue 42: the sequence of bounds of ``compare --sequential`` is drawn in the report, after the forest plot."""
    seq = tmp_path / "sequential.json"
    done = runner.invoke(app, ["compare", "--base", str(FIX / "base.jsonl"), "--new", str(FIX / "new.trec"),
                               "--qrels", str(FIX / "qrels.tsv"), "--sequential", "--out", str(seq)])
    assert done.exit_code == 1, done.output
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(seq), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    section = page[page.index('data-kind="compare"'):]
    plot = section.index('<img alt="confidence sequence of Δ per metric against the queries read"')
    assert section.index('<img alt="forest plot') < plot
    assert section[plot:section.index(">", plot)].count("data:image/png;base64,") == 1
