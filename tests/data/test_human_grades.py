"""Human grade files (``calibrate --human``): a CSV is read like every ragdiag CSV (a repeated
column is refused, a long cell is read), and the ``--suggest`` sheet's formula-neutralised cells read
back as the values written."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragdiag.data.human_grades import FORMULA_STARTS, read_human_grades, read_sheet_cell, sheet_cell
from ragdiag.errors import DataError


def test_two_grade_columns_are_refused_naming_them(tmp_path):
    human = tmp_path / "human.csv"
    human.write_text("id,E,K,grade,note,grade\nq1,AM,3,2,,5\n")
    before = human.read_bytes()
    try:
        read_human_grades(human)
    except DataError as err:
        message = str(err)
    else:
        raise AssertionError("two grade columns were read")
    assert message.startswith(f"{human}: line 1: ") and "'grade'" in message and "\n" not in message
    assert human.read_bytes() == before


def test_a_cell_longer_than_pythons_csv_limit_is_read(tmp_path):
    human = tmp_path / "human.csv"
    answer = "word " * 30_000  # 150,000 characters, over csv's default 131,072
    human.write_text(f'candidate_answer,id,E,K,Nc,Np,grade\n"{answer}",q1,AM,3,50,2,4\n')
    rows = read_human_grades(human)
    assert [(r.id, r.E, r.K, r.grade, r.line) for r in rows] == [("q1", "AM", 3, 4, 2)]


def test_formula_starts_are_neutralised():
    for start in FORMULA_STARTS:
        cell = sheet_cell(start + "HYPERLINK(\"http://x\")")
        assert cell.startswith("'") and read_sheet_cell(cell) == start + "HYPERLINK(\"http://x\")"
    assert sheet_cell("plain answer") == "plain answer" and sheet_cell("'=1") == "''=1"


@given(st.text(alphabet=st.sampled_from(["=", "+", "-", "@", "'", "\t", "\r", "a", " ", "1"]), max_size=6))
def test_every_value_reads_back_unchanged_and_no_cell_starts_a_formula(value):
    cell = sheet_cell(value)
    assert read_sheet_cell(cell) == value
    assert not cell.startswith(FORMULA_STARTS)
