"""Judge reliability (ICC) and the attenuation-corrected correlation with its joint bootstrap."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ragdiag.metrics.judge_reliability import corrected, icc_oneway, reliability_summary
from ragdiag.metrics.measure_tables import RowColumns, distinct_table
from ragdiag.metrics.noise_correction import (
    corrected_interval,
    joint_bootstrap,
    resample_ratings,
)

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; their Table 4 gives
# ICC(1,1) = 0.17 and ICC(1,k) = 0.44.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)


def test_icc_matches_shrout_fleiss_table_4():
    icc1, icck = icc_oneway(SHROUT_FLEISS)
    assert round(float(icc1), 2) == 0.17
    assert round(float(icck), 2) == 0.44


def test_weights_equal_repeating_items_and_nan_is_missing():
    ratings = np.array([[1, 2, np.nan], [3, 3, 4], [5, 4, 5], [2, 2, 1]])
    weights = np.array([2, 1, 3, 1])
    repeated = np.repeat(ratings, weights, axis=0)
    assert np.allclose(icc_oneway(ratings, weights), icc_oneway(repeated))
    assert np.isnan(icc_oneway(np.array([[3.0, 3.0], [3.0, 3.0]]))[0])  # no spread: undefined


def test_correction_caps_and_refuses_non_positive_reliability():
    assert corrected(0.4, 0.64) == 0.5
    assert corrected(0.9, 0.5) == 1.0
    assert np.isnan(corrected(0.3, 0.0)) and np.isnan(corrected(0.3, -0.2))


def test_summary_reports_alpha_next_to_icc():
    summary = reliability_summary(SHROUT_FLEISS, "repeats")
    assert summary["used"] == "icc_1_k" and summary["reliability"] == summary["icc_1_k"]
    assert summary["alpha_ordinal"] is not None and summary["ratings_per_row"] == 4.0


def test_expected_grades_get_interval_alpha_not_ordinal():
    """Logprob grades are floats: α at the interval level (closed form, equal to the krippendorff package
    on a small matrix), never the ordinal α whose value × value arrays would not fit for thousands of floats."""
    import krippendorff

    ratings = SHROUT_FLEISS / 2 + 0.013 * np.arange(4)  # 24 distinct non-integer values
    summary = reliability_summary(ratings, "repeats")
    assert summary["alpha_ordinal"] is None
    expected = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement="interval")
    assert abs(summary["alpha_interval"] - expected) < 1e-12
    big = np.random.default_rng(0).uniform(1, 5, (20_000, 3))  # 60,000 distinct values: fast, O(values) memory
    assert reliability_summary(big, "repeats")["alpha_interval"] < 0.05


def test_resampled_ratings_keep_each_rows_values_and_missing_count():
    ratings = np.array([[1, 5, np.nan], [2, 2, 2], [4, np.nan, np.nan]])
    drawn = resample_ratings(ratings, np.random.default_rng(0), 50)
    assert np.all(np.isnan(drawn[:, 0, 2])) and np.all(np.isnan(drawn[:, 2, 1:]))
    assert set(np.unique(drawn[:, 0, :2])) <= {1.0, 5.0} and np.all(drawn[:, 1] == 2) and np.all(drawn[:, 2, 0] == 4)


def test_resampling_does_not_depend_on_the_order_of_the_repeats():
    ratings = np.array([[1, 5, 3], [2, np.nan, 4], [4, 4, 2]])
    shuffled = np.array([[5, 3, 1], [np.nan, 4, 2], [2, 4, 4]])
    first = resample_ratings(ratings, np.random.default_rng(3), 20)
    again = resample_ratings(shuffled, np.random.default_rng(3), 20)
    assert np.array_equal(first, again, equal_nan=True)


def _simulated_cell(rng: np.random.Generator, n: int, noise_p: float, repeats: int):
    """Rows = queries; x = n_pos/5 (6 values); true grade t in {2, 3, 4} rising with x; each repeat
    t + e with e in {-1, 0, +1}, P(e = ±1) = noise_p / 2 (noise variance noise_p)."""
    n_pos = rng.integers(0, 6, n)
    truth = np.clip(np.round(2 + 0.4 * n_pos + rng.normal(0, 0.8, n)) , 2, 4)
    noise = rng.choice([-1.0, 0.0, 1.0], size=(n, repeats), p=[noise_p / 2, 1 - noise_p, noise_p / 2])
    ratings = truth[:, None] + noise
    cols = RowColumns(n_pos, np.full(n, 5), np.full(n, 5), np.full(n, -1), np.zeros(n))
    data = distinct_table("P", cols, ratings.mean(axis=1), np.zeros(1))
    return data, ratings, n_pos / 5, truth


def _population_correlation(noise_free_draws: int = 1_000_000) -> float:
    rng = np.random.default_rng(12345)
    n_pos = rng.integers(0, 6, noise_free_draws)
    truth = np.clip(np.round(2 + 0.4 * n_pos + rng.normal(0, 0.8, noise_free_draws)), 2, 4)
    return float(np.corrcoef(n_pos, truth)[0, 1])


def test_corrected_correlation_recovers_the_noise_free_one_by_simulation():
    """200 seeded runs: grades = true quality + judge noise of known variance (0.6), 3 repeats.
    The corrected Pearson r's 95% joint-bootstrap interval must cover the noise-free correlation
    in ≥ 90% of runs, while the raw r is visibly attenuated."""
    target = _population_correlation()
    runs, n, replicates = 200, 120, 200
    covered, raws, estimates = 0, [], []
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        data, ratings, x, _ = _simulated_cell(rng, n, noise_p=0.6, repeats=3)
        raw = float(np.corrcoef(x, ratings.mean(axis=1))[0, 1])
        reliability = float(icc_oneway(ratings)[1])
        estimate = float(corrected(raw, reliability))
        cell = SimpleNamespace(rows=np.arange(n), data=data)
        draws = joint_bootstrap([cell], np.arange(n), n, ratings, ratings.mean(axis=1), "repeats", ("pearson",),
                                replicates, seed)[0]["pearson"]
        low, high = corrected_interval(estimate, draws, raw)
        covered += low <= target <= high
        raws.append(raw)
        estimates.append(estimate)
    coverage = covered / runs
    print(f"\nnoise-free r = {target:.3f}; mean raw r {np.mean(raws):.3f}, mean corrected r {np.mean(estimates):.3f}; "
          f"corrected 95% interval covers the noise-free r in {coverage:.1%} of {runs} seeded runs")
    assert coverage >= 0.90
    assert np.mean(raws) < target - 0.05 and abs(np.mean(estimates) - target) < 0.03
