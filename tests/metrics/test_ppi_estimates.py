"""PPI OLS slopes (issue 28): the estimate and its interval use one λ, so the printed estimate is the
centre of its Wald interval and equals ``ppi_py`` called with that λ."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.metrics.ppi_estimates import ols_lambda, slope_estimates

ppi_py = pytest.importorskip("ppi_py", reason="ppi_py (calibrate's dependency) is not installed")


def _grades(seed: int, labelled: int = 30, unlabelled: int = 90):
    """Human grades 1–5 rising with x, a judge biased towards x and noisier (seed 4: the λ that
    ppi_py's estimate and its interval would each tune differ most among seeds 0–7)."""
    rng = np.random.default_rng(seed)
    x = rng.random(labelled + unlabelled)
    human = np.clip(np.round(1 + 3 * x + rng.normal(0, 1, len(x))), 1, 5)
    judge = np.clip(np.round(0.5 * human + 1 + 2 * x + rng.normal(0, 1.2, len(x))), 1, 5)
    return x[:labelled], human[:labelled], judge[:labelled], x[labelled:], judge[labelled:]


def _design(x: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(len(x)), x])


@pytest.mark.parametrize("seed", [4, 5, 2])
def test_the_slope_estimate_is_the_centre_of_its_interval(seed):
    x, human, judge, x_u, judge_u = _grades(seed)
    ppi = slope_estimates(x, human, judge, x_u, judge_u, alpha=0.1)["ppi"]
    low, high = ppi["ci"]
    assert ppi["estimate"] == pytest.approx((low + high) / 2, abs=1e-9)
    args = (_design(x), human, judge, _design(x_u), judge_u)
    lam = ols_lambda(*args)
    assert 0 < lam < 1  # tuned, not a boundary case
    assert ppi["estimate"] == pytest.approx(float(ppi_py.ppi_ols_pointestimate(*args, lam=lam)[1]), abs=1e-12)
    ci = ppi_py.ppi_ols_ci(*args, alpha=0.1, lam=lam)
    assert [low, high] == pytest.approx([float(ci[0][1]), float(ci[1][1])], abs=1e-12)
    # λ is the one ppi_py's own point estimate tunes (so the estimate printed before is unchanged)
    assert ppi["estimate"] == pytest.approx(float(ppi_py.ppi_ols_pointestimate(*args)[1]), abs=1e-12)


def test_seed_4_shows_the_gap_left_to_ppi_py_defaults():
    """Without one λ: estimate 3.119, interval centre 2.989 (the interval re-tunes λ at the tuned θ)."""
    args = (_design(_grades(4)[0]), *_grades(4)[1:3], _design(_grades(4)[3]), _grades(4)[4])
    low, high = ppi_py.ppi_ols_ci(*args, alpha=0.1)
    assert float(ppi_py.ppi_ols_pointestimate(*args)[1]) - (low[1] + high[1]) / 2 > 0.1


def test_grades_that_never_change_give_exact_estimates_not_nan_or_float_noise():
    """Every judge and human grade 3: λ's tuning is 0/0 (was NaN → a null estimate) and the slopes
    came out as ±1e-15 with intervals that missed them; now 3 [3, 3] and slope 0 [0, 0]."""
    from ragdiag.metrics.ppi_estimates import mean_estimates

    rng = np.random.default_rng(0)
    x, x_u = rng.random(30), rng.random(90)
    three, three_u = np.full(30, 3.0), np.full(90, 3.0)
    means = mean_estimates(three, three, three_u, alpha=0.1)
    assert means["ppi"] == {"estimate": 3.0, "ci": [3.0, 3.0]}
    slopes = slope_estimates(x, three, three, x_u, three_u, alpha=0.1)
    assert all(slopes[kind] == {"estimate": 0.0, "ci": [0.0, 0.0]} for kind in ("ppi", "human_only", "judge_only"))
    # a judge stuck on 3 while humans vary: the PPI mean is the human mean (any λ), with its interval
    human = rng.integers(1, 6, 30).astype(float)
    ppi = mean_estimates(human, three, three_u, alpha=0.1)["ppi"]
    assert ppi["estimate"] == pytest.approx(human.mean()) and ppi["ci"][0] < human.mean() < ppi["ci"][1]
