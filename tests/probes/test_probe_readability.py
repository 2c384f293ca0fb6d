"""Probes a newcomer can read: BEIR queries accepted, absurd rewrite recoveries flagged, plots with
error bars / SD bands / a retrieval panel (no model needed: the local embeddings server)."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.io.writer import write_figure
from ragdiag.probes.noise_rewrite import merge_rewritten, recovery_flag
from ragdiag.probes.probe_data import load_queries
from ragdiag.report.probe_report import names_plot, noise_plot
from ragdiag.results.probes import NamesResult, NoiseResult
from tests.servers.embeddings_server import EmbeddingsServer

runner = CliRunner()


def test_beir_queries_are_accepted(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_text(json.dumps({"_id": "42", "text": "What causes tides?", "metadata": {}}) + "\n")
    (query,) = load_queries(path)
    assert (query.id, query.query, query.reference) == ("42", "What causes tides?", None)


def test_recovery_flags():
    assert recovery_flag(-4023.0, 0.02).startswith("absurd: -4023%")
    assert "too little to measure" in recovery_flag(40.0, 0.001)
    assert recovery_flag(55.0, 0.05) is None and recovery_flag(None, 0.05) is None


def test_merge_marks_an_absurd_recovery():
    rows = [{"cosine_to_reference": 0.70}, {"cosine_to_reference": 0.69}]
    rewritten = [{"cosine_to_reference": 0.70}, {"cosine_to_reference": 0.10}]  # loss 0.01, rewrite 0.59 worse
    merge_rewritten(rows, rewritten)
    assert rows[1]["recovery_pct"] == pytest.approx(-5900.0)
    assert rows[1]["recovery_flag"].startswith("absurd: -5900%")
    assert "recovery_flag" not in rows[0]


def test_noise_with_beir_queries_through_the_cli(tmp_path, monkeypatch):
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": str(i), "text": t}) + "\n"
                               for i, t in enumerate(["What causes tides?", "How do vaccines work?"])))
    with EmbeddingsServer(dim=16) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = runner.invoke(app, ["noise", "--queries", str(queries), "--embedder", "openai:text-embedding-3-small",
                                     "--levels", "0,2", "--variants", "2", "--format", "json",
                                     "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [row["level"] for row in doc["levels"]] == [0, 2]
    assert doc["levels"][0]["cosine_to_reference"] is None  # BEIR queries carry no reference passage


def _names_result() -> dict:
    ablations = [{"name": n, "pct_change": p, "pct_change_sd": sd}
                 for n, p, sd in (("hard_name_mask", -100.0, 0.0), ("strip_diacritics", 0.0, 0.0),
                                  ("initials_form", 5.6, 3.0), ("remove_label", None, None))]
    return {"lang": "en", "embedder": "demo", "ablations": ablations}


def _noise_result(corpus: bool) -> dict:
    levels = []
    for level in range(3):
        row = {"level": level, "cosine_to_clean": 1 - 0.05 * level, "cosine_to_clean_sd": 0.02 * level,
               "cosine_to_reference": 0.7 - 0.02 * level, "cosine_to_reference_sd": 0.05}
        if corpus:
            row.update(recall_at_k=1 - 0.1 * level, overlap_at_k=1 - 0.15 * level, k=10)
        levels.append(row)
    return {"lang": "en", "embedder": "demo", "levels": levels}


def test_plots_are_written(tmp_path):
    write_figure(tmp_path / "names.png", names_plot([NamesResult.from_json(_names_result())]))
    write_figure(tmp_path / "noise.png", noise_plot([NoiseResult.from_json(_noise_result(False))]))
    write_figure(tmp_path / "noise_corpus.png", noise_plot([NoiseResult.from_json(_noise_result(True))]))
    sizes = {p.stem: Image.open(p).size for p in tmp_path.glob("*.png")}
    assert set(sizes) == {"names", "noise", "noise_corpus"}
    assert sizes["noise_corpus"][0] > 1.5 * sizes["noise"][0]  # the second (retrieval) panel
