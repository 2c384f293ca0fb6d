"""``grade --repeats 3`` writing Parquet (issue 29): the repeats are a list column read back as the
JSON file's, so correlate keeps the judge's reliability."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ragdiag.data.loaders import load_graded_file


def test_grade_repeats_into_parquet_keep_the_ratings(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    answers = tmp_path / "answers.jsonl"
    assert run_cli("generate", "--texts", texts, "--ranked", ranked, "--k", "2,3,5", "--out", answers,
                   "--base-url", server.base_url).exit_code == 0
    graded_json, graded_parquet = tmp_path / "graded.json", tmp_path / "graded.parquet"
    for out in (graded_json, graded_parquet):
        res = run_cli("grade", "--answers", answers, "--out", out, "--base-url", server.base_url, "--repeats", "3")
        assert res.exit_code == 0, res.output
    assert pq.read_schema(graded_parquet).field("grades").type == pa.list_(pa.float64())
    records = json.loads(graded_json.read_text())
    assert [len(r["grades"]) for r in records] == [3] * len(records)
    from_json, from_parquet = load_graded_file(graded_json), load_graded_file(graded_parquet)
    assert from_parquet.ratings_source == from_json.ratings_source == "repeats"
    assert np.array_equal(from_parquet.ratings, from_json.ratings, equal_nan=True)
    assert from_parquet.ratings.shape == (len(from_json), 3)
