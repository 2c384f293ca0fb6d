"""Grades with more than 401 distinct values (expected grades) are rounded to 0.01 only where ranks
are computed (issue 28 §2): Spearman and Kendall rank the rounded grades, Pearson reads the grades
as given — in the segment maxima and in every bootstrap replicate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragdiag.data.graded_table import GradedSource, build_graded_table
from ragdiag.metrics.alpha_grid import parse_alpha_grid
from ragdiag.metrics.analysis import CorrelateOptions, run_correlate
from ragdiag.metrics.measure_tables import RowColumns, distinct_table, evaluate
from tools.synthetic import synthetic_graded


@pytest.fixture(scope="module")
def continuous():
    records = [r for r in synthetic_graded(n_queries=24, seed=11) if r["E"] == "AM" and r["Nc"] == 50]
    rng = np.random.default_rng(4)
    for r in records:  # expected grades: continuous on [1, 5], correlated with recall
        r["grade"] = float(np.clip(1 + 4 * sum(r["inK"]) / r["Np"] + rng.normal(0, 0.3), 1, 5))
    table = build_graded_table(records, "synthetic", GradedSource("synthetic"))
    assert np.unique(table.grade).size > 401
    return table


def test_pearson_uses_the_unrounded_grades_and_ranks_the_rounded_ones(continuous):
    from ragdiag.metrics.segments import segment_rows

    opts = CorrelateOptions(segments="pooled", min_samples=10, measures=("F",), alpha_grid="l8^0.7")
    row = max(run_correlate(continuous, opts)["results"], key=lambda r: r["n"])
    seg_of_row, keys, _ = segment_rows(continuous, "pooled")
    rows = seg_of_row == keys.index(row["segment"])
    assert rows.sum() == row["n"] and np.unique(continuous.grade[rows]).size > 401
    cols = RowColumns(continuous.n[rows], continuous.K[rows], continuous.Np[rows], np.zeros(row["n"], dtype=np.int64),
                      np.zeros(row["n"]))
    grade = continuous.grade[rows]
    alphas = parse_alpha_grid("l8^0.7")
    x = {a: evaluate("F", cols, np.array([a]))[0] for a in alphas}
    pearson = max(stats.pearsonr(x[a], grade)[0] for a in alphas)
    assert row["pearson"]["value"] == pytest.approx(pearson, abs=1e-12)  # the grades as given
    rounded = np.round(grade, 2)
    x_exact = {a: np.array([float(f"{v:.12g}") for v in x[a]]) for a in alphas}
    spearman = max(stats.spearmanr(x_exact[a], rounded)[0] for a in alphas)
    kendall = max(stats.kendalltau(x_exact[a], rounded)[0] for a in alphas)
    assert row["spearman"]["value"] == pytest.approx(spearman, abs=1e-12)
    assert row["kendall_b"]["value"] == pytest.approx(kendall, abs=1e-12)
    assert pearson != pytest.approx(max(stats.pearsonr(x[a], rounded)[0] for a in alphas), abs=1e-9)


def test_bootstrap_replicates_read_the_grades_as_given(continuous):
    table = continuous
    cols = RowColumns(table.n, table.K, table.Np, np.zeros(len(table), dtype=np.int64), np.zeros(len(table)))
    data = distinct_table("R", cols, table.grade, np.zeros(1))
    weights = np.random.default_rng(2).integers(0, 3, size=(3, len(table))).astype(np.float64)
    sums, squares = data.grade_moments(weights)
    assert sums.shape == (3, data.counts.shape[0])
    for b in range(3):
        assert sums[b].sum() == pytest.approx(np.sum(weights[b] * table.grade))
        assert squares[b] == pytest.approx(np.sum(weights[b] * table.grade ** 2))
    from ragdiag.metrics.correlation import correlation_curves

    curves = correlation_curves(data.values, data.weighted_counts(weights), data.grades, ("pearson",), data.groups,
                                data.grade_moments(weights))["pearson"]
    recall = (table.n / table.Np).astype(np.float64)
    for b in range(3):
        keep = weights[b] > 0
        expected = stats.pearsonr(np.repeat(recall[keep], weights[b][keep].astype(int)),
                                  np.repeat(table.grade[keep], weights[b][keep].astype(int)))[0]
        assert curves[b][0] == pytest.approx(expected, abs=1e-10)


def test_meta_states_where_the_grades_are_rounded(continuous):
    from ragdiag.metrics.correlate_job import run_correlation

    doc = run_correlation(continuous, CorrelateOptions(segments="pooled", min_samples=10, measures=("R",),
                                                       alpha_grid="l4^0.7"))
    assert "rank correlations" in doc.meta.grade_classes and "Pearson on the grades as given" in \
        doc.meta.grade_classes
