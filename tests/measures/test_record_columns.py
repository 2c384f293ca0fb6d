"""calibrate's slope measures come from the registry's implementations on the graded rows' columns
(:func:`ragdiag.metrics.measure_tables.record_columns`), with the bits of the per-row formulas
P = n/K, R = n/Np and the one-list nDCG that calibrate computed before (issue 38)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragdiag.data.loaders import bundled_sample_path
from ragdiag.io.jsonl import read_json_records
from ragdiag.measures import dcg
from ragdiag.metrics.measure_tables import evaluate, record_columns


def _by_hand(record: dict) -> dict[str, float]:
    """The per-row values as calibrate wrote them by hand: Python division, nDCG of the one list."""
    in_k = record["inK"]
    n = sum(in_k)
    gains = np.array([in_k], dtype=np.float64)
    best = dcg.ones_ideal([n], len(in_k))[0]
    ndcg = float(dcg.dcg(gains, [len(in_k)])[0] / best) if best > 0 else 0.0
    return {"P": n / record["K"], "R": n / record["Np"], "nDCG": ndcg}


def test_registry_values_carry_the_bits_of_the_row_formulas():
    records = read_json_records(bundled_sample_path())[:5000]
    rng = random.Random(7)
    for _ in range(500):  # ragged lists: rows of different K in one padded matrix
        k = rng.randint(1, 25)
        in_k = [rng.randint(0, 1) for _ in range(k)]
        records.append({"inK": in_k, "K": k, "Np": sum(in_k) + rng.randint(1, 4)})
    columns = record_columns(records, ("P", "R", "nDCG"))
    values = {name: evaluate(name, columns, np.empty(0))[0].tolist() for name in ("P", "R", "nDCG")}
    for row, record in enumerate(records):
        assert {name: values[name][row] for name in values} == _by_hand(record)


def test_a_measure_reading_the_sibling_is_refused():
    with pytest.raises(ValueError, match="x·K sibling"):
        record_columns([{"inK": [1], "K": 1, "Np": 1}], ("E",))
