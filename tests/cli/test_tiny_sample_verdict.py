"""Issue 39: correlate gave a verdict on 4 rows without a warning; a verdict on fewer than 10 rows now
carries one, a verdict on enough rows does not."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ragdiag.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_a_verdict_on_four_rows_carries_a_warning(tmp_path):
    imported = CliRunner().invoke(app, ["import", "ragas", str(ROOT / "fixtures/byod/ragas_1to5.jsonl"),
                                        "--out", str(tmp_path / "byod")])
    assert imported.exit_code == 0, imported.output
    done = CliRunner().invoke(app, ["correlate", "--graded", str(tmp_path / "byod/graded.json"),
                                    "--segments", "pooled", "--min-samples", "2"])
    assert done.exit_code == 0, done.output
    assert "warning: only 4 rows behind this verdict" in " ".join(done.stdout.split())


def test_a_verdict_on_the_bundled_sample_has_no_tiny_sample_warning():
    from ragdiag.report.correlate_report import tiny_sample_clause

    assert tiny_sample_clause(10) == "" and tiny_sample_clause(9).startswith("warning: only 9 rows")
