"""Both probes on the bundled all-MiniLM-L6-v2, EN and FR: the acceptance behaviour on real vectors.

The model is what these tests are about, so they embed for real, but small: 4 query bundles × 2 runs
for ``probe names`` (two runs keep the across-run sd path; the acceptance margins hold with room:
gibberish ≈ -50 %/-86 % against the -40 % bound, Δ_name ≈ 0.09/0.11 against 0.02) and one variant
per noise level for ``noise`` (the five levels still fall strictly). All runs share one
module-scoped embedding cache, and the corpus run reuses the level texts of the first noise run
(same seed and variants), so it embeds only the corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

pytestmark = [pytest.mark.model, pytest.mark.slow]
runner = CliRunner()


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("probe-cache")


@pytest.fixture(scope="module")
def names_run(cache_dir, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("names")
    args = ["probe", "names", "--lang", "en,fr", "--n-queries", "4", "--runs", "2", "--seed", "1",
            "--format", "json", "--out", str(out_dir / "names.json"), "--plot", str(out_dir / "names.png"),
            "--cache-dir", str(cache_dir)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return args, result, json.loads((out_dir / "names.json").read_text()), out_dir


def test_names_json_schema_and_acceptance(names_run):
    _, _, docs, out_dir = names_run
    assert [d["lang"] for d in docs] == ["en", "fr"]
    for doc in docs:
        assert doc["embedder"] == "st:all-MiniLM-L6-v2"
        assert set(doc["base"]) >= {"delta_name", "delta_name_sd", "delta_topic", "name_topic_ratio"}
        assert doc["meta"]["params"]["seed"] == 1 and doc["meta"]["ragdiag_version"]
        assert any(name.startswith("topics_") for name in doc["meta"]["data_files_sha256"])
        abl = {a["name"]: a for a in doc["ablations"]}
        assert len(abl) == 10
        assert doc["base"]["delta_name"] > 0.02  # real names carry signal
        assert abl["hard_name_mask"]["pct_change"] == pytest.approx(-100.0)
        assert abl["gibberish_name"]["pct_change"] < -40  # large drop
        for light in ("strip_diacritics", "case_punct_perturb", "unicode_normalization_stress"):
            assert abs(abl[light]["pct_change"]) < 15, (doc["lang"], light)
    assert (out_dir / "names.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_second_identical_run_makes_no_embedding_call(names_run):
    args, first, docs, _ = names_run
    counters = [line for line in first.stderr.splitlines() if line.startswith("embedding calls")]
    assert len(counters) == 2 and not any(": 0 model calls" in line for line in counters)
    again = runner.invoke(app, args)
    assert again.exit_code == 0
    counters = [line for line in again.stderr.splitlines() if line.startswith("embedding calls")]
    assert len(counters) == 2 and all(": 0 model calls, 0 texts embedded" in line for line in counters)
    assert json.loads(Path(args[args.index("--out") + 1]).read_text())[0]["ablations"] == docs[0]["ablations"]


def test_names_table_reads_like_table_4_1(names_run, cache_dir):
    args = ["probe", "names", "--lang", "fr", "--n-queries", "4", "--runs", "2", "--seed", "1",
            "--ablations", "hard_name_mask,remove_label", "--cache-dir", str(cache_dir)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "Δ_name impact vs base (FR), seed 1" in result.stdout
    assert "hard_name_mask" in result.stdout and "-100.0%" in result.stdout and "gibberish" not in result.stdout


def test_noise_lowers_cosine_level_by_level(cache_dir, tmp_path):
    result = runner.invoke(app, ["noise", "--lang", "en,fr", "--seed", "3", "--variants", "1", "--format", "json",
                                 "--plot", str(tmp_path / "noise.png"), "--cache-dir", str(cache_dir)])
    assert result.exit_code == 0, result.output
    docs = json.loads(result.stdout)
    for doc in docs:
        levels = doc["levels"]
        assert [lv["level"] for lv in levels] == [0, 1, 2, 3, 4]
        clean = [lv["cosine_to_clean"] for lv in levels]
        ref = [lv["cosine_to_reference"] for lv in levels]
        assert clean[0] == pytest.approx(1.0, abs=1e-5)
        assert all(a > b for a, b in zip(clean, clean[1:])), clean
        assert all(a > b for a, b in zip(ref, ref[1:])), ref
        assert levels[4]["drop_pct"] > 5 and levels[0]["drop_pct"] == pytest.approx(0.0)
        assert doc["meta"]["params"]["queries"] == "bundled"
    assert (tmp_path / "noise.png").stat().st_size > 1000


def test_noise_retrieval_impact_on_a_corpus(cache_dir, tmp_path):
    from ragdiag.probes.probe_data import bundled_queries_path, load_queries

    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w") as fh:
        for lang in ("en", "fr"):
            for q in load_queries(bundled_queries_path(lang)):
                fh.write(json.dumps({"_id": q.id, "title": "", "text": q.reference}, ensure_ascii=False) + "\n")
    result = runner.invoke(app, ["noise", "--lang", "en", "--seed", "3", "--variants", "1", "--levels", "0,2,4", "--corpus", str(corpus), "--k", "5",
                                 "--format", "json", "--cache-dir", str(cache_dir)])
    assert result.exit_code == 0, result.output
    levels = json.loads(result.stdout)["levels"]
    assert levels[0]["recall_at_k"] == 1.0 and levels[0]["overlap_at_k"] == 1.0 and levels[0]["kendall_tau"] == pytest.approx(1.0)
    assert levels[-1]["recall_at_k"] < 1.0 and 0 <= levels[-1]["overlap_at_k"] <= levels[-1]["recall_at_k"]
    assert levels[-1]["k"] == 5 and -1 <= levels[-1]["kendall_tau"] < 1
