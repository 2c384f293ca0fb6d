"""The reference-quality gate in generate, grade, correlate and pipeline, against the local chat test server.

The degenerate answers are real model output (/work/shared/data/real-llm-answers, skipped when absent)
or EN/FR strings written the way small instruct models answer.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.servers.base import serving
from tests.servers.chat_server import ChatServer

REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-llm-answers"


def _real(name: str) -> Path:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"real model output not found at {path} (see its SOURCE.md)")
    return path


class RefusingServer(ChatServer):
    """The chat test server, but the ideal answers of two queries are a French refusal and an echo of
    the prompt's fencing (text written by this test, in the style of a small real model)."""

    REPLIES: ClassVar[dict[str, str]] = {"volcano": "Les références ne permettent pas de répondre à la question.",
                                         "glacier": 'The text inside the <question> element is "What is known about the glacier?".'}

    def _text(self, body):
        user = str(body["messages"][-1]["content"])
        if "Ideal answer:" not in user and "beta fact" in user and "alpha fact" in user:  # an ideal-answer request
            for topic, reply in self.REPLIES.items():
                if f"{topic} alpha" in user:
                    return reply
        return super()._text(body)


@pytest.fixture()
def refusing(monkeypatch):
    with serving(monkeypatch, RefusingServer()) as srv:
        yield srv


def test_generate_counts_degenerate_answers_per_kind(tiny, refusing, run_cli, tmp_path):
    texts, ranked = tiny
    answers = tmp_path / "answers.jsonl"
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,5", "--out", answers,
                  "--base-url", refusing.base_url)
    assert res.exit_code == 0, res.output
    assert "reference gate: degenerate 2 of 4 ideal answers (refusal 1, prompt_echo 1)" in res.output
    gate = json.loads(Path(f"{answers}.manifest.json").read_text())["summary"]["reference_gate"]
    assert gate["ideal"]["refusal"] == 1 and gate["ideal"]["prompt_echo"] == 1 and gate["ideal"]["answers"] == 4
    assert gate["patterns"] == "degenerate-patterns@v1" and gate["long_answer_ratio"] == 5.0

    graded = tmp_path / "graded.json"
    before = refusing.requests
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", refusing.base_url)
    assert res.exit_code == 0, res.output
    records = json.loads(graded.read_text())
    skipped = [r for r in records if "skipped" in r]
    assert {r["id"] for r in skipped} == {"M-1", "M-2"} and len(skipped) == 4
    assert all(r["grade"] is None and r["grades"] == [] for r in skipped)
    assert {r["ideal_degenerate"] for r in skipped} == {"refusal", "prompt_echo"}
    assert refusing.requests - before == len(records) - len(skipped)  # no paid call for a degenerate ideal answer
    summary = json.loads(Path(f"{graded}.manifest.json").read_text())["summary"]
    assert summary["reference_gate"]["skipped_rows"] == 4 and summary["items"] == 4 and summary["coverage"] == 1.0

    kept = tmp_path / "graded-kept.json"
    res = run_cli("grade", "--answers", answers, "--out", kept, "--base-url", refusing.base_url, "--keep-degenerate")
    assert res.exit_code == 0, res.output
    records = json.loads(kept.read_text())
    assert all(r["grade"] is not None for r in records)
    assert {r["id"]: r.get("ideal_degenerate") for r in records}["M-1"] == "refusal"


def test_grade_skips_the_real_scifact_refusals_and_correlate_withholds_the_verdict(server, run_cli, tmp_path):
    answers = tmp_path / "scifact.answers.jsonl"
    shutil.copy(_real("scifact.answers.jsonl"), answers)
    results = tmp_path / "results"
    results.mkdir()
    graded = results / "graded.json"
    res = run_cli("grade", "--answers", answers, "--out", graded, "--base-url", server.base_url)
    assert res.exit_code == 0, res.output
    assert server.requests == 2  # only scifact-49 (K=1, K=3) has a usable ideal answer
    records = json.loads(graded.read_text())
    assert sum(r.get("ideal_degenerate") == "refusal" for r in records) == 14
    gate = json.loads(Path(f"{graded}.manifest.json").read_text())["summary"]["reference_gate"]
    assert gate["ideal"]["refusal"] == 7 and gate["topK"]["refusal"] == 15 and gate["skipped_rows"] == 14

    res = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "2")
    assert res.exit_code == 0, res.output
    assert "reference gate: 14 of 16 rows left out, their ideal answer is degenerate (refusal 14)" in res.output
    withheld = [line for line in res.output.splitlines() if "no verdict" in line]
    assert len(withheld) == 1 and "88% of segment bm25^scifact" in withheld[0] and "--keep-degenerate" in withheld[0]

    # the HTML report shows the counts per kind, the rows not graded and the withheld verdict
    res = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "2",
                  "--out", results / "correlation.json", "--format", "json")
    assert res.exit_code == 0, res.output
    page = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["report", str(results), "--out", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text()
    assert "reference gate (degenerate-patterns@v1, long answer &gt; 5.0× median): 14 rows not sent to the judge" in html
    assert '<td class="txt">refusal</td><td data-v="7">7</td><td data-v="15">15</td>' in html
    assert re.search(r"not graded: degenerate ideal answer</td><td[^>]*>14<", html)
    assert "scifact: no verdict — 88% of segment bm25^scifact (14 of 16 rows)" in html
    assert "No verdict: no subset has a segment" not in html


def test_correlate_excludes_real_refusal_references_by_default(run_cli, tmp_path):
    graded = _real("scifact.graded.json")
    out = tmp_path / "corr.json"
    res = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "2", "--out", out,
                  "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    gate = report["meta"]["reference_gate"]
    assert gate["applied"] and gate["excluded_rows"] == 14 and gate["by_kind"]["refusal"] == 14
    assert gate["segments"] == [{"segment": "bm25^scifact", "subset": "scifact", "side": "pooled", "rows": 16,
                                 "excluded": 14, "share": 14 / 16}]
    assert report["meta"]["rows"] == 2 and report["verdicts"] == []
    assert report["verdicts_withheld"][0]["share"] == 14 / 16
    assert report["run_record"]["prompts"]["degenerate-patterns"] == "degenerate-patterns@v1"

    kept = tmp_path / "kept.json"
    res = run_cli("correlate", "--graded", graded, "--segments", "pooled", "--min-samples", "2", "--out", kept,
                  "--format", "json", "--keep-degenerate")
    assert res.exit_code == 0, res.output
    report = json.loads(kept.read_text())
    assert report["meta"]["rows"] == 16 and report["meta"]["reference_gate"]["kept_degenerate_rows"] == 14
    assert report["meta"]["reference_gate"]["by_kind"]["refusal"] == 14
    assert report["verdicts_withheld"] == [] and report["verdicts"]


def test_correlate_on_real_msmarco_leaves_out_the_echoed_reference_only(run_cli, tmp_path):
    out = tmp_path / "corr.json"
    res = run_cli("correlate", "--graded", _real("msmarco.graded.json"), "--segments", "pooled", "--min-samples", "2",
                  "--out", out, "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    assert report["meta"]["reference_gate"]["by_kind"]["prompt_echo"] == 2  # one echoed ideal answer, K=1 and K=3
    assert report["meta"]["rows"] == 14 and report["verdicts_withheld"] == []
    # in exact arithmetic no measure varies over these 14 rows: no verdict (the float-noise one was T's 0.019)
    assert report["verdicts"] == []


def test_the_bundled_sample_has_no_ideal_texts_so_the_gate_does_not_apply(run_cli, tmp_path):
    from ragdiag.data.loaders import bundled_sample_path

    out = tmp_path / "corr.json"
    res = run_cli("correlate", "--graded", bundled_sample_path(), "--min-samples", "50", "--out", out, "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    gate = report["meta"]["reference_gate"]
    assert gate["applied"] is False and gate["reason"] == "the file carries no ideal-answer texts"
    assert report["meta"]["rows"] == 22400 and report["verdicts_withheld"] == []


def test_bad_gate_options_are_one_line_before_any_call(tiny, server, run_cli, tmp_path):
    texts, ranked = tiny
    bad = tmp_path / "bad.json"
    bad.write_text('{"refusal": {"en": ["(unclosed"]}}')
    res = run_cli("generate", "--texts", texts, "--ranked", ranked, "--out", tmp_path / "a.jsonl",
                  "--base-url", server.base_url, "--degenerate-patterns", bad)
    assert res.exit_code == 2 and "'refusal.en' pattern 1" in res.output and server.requests == 0
    assert not (tmp_path / "a.jsonl").exists()
    res = run_cli("grade", "--answers", tmp_path / "a.jsonl", "--out", tmp_path / "g.json",
                  "--base-url", server.base_url, "--long-answer-ratio", "1.2")
    assert res.exit_code == 2 and "--long-answer-ratio" in res.output and "1.5" in res.output
    res = run_cli("correlate", "--graded", tmp_path / "none.json", "--degenerate-patterns", tmp_path / "missing.json")
    assert res.exit_code == 2 and "missing.json" in res.output


def test_gate_flags_do_not_apply_to_your_own_metric_table(run_cli, tmp_path):
    table = tmp_path / "metrics.csv"
    table.write_text("grade,ndcg@10\n" + "".join(f"{1 + i % 5},{i / 20}\n" for i in range(20)))
    res = run_cli("correlate", "--table", table, "--measure-cols", "ndcg@10", "--keep-degenerate")
    assert res.exit_code == 2 and "--keep-degenerate does not apply with --table" in res.output
