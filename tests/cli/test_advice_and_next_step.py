"""Advice never defines a measure by itself, and correlate on the bundled sample ends with how to run
the same on your own data (issue 34)."""

from __future__ import annotations

import csv
import random
import re

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.measures import registry
from ragdiag.report.correlate_guide import OWN_DATA_LINE, _reading

runner = CliRunner()


@pytest.mark.parametrize("measure", registry.CORRELATE.names)
@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, None])
def test_every_registry_measure_reads_as_something_else(measure, alpha):
    meaning, lever = _reading(measure, alpha)
    assert meaning is not None and meaning != measure and lever != measure


def test_a_column_of_your_own_table_is_not_defined_by_itself(tmp_path):
    rng = random.Random(0)
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["qid", "grade", "recall@10", "ndcg@10"])
        for i in range(120):
            recall = rng.random()
            writer.writerow([f"q{i}", max(1, min(5, round(1 + 4 * recall + rng.gauss(0, 0.5)))), f"{recall:.3f}",
                             f"{rng.random():.3f}"])
    done = runner.invoke(app, ["correlate", "--table", str(table), "--measure-cols", "recall@10,ndcg@10"],
                         env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    advice = next(line for line in done.stdout.splitlines() if line.startswith("Advice:"))
    assert advice.startswith("Advice: recall@10 tracks answer quality best")
    assert not re.search(r"(\S+)(?: at α≈\S+)? (?:is|are) \1\b", advice)
    assert "Your own data:" not in done.stdout  # already on your own data


def test_correlate_on_the_sample_ends_with_the_own_data_line():
    done = runner.invoke(app, ["correlate", "--dataset", "msmarco", "--offline"], env={"COLUMNS": "300"})
    assert done.exit_code == 0, done.output
    assert " ".join(done.stdout.split()).endswith(OWN_DATA_LINE)
    for command in ("ragdiag pipeline --corpus", "ragdiag correlate --graded", "ragdiag correlate --table"):
        assert command in OWN_DATA_LINE
    assert "Advice: F and E (tied) at α≈0 are recall:" in done.stdout  # exact ties: the wide verdict is a tie
