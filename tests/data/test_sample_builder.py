"""The bundled retrieval-response sample: schema, paper A.1 assertions, provenance, determinism."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ragdiag.data.schema import RankedSample, TextsSample, check_graded_record
from ragdiag.errors import DataError
from ragdiag.pipeline.rank import rank_by_cosine
from ragdiag.resources import resource_path
from tools import sample_builder as sb
from tools.sample_passages import MAX_WORDS, MIN_WORDS, load_topics, write_texts_samples

SAMPLE_DIR = resource_path("fixtures", "retrieval-response-sample")
FILES = ("samples_texts.json", "samples_ranked.json", "samples_graded.json")


@pytest.fixture(scope="module")
def shipped() -> dict[str, list[dict]]:
    return {name: json.loads((SAMPLE_DIR / name).read_text(encoding="utf-8")) for name in FILES}


@pytest.fixture(scope="module")
def meta() -> dict:
    return json.loads((SAMPLE_DIR / "meta.json").read_text(encoding="utf-8"))


def test_texts_records_valid_and_written_for_the_project(shipped):
    texts = shipped["samples_texts.json"]
    assert len(texts) >= 150
    for index, record in enumerate(texts):
        sample = TextsSample.from_json(record, "samples_texts.json", index)
        assert sample.id == f"M-{index}"
        assert len(sample.p) >= 5 and len(sample.n) >= 48
        assert not set(sample.p) & set(sample.n)
        for passage in sample.p + sample.n:
            assert MIN_WORDS <= len(passage.split()) <= MAX_WORDS, passage
    assert len({r["q"] for r in texts}) == len(texts)
    # The shipped texts are exactly what the passage writer produces from source/topics.json.
    assert texts == write_texts_samples(0)


def test_ranked_records_match_paper_figure_22(shipped):
    texts = {r["id"]: r for r in shipped["samples_texts.json"]}
    ranked = shipped["samples_ranked.json"]
    keys = set()
    for index, record in enumerate(ranked):
        sr = RankedSample.from_json(record, "samples_ranked.json", index)
        sq = texts[sr.id]
        assert len(sr.P) == len(sr.K) and len(sr.R) == len(sr.K)
        assert len(sr.rank) == sr.Nc and sorted(sr.rank) == list(range(sr.Nc))
        assert sr.Nc <= len(sq["p"]) + len(sq["n"]) and sr.Np <= len(sq["p"])
        assert 2 <= sr.Np < sr.Nc
        assert sr.E == "L6" and list(range(2, 16)) == sr.K
        hits = np.cumsum([i < sr.Np for i in sr.rank])
        for k, p, r in zip(sr.K, sr.P, sr.R):
            assert p == hits[k - 1] / k and r == hits[k - 1] / sr.Np
        keys.add(sr.key)
    assert len(keys) == len(ranked) == len(texts) * len(sb.NC_VALUES) * len(sb.NP_VALUES)


def test_graded_records_match_paper_figure_30(shipped):
    ranked = {(r["id"], r["E"], r["Nc"], r["Np"]): r for r in shipped["samples_ranked.json"]}
    graded = shipped["samples_graded.json"]
    seen = Counter()
    for index, sg in enumerate(graded):
        check_graded_record(sg, "samples_graded.json", index, allow_missing_grade=False)
        assert list(sg) == ["id", "E", "Nc", "Np", "K", "rank", "inK", "answer_ideal", "answer_topK", "grade", "P", "R"]
        sr = ranked[(sg["id"], sg["E"], sg["Nc"], sg["Np"])]
        k = sg["K"]
        assert len(sg["rank"]) == k and len(sg["inK"]) == k and sum(sg["inK"]) <= sg["Np"]
        assert k in sr["K"] and sg["rank"] == sr["rank"][:k]
        assert sg["inK"] == [1 if i < sg["Np"] else 0 for i in sg["rank"]]
        n = sum(sg["inK"])
        assert sg["P"] == n / k and sg["R"] == n / sg["Np"]
        assert sg["P"] == sr["P"][sr["K"].index(k)]
        assert isinstance(sg["grade"], int) and 1 <= sg["grade"] <= 5
        assert sg["answer_ideal"] == sg["answer_topK"] == ""
        seen[(sg["id"], sg["E"], sg["Nc"], sg["Np"], k)] += 1
    assert max(seen.values()) == 1
    assert len(graded) == sum(len(r["K"]) for r in ranked.values())


def test_meta_records_simulated_grades_and_file_hashes(shipped, meta):
    assert meta["simulated_grades"] is True
    assert meta["formula"] == sb.GRADE_FORMULA and meta["seed"] == 0
    assert meta["embedder"]["E"] == "L6" and meta["embedder"]["identity"] == "st:all-MiniLM-L6-v2"
    for name in FILES:
        assert meta["files"][name] == hashlib.sha256((SAMPLE_DIR / name).read_bytes()).hexdigest()
    source = resource_path("fixtures", "retrieval-response-sample", "source", "topics.json")
    assert meta["source"]["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert meta["counts"]["graded"] == len(shipped["samples_graded.json"])
    assert meta["counts"]["ranked"] == len(shipped["samples_ranked.json"])


def test_sample_is_usable_for_ratio_segments(shipped):
    graded = shipped["samples_graded.json"]
    segments = Counter(f"L6^M^KtoN^{round(g['K'] / g['Np'], 1)}" for g in graded)
    assert sum(count >= 300 for count in segments.values()) >= 20
    grades = Counter(g["grade"] for g in graded)
    assert set(grades) == {1, 2, 3, 4, 5}
    # The ranking is not trivial: some positives fall below some negatives.
    ranked = shipped["samples_ranked.json"]
    mixed = sum(max(p for p, i in enumerate(r["rank"]) if i < r["Np"]) >= r["Np"] for r in ranked)
    assert 0.2 * len(ranked) < mixed < len(ranked)


def test_simulated_grade_follows_the_formula():
    u = np.full(5, 0.5)
    # Both positives on top, Np = 2: coverage = 1 - 0.5 * (1 - 0.5 / (1 + 1/8)); ideal = 0.75.
    coverage = 1 - 0.5 * (1 - 0.5 / (1 + 1 / sb.POSITION_SCALE))
    expected = 1 + 4 * coverage / 0.75
    assert sb.simulated_grade([0, 1], 2, u, 0.0, 0.0) == int(np.clip(np.rint(expected), 1, 5))
    # One positive at position 2 behind two negatives.
    coverage = 0.5 / (1 + 2 / sb.POSITION_SCALE)
    expected = 1 + 4 * coverage / 0.75 - sb.NEGATIVE_WEIGHT * 2 / (2 + sb.NEGATIVE_HALF)
    assert sb.simulated_grade([2, 3, 0], 2, u, 0.0, 0.0) == int(np.clip(np.rint(expected), 1, 5))
    assert sb.simulated_grade([2, 3, 4], 2, u, 0.0, 0.0) == 1
    assert sb.simulated_grade([0, 1], 2, u, 3.0, 0.0) == 5 and sb.simulated_grade([2, 3], 2, u, 0.0, -3.0) == 1


def test_rank_by_cosine_breaks_ties_by_index_and_ignores_norms():
    query = np.array([2.0, 0.0], dtype=np.float32)  # cosine, not inner product: norms do not matter
    candidates = np.array([[0.0, 3.0], [0.6, 0.8], [5.0, 0.0], [1.2, 1.6]], dtype=np.float32)
    assert rank_by_cosine(query, candidates) == [2, 1, 3, 0]
    # scores equal to 6 decimals tie and keep candidate order
    near = np.array([[0.6, 0.8], [0.6 + 1e-9, 0.8]], dtype=np.float64)
    assert rank_by_cosine(np.array([1.0, 0.0]), near) == [0, 1]


def test_topic_with_a_missing_field_is_rejected(tmp_path: Path):
    topics = json.loads(Path(resource_path("fixtures", "retrieval-response-sample", "source", "topics.json")).read_text())
    del topics["categories"][1]["entities"][3]["time"]
    bad = tmp_path / "topics.json"
    bad.write_text(json.dumps(topics))
    with pytest.raises(DataError, match=r"topics.json: record 1: field 'entities\[3\]': no value for \['time'\]"):
        load_topics(bad)


@pytest.mark.model
def test_rebuild_is_byte_identical_and_matches_shipped(tmp_path: Path, shipped):
    cache = tmp_path / "cache"
    first, second = tmp_path / "a", tmp_path / "b"
    counts = sb.build_sample(first, seed=0, cache_dir=cache, n_queries=2)
    assert counts == {"queries": 2, "ranked": 16, "graded": 224, "distinct_texts": counts["distinct_texts"]}
    sb.main(["--out", str(second), "--seed", "0", "--cache-dir", str(cache), "--queries", "2"])
    for name in (*FILES, "meta.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    for name in FILES:
        rebuilt = json.loads((first / name).read_text(encoding="utf-8"))
        ids = {r["id"] for r in rebuilt}
        assert rebuilt == [r for r in shipped[name] if r["id"] in ids]
