"""The fast correlation path equals the straightforward per-sample implementation (within 1e-9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ragdiag.data.graded_table import GradedSource, build_graded_table
from ragdiag.metrics.alpha_grid import parse_alpha_grid
from ragdiag.metrics.analysis import CorrelateOptions, run_correlate
from ragdiag.metrics.correlation import KINDS, correlation_curves
from tests.metrics.reference import correlate_values, reference_correlate, reference_maxima, segment_samples, values_at
from tools.synthetic import synthetic_graded

GRID = "l12^0.75"
MEASURES = ("F", "E", "T", "T'", "nDCG", "P", "R")


def _compare(records: list[dict], mode: str, min_samples: int, exact: bool = True) -> int:
    table = build_graded_table(records, "synthetic", GradedSource("synthetic"))
    opts = CorrelateOptions(segments=mode, min_samples=min_samples, measures=MEASURES, alpha_grid=GRID,
                            exact_ties=exact)
    fast = run_correlate(table, opts)["results"]
    slow = reference_maxima(records, mode, min_samples, MEASURES, KINDS, parse_alpha_grid(GRID), exact=exact)
    assert {(r["segment"], r["measure"]) for r in fast} == set(slow)
    compared = 0
    samples = {m: segment_samples(records, mode, m) for m in MEASURES}
    values: dict[tuple, list[float]] = {}
    grid = set(parse_alpha_grid(GRID).tolist())
    for row in fast:
        ref = slow[(row["segment"], row["measure"])]
        assert row["n"] == ref["n"]
        for kind in KINDS:
            value, alpha = row[kind]["value"], row[kind]["alpha"]
            ref_value, ref_alpha = ref[kind]
            if ref_value is None:
                assert value is None, (row["segment"], row["measure"], kind)
                continue
            assert math.isclose(value, ref_value, rel_tol=0, abs_tol=1e-9), (row["segment"], row["measure"], kind, value, ref_value)
            compared += 1
            # scipy at the reported α (none for P, R, nDCG) gives the reported value
            assert alpha is None or alpha in grid
            segment_rows = samples[row["measure"]][row["segment"]]
            at = (row["segment"], row["measure"], alpha)  # the kinds often peak at the same α
            if at not in values:
                values[at] = values_at(row["measure"], segment_rows, alpha, exact)
            attained = correlate_values(kind, values[at], segment_rows)
            assert math.isclose(attained, value, rel_tol=0, abs_tol=1e-9), (row["segment"], row["measure"], kind, attained, value)
    return compared


@pytest.mark.parametrize(("mode", "exact"), [("ratio", True), ("nw", True), ("ratio", False)])
def test_fast_path_matches_reference_on_thousands_of_random_samples(mode, exact):
    """Exact ties (the default) and --float-ties (float64 bits) each against the per-sample reference:
    every maximum against the numpy definitions over all α, every reported value against scipy at its α.
    12 queries: 2,107 rows, 62 ratio segments and 13 N≤K ones of 12 rows or more."""
    records = synthetic_graded(n_queries=12, seed=7, keep=0.85)  # keep < 1: some E siblings missing
    assert len(records) > 2000
    assert _compare(records, mode, min_samples=12, exact=exact) > 100


def test_numpy_reference_equals_the_scipy_loop():
    """The oracle above (numpy definitions, all α at once) against the loop of one scipy call per α and
    kind, with exact and with float ties (32 segment × measure cells, many ties: small enough for the loop)."""
    records = synthetic_graded(n_queries=14, seed=2, keep=0.9, configs=(("M", 30, 2, range(2, 7)),), embedders=("AM",))
    alphas = parse_alpha_grid("l4^0.75")
    for exact in (True, False):
        loop = reference_correlate(records, "ratio", 8, MEASURES, KINDS, alphas, exact=exact)
        numpy = reference_maxima(records, "ratio", 8, MEASURES, KINDS, alphas, exact=exact)
        assert loop.keys() == numpy.keys() and len(loop) > 20
        for key, entry in loop.items():
            assert numpy[key]["n"] == entry["n"]
            for kind in KINDS:
                value, other = entry[kind][0], numpy[key][kind][0]
                assert (value is None) == (other is None), (key, kind)
                assert value is None or other == pytest.approx(value, abs=1e-12), (key, kind)


def test_constant_inputs_give_null_not_a_maximum():
    records = synthetic_graded(n_queries=6, seed=3, configs=(("M", 30, 2, range(2, 6)),), embedders=("AM",))
    for r in records:
        r["grade"] = 3  # constant grade: every correlation undefined
    table = build_graded_table(records, "const", GradedSource("const"))
    rows = run_correlate(table, CorrelateOptions(min_samples=1, alpha_grid=GRID))["results"]
    assert rows and all(row[k]["value"] is None and row[k]["alpha"] is None for row in rows for k in KINDS)


def test_constant_measure_gives_null():
    records = synthetic_graded(n_queries=30, seed=4, configs=(("M", 30, 2, [2]),), embedders=("AM",))
    for r in records:  # every top-2 holds both positives: all measures constant
        r["inK"], r["rank"] = [1, 1], [0, 1]
    table = build_graded_table(records, "c", GradedSource("c"))
    rows = run_correlate(table, CorrelateOptions(min_samples=1, alpha_grid=GRID, measures=("F", "T", "nDCG")))["results"]
    assert all(row["spearman"]["value"] is None for row in rows)


def test_kernel_matches_scipy_with_float_weights_and_ties():
    rng = np.random.default_rng(11)
    for _ in range(20):
        x = rng.integers(0, 7, 400) / 7.0
        y = rng.integers(1, 6, 400).astype(float) / 2
        values, tuple_of = np.unique(x, return_inverse=True)
        grades, grade_of = np.unique(y, return_inverse=True)
        counts = np.zeros((len(values), len(grades)))
        np.add.at(counts, (tuple_of, grade_of), 1)
        got = correlation_curves(values[None, :], counts, grades, KINDS)
        expected = {
            "spearman": stats.spearmanr(x, y)[0], "pearson": stats.pearsonr(x, y)[0],
            "kendall_b": stats.kendalltau(x, y)[0], "kendall_c": stats.kendalltau(x, y, variant="c")[0],
        }
        for kind in KINDS:
            assert got[kind][0] == pytest.approx(expected[kind], abs=1e-12)


def test_float_semantics_last_bit_differences_are_not_ties():
    # F(a) for (n, K, Np) = (1, 3, 3) and (3, 9, 9) is 1/3 in real arithmetic, but the float
    # expressions differ in the last bit for some α (docs/methods.md#3-correlation-analysis).
    from ragdiag.measures.sample import f_measure

    a = parse_alpha_grid("l350^0.95")
    left, right = f_measure(1.0, 3.0, 3.0, a), f_measure(3.0, 9.0, 9.0, a)
    assert np.all(np.isclose(left, right, rtol=0, atol=1e-15))
    assert np.any(left != right)  # some α give different bits: not tied in paper-parity mode
    assert not math.isnan(float(left[1]))


def test_exact_ties_option_merges_values_equal_in_real_arithmetic():
    from ragdiag.metrics.measure_tables import RowColumns, distinct_table

    n, k, np_ = np.array([1, 3, 0]), np.array([3, 9, 3]), np.array([3, 9, 3])
    cols = RowColumns(n, k, np_, np.zeros(3, dtype=np.int64), np.zeros(3))
    grade = np.array([2.0, 4.0, 1.0])
    alphas = parse_alpha_grid("l350^0.95")
    paper = distinct_table("F", cols, grade, alphas, exact_ties=False)
    exact = distinct_table("F", cols, grade, alphas, exact_ties=True)
    # F(1,3,3) and F(3,9,9) are both 1/3 in real arithmetic: always one group with --exact-ties,
    # but split at some α in paper-parity mode, where the last bits differ.
    # distinct tuples are ordered by (n, K, Np): 0 = (0,3,3), 1 = (1,3,3), 2 = (3,9,9)
    assert np.all(exact.groups.group[:, 1] == exact.groups.group[:, 2])
    assert np.any(paper.groups.group[:, 1] != paper.groups.group[:, 2])


def test_batched_tables_equal_one_at_a_time():
    rng = np.random.default_rng(5)
    values = rng.integers(0, 4, size=(30, 8)) / 4.0  # 30 α rows, 8 tuples, many ties
    counts = rng.integers(0, 6, size=(3, 8, 5)).astype(np.float64)  # 3 weightings, 5 grade classes
    grades = np.arange(1.0, 6.0)
    batched = correlation_curves(values, counts, grades, KINDS)
    for b in range(3):
        single = correlation_curves(values, counts[b], grades, KINDS)
        for kind in KINDS:
            np.testing.assert_allclose(batched[kind][b], single[kind], rtol=0, atol=1e-12)


def test_expected_grades_of_a_large_file_are_rounded_to_a_bounded_number_of_classes():
    """Expected grades (logprobs) are floats: with more than 401 distinct values they are rounded to 0.01
    for the tuple × grade tables (whose memory grows with the classes); Spearman moves by at most a few
    1e-4 against scipy on the exact floats, and fewer distinct values are used as given."""
    from ragdiag.metrics.measure_tables import MAX_GRADE_CLASSES, grade_classes

    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, 3000) / 5
    grade = np.clip(1 + 3 * x + rng.normal(0, 0.8, 3000), 1, 5)
    classes, of = grade_classes(grade)
    assert len(classes) <= MAX_GRADE_CLASSES and np.allclose(classes[of], grade, atol=0.005)
    distinct, tuple_of_row = np.unique(x, return_inverse=True)
    table = np.zeros((len(distinct), len(classes)))
    np.add.at(table, (tuple_of_row, of), 1)
    rounded = correlation_curves(distinct[None, :], table, classes, ("spearman",))["spearman"][0]
    assert rounded == pytest.approx(stats.spearmanr(x, grade).statistic, abs=5e-4)
    few = np.round(grade[:300] * 3) / 3  # means of 3 whole repeats: 13 classes, kept exactly
    assert np.array_equal(grade_classes(few)[0], np.unique(few))
