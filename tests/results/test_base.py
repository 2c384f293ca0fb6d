"""JsonRecord: a result dataclass gives back exactly the JSON it was read from (keys, order, values),
keeps keys it does not declare, and reads files that lack keys of later versions."""

from __future__ import annotations

import json

from ragdiag.results.robustness import RobustnessMeta, RobustnessPoint, RobustnessResult

POINT = {"spec": "ivf:nlist=8,nprobe=1", "index": "ivf", "params": {"nlist": 8, "nprobe": 1}, "recall_mean": 0.5,
         "robustness": {"0.5": 0.4}, "zero_recall_queries": 3, "pg": {"table_bytes": 10}, "qps_batch": None}


def test_round_trip_keeps_order_and_undeclared_keys():
    doc = {"points": [POINT], "meta": {"k": 5, "deltas": [0.5], "future_key": [1, 2]}, "new_analysis": {"x": 1}}
    result = RobustnessResult.from_json(doc)
    assert json.dumps(result.to_json()) == json.dumps(doc)  # same key order at every depth
    assert result.points[0].extra == {"pg": {"table_bytes": 10}} and result.extra == {"new_analysis": {"x": 1}}
    assert result.meta.get("future_key") == [1, 2] and result.meta.k == 5


def test_absent_keys_read_as_none_and_stay_absent():
    point = RobustnessPoint.from_json(POINT)
    assert point.label is None and point.recall_mean_ci is None and not point.has("recall_mean_ci")
    assert point.has("qps_batch") and point.qps_median is None and not point.timed
    assert "label" not in point.to_json() and point.to_json()["qps_batch"] is None
    assert point.name == "ivf nlist=8,nprobe=1" and point.interval("0.5") is None
    assert RobustnessPoint.from_json({**POINT, "label": "run.trec"}).name == "run.trec"


def test_meta_helpers():
    meta = RobustnessMeta.from_json({"k": 10, "deltas": [0.1, 0.5], "bootstrap": {"resamples": 0}})
    assert meta.delta_keys == ["0.1", "0.5"] and meta.resamples == 0
    assert RobustnessMeta.from_json({"k": 10}).resamples == 0  # files without bootstrap

