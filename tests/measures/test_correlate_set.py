"""The correlate set of the measure registry (``--measures``): one entry per measure, and everything that lists
measures derives from it (moved from tests/metrics/test_registry.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.measures import registry
from ragdiag.metrics.measure_tables import RowColumns, evaluate


def test_each_measure_is_registered_once_with_every_field():
    assert registry.CORRELATE.names == ("F", "E", "T", "T'", "nDCG", "P", "R")
    for measure in registry.CORRELATE.measures:
        assert measure.label and measure.description and measure.legend and measure.direction == "higher"
    assert registry.ALPHA_MEASURES == ("F", "E", "T", "T'") and registry.PLAIN_MEASURES == ("nDCG", "P", "R")


def test_the_option_parser_and_help_derive_from_the_registry():
    assert registry.parse_measures("T', F,T'") == ("T'", "F")
    with pytest.raises(RagdiagError, match="unknown measure 'Q': expected one of F, E, T, T', nDCG, P, R"):
        registry.parse_measures("F,Q")
    assert all(name in registry.MEASURES_HELP for name in registry.CORRELATE.names)
    assert registry.legend(["nDCG", "unknown", "F"]) == [("nDCG", registry.CORRELATE["nDCG"].legend),
                                                         ("F", registry.CORRELATE["F"].legend)]


def test_every_registered_measure_is_computed():
    """n = 2 relevant of K = 4, Np = 5, S = 3 relevant in the top 2·K: the paper's formulas at α = 0.5."""
    cols = RowColumns(np.array([2]), np.array([4]), np.array([5]), np.array([3]), np.array([0.7]))
    values = {m: float(evaluate(m, cols, np.array([0.5]))[0, 0]) for m in registry.CORRELATE.names}
    assert values == pytest.approx({"F": 2 / 4.5, "E": 2 / (2 + 1.5 + 0.5e-10), "T": 1 - 0.25, "T'": 1 - 1,
                                    "nDCG": 0.7, "P": 0.5, "R": 0.4})


def test_the_registry_imports_no_numpy():
    code = "import sys, ragdiag.measures.registry; print('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
