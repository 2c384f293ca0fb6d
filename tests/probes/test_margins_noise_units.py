"""Margin arithmetic, summaries and noise composition on hand-made inputs (no model needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.errors import DataError, RagdiagError
from ragdiag.probes.names import NamesTexts, margins, summarise
from ragdiag.probes.noise import (
    apply_casing,
    build_noise_texts,
    compose_noisy,
    parse_levels,
)
from ragdiag.probes.probe_data import (
    ProbeQuery,
    load_noise_bank,
    load_queries,
    parse_langs,
)


def test_margins_from_known_cosines():
    # 2-D unit vectors: query along x; candidates at chosen angles → known cosines
    angles = {"q": 0.0, "c1": 0.2, "c2a": 0.5, "c2b": 0.7, "c3": 1.1}
    vecs = np.array([[np.cos(a), np.sin(a)] for a in angles.values()], dtype=np.float32)
    texts = NamesTexts("en", ["base"], list(angles), np.arange(5).reshape(1, 1, 1, 5), None)
    dn, dt = margins(texts, vecs)
    cos = {k: np.cos(a) for k, a in angles.items()}
    assert dn[0, 0, 0] == pytest.approx(cos["c1"] - (cos["c2a"] + cos["c2b"]) / 2, abs=1e-6)
    assert dt[0, 0, 0] == pytest.approx(cos["c1"] - cos["c3"], abs=1e-6)


def test_summarise_pct_change_excludes_small_bases_and_reports_sd():
    # 2 runs × 2 conditions × 3 queries; query 2 of run 0 has a tiny base margin
    dn = np.array([[[0.10, 0.20, 0.001], [0.05, 0.10, 0.5]], [[0.10, 0.30, 0.10], [0.0, 0.15, 0.05]]])
    dt = np.full_like(dn, 0.4)
    out = summarise(["base", "x"], dn, dt, epsilon=0.01)
    base_runs = dn[:, 0].mean(axis=1)
    assert out["base"]["delta_name"] == pytest.approx(base_runs.mean())
    assert out["base"]["delta_name_sd"] == pytest.approx(np.std(base_runs, ddof=1))
    assert out["base"]["name_topic_ratio"] == pytest.approx(base_runs.mean() / 0.4)
    abl = out["ablations"][0]
    run0 = 100 * (np.mean([0.05, 0.10]) - np.mean([0.10, 0.20])) / np.mean([0.10, 0.20])  # 0.001 base excluded
    run1 = 100 * (np.mean([0.0, 0.15, 0.05]) - np.mean([0.10, 0.30, 0.10])) / np.mean([0.10, 0.30, 0.10])
    assert abl["pct_change"] == pytest.approx((run0 + run1) / 2)
    assert abl["excluded"] == 1
    assert abl["abs_change"] == pytest.approx((dn[:, 1].mean(axis=1) - base_runs).mean())
    assert set(abl) >= {"name", "delta_name", "delta_name_sd", "pct_change", "delta_topic", "excluded"}


def test_parse_langs_and_levels():
    assert parse_langs("en,fr") == ["en", "fr"] and parse_langs("FR") == ["fr"]
    with pytest.raises(RagdiagError, match="unknown language 'de'"):
        parse_langs("en,de")
    assert parse_levels("0-4") == [0, 1, 2, 3, 4]
    assert parse_levels("2,4") == [0, 2, 4]
    with pytest.raises(RagdiagError, match="--levels 'x'"):
        parse_levels("x")


def test_compose_noisy_levels_en_and_fr():
    rng = np.random.default_rng(0)
    for lang in ("en", "fr"):
        bank = load_noise_bank(lang)
        q = "Why is the sky blue?" if lang == "en" else "Pourquoi le ciel est-il bleu ?"
        assert compose_noisy(q, bank.levels[0], bank, rng) == q
        lvl2 = compose_noisy(q, bank.levels[2], bank, rng)
        assert lvl2.endswith(q) and any(lvl2.startswith(g) for g in bank.phrases["greetings"])
        lvl4 = compose_noisy(q, bank.levels[4], bank, rng)
        assert lvl4 == lvl4.lower() and len(lvl4) > len(lvl2)
        assert any(e in lvl4 for e in bank.phrases["emoji"])


def test_casing_styles():
    assert apply_casing("Hi! Why Is It? lol", "lower") == "hi! why is it? lol"
    assert apply_casing("Hi! Why Is It ? lol", "lower_no_question_mark") == "hi! why is it lol"


def test_noise_texts_are_seeded_and_deduplicated():
    queries = [ProbeQuery("a", "Why is the sky blue?", "Rayleigh scattering."), ProbeQuery("b", "What is CRISPR?", None)]
    a = build_noise_texts("en", queries, [0, 2, 4], 3, 9)
    b = build_noise_texts("en", queries, [0, 2, 4], 3, 9)
    assert a.unique == b.unique and a.noisy.shape == (3, 2, 3)
    assert (a.noisy[0] == a.clean[:, None]).all()  # level 0 is the clean query itself
    assert a.reference.tolist()[1] == -1
    with pytest.raises(RagdiagError, match="unknown noise level"):
        build_noise_texts("en", queries, [0, 7], 1, 0)


def test_load_queries_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataError, match="no queries"):
        load_queries(empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "ok"}) + "\n" + json.dumps({"reference": "x"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl: record 1: field 'query': missing or empty"):
        load_queries(bad)


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_bundled_query_sets(lang):
    from ragdiag.probes.probe_data import bundled_queries_path

    queries = load_queries(bundled_queries_path(lang))
    assert len(queries) >= 30 and all(q.reference and len(q.reference) > 80 for q in queries)
    assert len({q.query for q in queries}) == len(queries)
