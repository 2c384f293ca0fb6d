"""Missing answers are not missing at random: a context limit on the chat test server fails most K=5
prompts; summaries show coverage per K, correlate warns before its verdict, ``--complete-cases`` keeps
the queries graded at every K, and the HTML report shows coverage per K beside the verdict."""

from __future__ import annotations

import json

import pytest

from tests.pipeline.long_data import write_long
from tests.servers.base import serving
from tests.servers.chat_server import ChatServer

QUERIES = 12
WORDS = [60 if i % 3 == 0 else 250 for i in range(QUERIES)]  # K=5 fits the limit only for every third query


@pytest.fixture(scope="module")
def incomplete(tmp_path_factory):
    """One pipeline run, read (never written) by the three tests that use it."""
    from typer.testing import CliRunner

    from ragdiag.cli import app

    tmp_path = tmp_path_factory.mktemp("coverage")
    texts, ranked = write_long(tmp_path / "data", QUERIES, WORDS)
    out = tmp_path / "run"
    with pytest.MonkeyPatch.context() as patch, serving(patch, ChatServer()) as server:
        server.context_limit(1200)
        res = CliRunner().invoke(app, [
            "pipeline", "--texts", str(texts), "--ranked", str(ranked), "--ks", "2,3,5", "--out-dir", str(out),
            "--base-url", server.base_url, "--segments", "pooled", "--min-samples", "3", "--min-coverage", "0",
            "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_summaries_show_coverage_per_k(incomplete):
    out, output = incomplete
    assert "answered per K: K=2 100% (12/12), K=3 100% (12/12), K=5 33% (4/12)" in output
    for name in ("answers.jsonl", "graded.json"):
        summary = json.loads((out / f"{name}.manifest.json").read_text())["summary"]
        block = summary["coverage_by_K"]
        assert [(e["K"], e["covered"], e["items"]) for e in block["by_K"]] == [(2, 12, 12), (3, 12, 12), (5, 4, 12)]
        assert block["uneven"] and block["gap_points_across_K"] == 66.7
        assert [e["segment"] for e in block["by_segment"]] == ["AM K=2", "AM K=3", "AM K=5"]
    graded = json.loads((out / "graded.json").read_text())
    missing = [g for g in graded if g["grade"] is None]
    assert len(missing) == 8 and all(g["answer_error"].startswith("context length exceeded") for g in missing)


def test_correlate_warns_before_the_verdict_and_complete_cases_says_what_it_kept(incomplete, run_cli, tmp_path):
    out, pipeline_output = incomplete
    flat = " ".join(pipeline_output.split())  # the warning wraps at the terminal's width
    assert flat.index("Warning: coverage differs by 67 points across K") < flat.index("Verdict")
    graded = out / "graded.json"
    plain = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "3")
    assert plain.exit_code == 0, plain.output
    text = " ".join(plain.output.split())
    assert "graded per K: K=2 100% (12/12), K=3 100% (12/12), K=5 33% (4/12). Warning:" in text
    assert "Rerun correlate with --complete-cases" in text
    assert text.index("Warning:") < text.index("Verdict")
    complete = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "3", "--complete-cases",
                       "--format", "json", "--out", tmp_path / "complete.json")
    assert complete.exit_code == 0, complete.output
    report = json.loads((tmp_path / "complete.json").read_text())
    assert report["coverage"]["complete_cases"] == {"used": True, "queries": 12, "queries_kept": 4,
                                                    "rows_before": 28, "rows_kept": 12}
    assert report["meta"]["rows"] == 12
    table = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "3", "--complete-cases")
    flat = " ".join(table.output.split())
    assert "The verdict uses complete cases only: the 4 of 12 queries graded at every K (12 of 28 graded rows)." in flat
    json_out = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "3", "--format", "json")
    assert json_out.exit_code == 0 and "warning: graded per K" in json_out.output  # said on stderr for JSON too


def test_html_report_shows_coverage_per_k_beside_the_verdict(incomplete, run_cli, tmp_path):
    from typer.testing import CliRunner

    from ragdiag.cli import app

    out, _ = incomplete
    page = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["report", str(out / "correlation.json"), "--out", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text()
    assert "coverage per K (graded / rows)" in html and "33.3%" in html
    assert html.index("Warning: coverage differs") < html.index("<strong>Verdict</strong>")


def test_pipeline_complete_cases_correlates_only_queries_graded_at_every_k(server, run_cli, tmp_path):
    texts, ranked = write_long(tmp_path / "data", QUERIES, WORDS)
    server.context_limit(1200)
    out = tmp_path / "run"
    res = run_cli("pipeline", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--out-dir", out,
                  "--base-url", server.base_url, "--segments", "pooled", "--min-samples", "3", "--min-coverage", "0",
                  "--complete-cases")
    assert res.exit_code == 0, res.output
    correlation = json.loads((out / "correlation.json").read_text())
    assert correlation["coverage"]["complete_cases"]["queries_kept"] == 4 and correlation["meta"]["rows"] == 12
    assert correlation["meta"]["pipeline"]["equivalent_command"].endswith("--complete-cases")
    assert "The verdict uses complete cases only" in " ".join(res.output.split())


def test_a_failing_coverage_gate_withholds_the_verdict(server, run_cli, tmp_path):
    """Coverage 28/36 under --min-coverage 0.9: exit 3, the failure printed before the correlations,
    and no verdict sentence, advice or verdict table printed as if it held."""
    texts, ranked = write_long(tmp_path / "data", QUERIES, WORDS)
    server.context_limit(1200)
    res = run_cli("pipeline", "--texts", texts, "--ranked", ranked, "--ks", "2,3,5", "--out-dir", tmp_path / "run",
                  "--base-url", server.base_url, "--segments", "pooled", "--min-samples", "3", "--min-coverage", "0.9")
    assert res.exit_code == 3, res.output
    flat = " ".join(res.output.split())
    assert "coverage gate failed" in flat and "below --min-coverage 0.9" in flat
    assert flat.index("coverage gate failed") < flat.index("Verdict withheld")
    assert "no verdict on these grades holds" in flat
    assert "predicts the grade best" not in flat and "predict the grade equally well" not in flat
    assert "Advice:" not in flat
