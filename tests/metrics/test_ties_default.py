"""Exact ties are ``correlate``'s default (issue 28 §2): on the bundled sample, in the segments where
F ranks exactly like recall, F's best Spearman is recall's (0.064 at K/Np = 5, 0.098 at K/Np = 3)
and the wide-segment verdict is a tie; ``--float-ties`` gives the paper code's float-noise numbers
(0.133, 0.143, F ahead of E by 0.0015). The sample's grades are simulated (see its README)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

SAMPLE = ["correlate", "--dataset", "msmarco", "--offline", "--corr", "spearman", "--format", "json"]


def _run(*flags: str) -> dict:
    result = CliRunner().invoke(app, [*SAMPLE, *flags])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _f_best(doc: dict, ratio: str) -> float:
    return next(r["spearman"]["value"] for r in doc["results"]
                if r["segment"] == f"L6^M^KtoN^{ratio}" and r["measure"] == "F")


def _wide(doc: dict) -> dict:
    return next(v for v in doc["verdicts"] if v["side"] == "wide")


@pytest.fixture(scope="module")
def default():
    return _run()


def test_default_ties_values_equal_in_exact_arithmetic(default):
    assert default["meta"]["ties"] == "exact to 12 significant digits"
    assert _f_best(default, "5.0") == pytest.approx(0.064, abs=5e-4)
    assert _f_best(default, "3.0") == pytest.approx(0.098, abs=5e-4)
    wide = _wide(default)
    assert set(wide["tied"]) == {"F", "E"} and wide["lead"] < 5e-4  # a tie, not "F leads"


def test_float_ties_reproduce_the_paper_code_and_its_noise():
    doc = _run("--float-ties")
    assert doc["meta"]["ties"].startswith("float64 bits")
    assert _f_best(doc, "5.0") == pytest.approx(0.133, abs=5e-4)
    assert _f_best(doc, "3.0") == pytest.approx(0.143, abs=5e-4)
    wide = _wide(doc)
    assert wide["best"] == "F" and wide["runner_up"] == "E" and wide["tied"] == ["F"]
    assert wide["lead"] == pytest.approx(0.0015, abs=5e-5)


def test_exact_ties_flag_is_still_accepted_and_is_the_default(default):
    doc = _run("--exact-ties")
    assert doc["results"] == default["results"] and doc["verdicts"] == default["verdicts"]


def test_exact_and_float_ties_together_are_refused():
    result = CliRunner().invoke(app, [*SAMPLE, "--exact-ties", "--float-ties"])
    assert result.exit_code == 2
    assert "--float-ties" in result.output and "Traceback" not in result.output
