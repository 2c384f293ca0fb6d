"""The calibrate trust sentences and table on a result whose estimate is null (a NaN written as null
by an earlier version): '–', never a TypeError."""

from __future__ import annotations

from ragdiag.report.trust import calibrate_trust


def test_a_null_estimate_is_a_dash_not_a_type_error():
    result = {"estimates": {"alpha": 0.1, "mean_grade": [
        {"group": "all", "ppi": {"estimate": None, "ci": [None, None]}, "judge_only": {"estimate": 3.0, "ci": [3.0, 3.0]}}],
        "slopes": [{"measure": "nDCG", "ppi": {"estimate": None, "ci": [None, None]}, "judge_only": None}]}}
    assert calibrate_trust(result) == []
