"""The budget planner against known variance components: its allocation against a brute-force search
over every integer design, and its predicted width against the widths ppi_py realises on simulated data."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.metrics import budget_plan as bp

SIGMA_J, SIGMA_REP, SLOPE, SIGMA_E = 0.6, 0.8, 0.9, 0.45  # variances σ²_J, σ²_rep; Y = 1 + SLOPE·J + e
TRUE = bp.Components(SIGMA_J, SIGMA_REP, SLOPE**2 * SIGMA_J + SIGMA_E, SLOPE * SIGMA_J)


def simulate(rng: np.random.Generator, n: int, r: int, m: int) -> tuple[list[list[float]], np.ndarray, np.ndarray]:
    """n items with r judge repeats each (judge grade = their mean), the first m with a human grade."""
    truth = rng.normal(3.5, np.sqrt(SIGMA_J), n)
    grades = truth[:, None] + rng.normal(0, np.sqrt(SIGMA_REP), (n, r))
    human = np.full(n, np.nan)
    human[:m] = 1 + SLOPE * truth[:m] + rng.normal(0, np.sqrt(SIGMA_E), m)
    return grades.tolist(), grades.mean(axis=1), human


def pilot_components(rng: np.random.Generator, n: int, r: int, m: int) -> bp.Components:
    repeats, judge, human = simulate(rng, n, r, m)
    return bp.components(repeats, judge, human[:m], judge[:m])


def test_components_recover_the_simulated_ones():
    comp = pilot_components(np.random.default_rng(0), 20_000, 3, 5_000)
    for got, want in zip((comp.between_question, comp.judge_repeat, comp.human, comp.covariance),
                         (TRUE.between_question, TRUE.judge_repeat, TRUE.human, TRUE.covariance)):
        assert got == pytest.approx(want, rel=0.05)


def brute_force(comp: bp.Components, pilot: bp.Pilot, budget: float, p_call: float, p_human: float,
                alpha: float) -> float:
    """The narrowest width over every integer (Δn, r, Δm) whose cost is within the budget."""
    best, z = np.inf, 2 * 1.6448536269514722  # z₀.₉₅ for α = 0.1
    assert alpha == 0.1
    for r in range(pilot.repeats, pilot.repeats + bp.MAX_REPEATS):
        for dm in range(int(budget // p_human) + 1):
            dn = np.arange(int(budget // (p_call * (1 + r))) + 1)  # every Δn, then those within the budget
            costs = p_call * (dn * (1 + r) + pilot.questions * (r - pilot.repeats)) + p_human * dm
            dn = dn[(costs <= budget + 1e-9) & (pilot.labels + dm <= pilot.questions + dn)]
            if len(dn):
                var = bp.ppi_variance(comp, pilot.questions + dn, r, np.full(len(dn), pilot.labels + dm))
                best = min(best, float(z * np.sqrt(var.min())))
    return best


@pytest.mark.parametrize("seed,p_call,p_human,budget", [(1, 0.02, 1.0, 40.0), (2, 0.05, 0.5, 30.0),
                                                        (3, 0.01, 2.0, 60.0)])
def test_planned_allocation_is_within_5_percent_of_the_brute_force_optimum(seed, p_call, p_human, budget):
    """The planner sees only a pilot's estimated components; its choice, judged with the true ones, is
    within 5% of the width of the true optimum found by trying every integer design."""
    pilot = bp.Pilot(questions=150, repeats=2, labels=30)
    estimated = pilot_components(np.random.default_rng(seed), pilot.questions, pilot.repeats, pilot.labels)
    planned = bp.best_for_budget(estimated, pilot, budget, p_call, p_human)
    assert planned is not None and bp.cost(pilot, planned, p_call, p_human) <= budget + 1e-9
    optimum = brute_force(TRUE, pilot, budget, p_call, p_human, 0.1)
    assert bp.width(TRUE, pilot, planned, 0.1) <= 1.05 * optimum
    exact = bp.best_for_budget(TRUE, pilot, budget, p_call, p_human)  # with the true components: the optimum
    assert bp.width(TRUE, pilot, exact, 0.1) == pytest.approx(optimum, rel=1e-12)


def test_predicted_width_matches_the_realised_ppi_widths_within_10_percent():
    """A pilot's components predict the width of a planned design; 300 simulated studies of that design
    give ppi_py's PPI++ intervals whose mean width is within ±10% of the prediction."""
    import ppi_py

    rng = np.random.default_rng(7)
    pilot = bp.Pilot(questions=400, repeats=2, labels=100)
    estimated = pilot_components(rng, pilot.questions, pilot.repeats, pilot.labels)
    alloc = bp.best_for_budget(estimated, pilot, 50.0, 0.02, 0.5)
    assert alloc is not None
    predicted = bp.width(estimated, pilot, alloc, 0.1)
    n, m = pilot.questions + alloc.new_questions, pilot.labels + alloc.new_labels
    realised = []
    for _ in range(300):
        _, judge, human = simulate(rng, n, alloc.repeats, m)
        low, high = ppi_py.ppi_mean_ci(human[:m], judge[:m], judge[m:], alpha=0.1)
        realised.append(float(np.ravel(high)[0] - np.ravel(low)[0]))
    assert predicted == pytest.approx(np.mean(realised), rel=0.10)


def test_target_width_is_the_cheapest_design_reaching_it():
    pilot = bp.Pilot(questions=150, repeats=2, labels=30)
    target = 0.8 * bp.width(TRUE, pilot, bp.Allocation(0, 2, 0), 0.1)
    alloc = bp.cheapest_for_width(TRUE, pilot, target, 0.02, 1.0, 0.1)
    assert alloc is not None and bp.width(TRUE, pilot, alloc, 0.1) <= target
    spent = bp.cost(pilot, alloc, 0.02, 1.0)
    cheaper = bp.best_for_budget(TRUE, pilot, spent - 0.05, 0.02, 1.0)
    assert cheaper is None or bp.width(TRUE, pilot, cheaper, 0.1) > target


def test_alternatives_spend_on_one_resource():
    pilot = bp.Pilot(questions=100, repeats=2, labels=20)
    alts = bp.alternatives(TRUE, pilot, 10.0, 0.02, 1.0)
    assert alts["all on questions"] == bp.Allocation(166, 2, 0)
    assert alts["all on repeats"] == bp.Allocation(0, 7, 0)
    assert alts["all on humans"] == bp.Allocation(0, 2, 10)
    no_repeats = bp.Components(SIGMA_J, None, TRUE.human, TRUE.covariance)
    assert bp.alternatives(no_repeats, pilot, 10.0, 0.02, 1.0)["all on repeats"] is None


def test_gain_is_about_r_squared():
    """With many judge-only questions, V ≈ σ²_Y (1 − R²) / m (the power analysis for PPI)."""
    var = float(bp.ppi_variance(TRUE, 10_000_000, 4, 200))
    assert var == pytest.approx(TRUE.human * (1 - bp.r_squared(TRUE, 4)) / 200, rel=1e-3)
