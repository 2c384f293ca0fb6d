"""Issue 39: per-query tables (correlate --table, compare's table sides) read as the other inputs are —
by suffix, else by content, or by ``--table-format``; a table of another shape names what it looks like
and the flag that reads it; compare finds the query-id column by its common names."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app

runner = CliRunner()
GRADES = [1, 2, 3, 4, 5, 2, 3, 4, 5, 1, 4, 5]


def _table(path: Path, shift: float = 0.0) -> Path:
    """A per-query CSV table (whatever ``path``'s suffix) with the id column ``qid``."""
    rows = [f"q{i},{min(1.0, g / 5 + shift):.3f},{g}" for i, g in enumerate(GRADES)]
    path.write_text("qid,ndcg,grade\n" + "\n".join(rows) + "\n")
    return path


def test_a_table_without_a_table_suffix_is_read_by_its_content(tmp_path):
    """Before: ``unknown table format '.out'``."""
    done = runner.invoke(app, ["correlate", "--table", str(_table(tmp_path / "export.out")), "--measure-cols", "ndcg",
                               "--min-samples", "2", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert '"ndcg"' in done.stdout


def test_a_table_of_another_shape_names_it_and_the_flag_that_reads_it(tmp_path):
    """Before: ``malformed JSON on line 1, column 1`` and nothing more."""
    table = _table(tmp_path / "export.jsonl")
    done = runner.invoke(app, ["correlate", "--table", str(table), "--measure-cols", "ndcg", "--min-samples", "2"])
    assert done.exit_code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragdiag: error: "), done.stderr
    assert "this looks like CSV with columns qid, ndcg, grade: read it with `--table-format csv`" in lines[0]
    forced = runner.invoke(app, ["correlate", "--table", str(table), "--table-format", "csv", "--measure-cols", "ndcg",
                                 "--min-samples", "2", "--format", "json"])
    assert forced.exit_code == 0, forced.output


def test_compare_pairs_tables_on_a_common_query_id_name(tmp_path):
    """Before: ``field 'query_id': no such column (--id-col)`` for a table keyed by ``qid``."""
    base, new = _table(tmp_path / "base.csv"), _table(tmp_path / "new.tsv.txt", shift=0.05)
    done = runner.invoke(app, ["compare", "--base", str(base), "--new", str(new), "--out", str(tmp_path / "gate.json")])
    assert done.exit_code in (0, 1), done.output  # the gate's decision, not an input error
    assert "ndcg" in (tmp_path / "gate.json").read_text()
    jsonl = _table(tmp_path / "new.jsonl", shift=0.05)
    refused = runner.invoke(app, ["compare", "--base", str(base), "--new", str(jsonl)])
    assert refused.exit_code == 2 and "read it with `--table-format csv`" in refused.stderr, refused.output


def test_reference_answers_are_read_from_a_table(tmp_path):
    """Before: ``--answers answers.csv`` stopped on malformed JSON; now CSV, TSV, a JSON list or Parquet."""
    from ragdiag.data.reference_answers import load_reference_answers
    from ragdiag.errors import DataError

    csv = tmp_path / "answers.csv"
    csv.write_text('qid,answer\nq1,"Paris, the capital"\nq2,42\n')
    assert load_reference_answers(csv) == {"q1": ["Paris, the capital"], "q2": ["42"]}
    listed = tmp_path / "answers.json"
    listed.write_text('[{"query_id": "q1", "answers": ["a", "b", "a"]}]')
    assert load_reference_answers(listed) == {"q1": ["a", "b"]}
    lines = tmp_path / "answers.jsonl"
    lines.write_text('{"query_id": "q1", "answer": "a"}\n')
    assert load_reference_answers(lines) == {"q1": ["a"]}  # JSON lines as before
    unnamed = tmp_path / "other.csv"
    unnamed.write_text("question,text\nq1,a\n")
    with pytest.raises(DataError, match=r"no query id field \(recognised: query_id\|_id\|qid\|id\|question_id\); "
                                        r"this looks like CSV with columns question, text"):
        load_reference_answers(unnamed)
