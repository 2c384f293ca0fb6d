"""The first screen of ``make run`` (``correlate --dataset msmarco`` on the bundled sample): where the
numbers come from, the verdict in plain words with one line of advice, a legend line for every
measure shown, then the detail table; a tie never has a runner-up."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.report.correlate_guide import LEGEND, advice_line
from ragdiag.report.correlate_report import verdict_table
from ragdiag.results.correlate import CorrelateResult

runner = CliRunner()


@pytest.fixture(scope="module")
def screen() -> str:
    result = runner.invoke(app, ["correlate", "--dataset", "msmarco", "--offline"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_reading_order(screen):
    assert screen.startswith("SIMULATED GRADES (bundled sample): the grades come from a formula, not an LLM")
    order = [screen.index(mark) for mark in ("Verdict", "Advice:", "Measures (n = relevant passages",
                                             "max spearman correlation with the grade")]
    assert order == sorted(order)
    assert "…" not in screen and max(map(len, screen.splitlines())) <= 80


def test_a_legend_line_for_every_measure_shown(screen):
    for measure in ("F", "E", "T", "nDCG"):
        assert re.search(rf"^\s+{measure}\s+{re.escape(LEGEND[measure][:20])}", screen, re.MULTILINE), measure
    result = runner.invoke(app, ["correlate", "--dataset", "msmarco", "--offline", "--measures", "P,R"],
                           env={"COLUMNS": "120"})
    assert "recall@K: the share of all relevant passages" in result.stdout and "precision@K:" in result.stdout
    assert "Van Rijsbergen" not in result.stdout  # F not shown, not explained


def test_advice_names_the_lever(screen):
    advice = " ".join(screen[screen.index("Advice:"):].split("Measures (")[0].split())
    # exact ties (the default): F and E tie on the wide side (F led by 0.0015 only through float noise)
    assert advice.startswith("Advice: F and E (tied) at α≈0 are recall: raising recall@K moves answer quality most "
                             "in wide segments (K ≥ Np)")


def test_a_tie_has_no_runner_up(tmp_path):
    out = tmp_path / "r.json"
    assert runner.invoke(app, ["correlate", "--dataset", "msmarco", "--offline", "--out", str(out)]).exit_code == 0
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(verdict_table(CorrelateResult.from_json(json.loads(out.read_text()))))
    rows = {cells[2]: cells for cells in ([c.strip() for c in line.split("│")] for line in console.export_text().splitlines())
            if len(cells) > 8}
    assert rows["narrow"][4:7] == ["E = F = T (tie)", "0.485", "–"]  # best, mean, runner-up
    assert rows["wide"][4:7] == ["F = E (tie)", "0.250", "–"]  # exact ties: no float-noise lead


def test_advice_for_ties_only_and_without_verdict():
    tie = {"subset": "M", "side": "narrow", "kind": "spearman", "best": "E", "best_mean": 0.4, "segments": 2,
           "runner_up": "F", "runner_up_mean": 0.4, "lead": 0.0, "lead_holds": None, "tied": ["E", "F", "T"]}
    report = {"meta": {"measures": ["F", "E", "T"]}, "verdicts": [tie],
              "results": [{"segment": "L6^M^KtoN^0.5", "measure": "E", "side": "narrow",
                           "spearman": {"value": 0.4, "alpha": 0.0}}]}
    assert advice_line(CorrelateResult.from_json(report)) == ("Advice: E, F and T (tied) at α≈0 are recall (Np estimated from the ranking): "
                                   "raising recall@K moves answer quality most in narrow segments (K < Np)")
    assert advice_line(CorrelateResult.from_json({**report, "verdicts": []})) is None
