"""Issue 9, inputs and output paths of correlate, generate, grade and pipeline, through the real CLI.

Every bad input ends in exit 2 and exactly one stderr line that names the file, the record (1-based)
or line, and the field; no traceback; the inputs are byte-identical afterwards; no output file
(or manifest) appears. Validation runs before any call: grade and generate run with
``--cache replay`` on an empty cache and no server, so a row that slipped through would fail with a
replay miss instead of the expected message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.pipeline.tiny_data import ranked_samples, texts_samples
from tools.synthetic import synthetic_graded

REPLAY = ["--cache", "replay", "--base-url", "http://127.0.0.1:9/v1", "--no-progress"]


def _run(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _one_line_error(code: int, stderr: str, *needles: str) -> None:
    assert code == 2, stderr
    assert stderr.startswith("ragdiag: error: ") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr
    for needle in needles:
        assert needle in stderr, (needle, stderr)


def _snapshot(*paths: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in paths}


# ---------------------------------------------------------------- correlate --graded


def _graded() -> list[dict]:
    return synthetic_graded(n_queries=3, seed=2, configs=(("M", 30, 3, range(2, 8)),), embedders=("AM",))


GRADED_CASES: list[tuple[str, Callable[[list[dict]], None], str]] = [
    ("Np > Nc", lambda r: r[1].update(Np=31), "record 2: field 'Np': 31 positives exceed Nc = 30"),
    ("K > Nc", lambda r: r[1].update(Nc=2, Np=1, K=3, inK=[0, 0, 1]), "record 2: field 'K': cut-off 3 exceeds Nc = 2"),
    ("Nc < 0", lambda r: r[0].update(Nc=-5), "record 1: field 'Nc': -5 is not a positive candidate count"),
    ("Nc = 0", lambda r: r[0].update(Nc=0), "record 1: field 'Nc': 0 is not a positive candidate count"),
    ("Np < 0", lambda r: r[2].update(Np=-4), "record 3: field 'Np': -4 is not a positive count"),
    ("K < 1", lambda r: r[2].update(K=0, inK=[]), "record 3: field 'K': 0 is not a positive cut-off"),
    ("K not int", lambda r: r[2].update(K="abc"), "record 3: field 'K': expected int, got str"),
    ("K float", lambda r: r[2].update(K=2.0), "record 3: field 'K': expected int, got float"),
    ("inK shorter", lambda r: r[3].update(inK=[1]), "record 4: field 'inK': has 1 items but K ="),
    ("inK longer", lambda r: r[3].update(inK=r[3]["inK"] + [0]), "record 4: field 'inK': has"),
    ("inK 2", lambda r: r[3].update(inK=[2] * r[3]["K"]), "record 4: field 'inK': items must be 0 or 1"),
    ("inK bool", lambda r: r[3].update(inK=[True] * r[3]["K"]), "record 4: field 'inK': items must be 0 or 1"),
    ("inK not list", lambda r: r[3].update(inK="0101"), "record 4: field 'inK': expected list, got str"),
    ("sum(inK) > Np", lambda r: r[5].update(inK=[1] * 7, K=7), "record 6: field 'inK': 7 positives in the top K exceed Np = 3"),
    ("grade 0", lambda r: r[0].update(grade=0), "record 1: field 'grade': 0 is not a finite grade between 1 and 5"),
    ("grade 6", lambda r: r[0].update(grade=6), "record 1: field 'grade': 6 is not a finite grade"),
    ("grade 1e400", lambda r: r[0].update(grade=10**400), "malformed JSON at line 1"),
    ("grade string", lambda r: r[0].update(grade="5"), "record 1: field 'grade': '5' is not"),
    ("grade bool", lambda r: r[0].update(grade=True), "record 1: field 'grade': True is not"),
    ("grade missing", lambda r: r[0].pop("grade"), "record 1: field 'grade': missing"),
    ("id missing", lambda r: r[4].pop("id"), "record 5: field 'id': missing"),
    ("id number", lambda r: r[4].update(id=7), "record 5: field 'id': expected str, got int"),
    ("E null", lambda r: r[4].update(E=None), "record 5: field 'E': expected str, got NoneType"),
    ("not an object", lambda r: r.__setitem__(4, [1, 2]), "record 5: expected a JSON object, got list"),
    ("duplicate key", lambda r: r.append(dict(r[2])), "records 3 and 19 are the same sample (id 'M-0', E 'AM', Nc 30, Np 3, K 4)"),
]


@pytest.mark.parametrize("name, mutate, expected", GRADED_CASES, ids=[c[0] for c in GRADED_CASES])
def test_correlate_rejects_impossible_rows(tmp_path, name, mutate, expected):
    records = _graded()
    assert len(records) == 18
    mutate(records)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(records))
    before = _snapshot(path)
    out = tmp_path / "report.json"
    code, _, err = _run("correlate", "--graded", path, "--min-samples", "1", "--out", out)
    _one_line_error(code, err, f"{path}: {expected}")
    assert _snapshot(path) == before and not out.exists()


@pytest.mark.parametrize("content, expected", [
    (b'{"id": "M-0"}', "record 1: field 'E': missing"),  # one JSON line
    (b'[{"id": "M-0",\n "E": }]', "malformed JSON at line 2"),
    (b'{"id": 1}\n{"id": \n', "malformed JSON on line 2"),
    (b'[1, 2]', "record 1: expected a JSON object, got int"),
    (b'\x89PNG\r\n\x1a\n\x00\x00', "line 1: not UTF-8 text (byte offset 0: invalid start byte)"),
    (b'[{"grade": NaN}]', "malformed JSON at line 1"),
])
def test_correlate_rejects_files_that_are_not_graded_lists(tmp_path, content, expected):
    path = tmp_path / "g.json"
    path.write_bytes(content)
    code, _, err = _run("correlate", "--graded", path)
    _one_line_error(code, err, str(path), expected)
    assert path.read_bytes() == content


def test_correlate_jsonl_line_numbers_are_one_based(tmp_path):
    records = _graded()
    records[0]["Np"] = 99
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    code, _, err = _run("correlate", "--graded", path)
    _one_line_error(code, err, f"{path}: record 1: field 'Np': 99 positives exceed Nc = 30")


@pytest.mark.parametrize("out_kind", ["same", "symlink", "hardlink"])
def test_correlate_out_never_overwrites_the_graded_file(tmp_path, out_kind):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(_graded()))
    before = _snapshot(path)
    out = {"same": path, "symlink": tmp_path / "link.json", "hardlink": tmp_path / "hard.json"}[out_kind]
    if out_kind == "symlink":
        out.symlink_to(path)
    elif out_kind == "hardlink":
        out.hardlink_to(path)
    code, _, err = _run("correlate", "--graded", path, "--min-samples", "1", "--out", out)
    _one_line_error(code, err, "would overwrite the input", str(path))
    assert _snapshot(path) == before


@pytest.mark.parametrize("grid, expected", [
    ("0^inf^1", "must be finite"), ("0^1^nan", "must be finite"), ("0^1^0", "step must be positive"),
    ("0^1^-0.5", "step must be positive"), ("0^1^1e-9", "exceed the limit of 100,000"),
    ("l1000000^0.9", "exceed the limit of 100,000"), ("l5^1", "B must lie strictly between 0 and 1"),
    ("x^y", "expected lN^B"),
])
def test_correlate_bad_alpha_grid_is_one_line_before_loading(tmp_path, grid, expected):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(_graded()))
    code, _, err = _run("correlate", "--graded", path, "--alpha-grid", grid)
    _one_line_error(code, err, f"--alpha-grid '{grid}'", expected)


# ---------------------------------------------------------------- generate --texts/--ranked


def _tiny(tmp_path: Path, ranked_mutation: Callable[[list[dict]], None] | None = None) -> tuple[Path, Path]:
    texts, ranked = tmp_path / "texts.json", tmp_path / "ranked.json"
    texts.write_text(json.dumps(texts_samples()))
    rows = ranked_samples()
    if ranked_mutation:
        ranked_mutation(rows)
    ranked.write_text(json.dumps(rows))
    return texts, ranked


RANK_CASES = [
    ("rank -1", lambda r: r[1].update(rank=[-1, 0, 1, 2, 3, 4]), "record 2: field 'rank': item 0 is -1, not a candidate index 0..5"),
    ("rank >= Nc", lambda r: r[1].update(rank=[0, 1, 2, 3, 4, 6]), "record 2: field 'rank': item 5 is 6, not a candidate index"),
    ("rank 999", lambda r: r[0].update(rank=[999, 0, 1, 2, 3, 4]), "record 1: field 'rank': item 0 is 999"),
    ("rank duplicate", lambda r: r[2].update(rank=[0, 0, 1, 2, 3, 4]), "record 3: field 'rank': candidate 0 appears twice (item 1)"),
    ("rank short", lambda r: r[2].update(rank=[0, 0, 0]), "record 3: field 'rank': has 3 items, expected Nc = 6"),
    ("rank bool", lambda r: r[2].update(rank=[True, 0, 2, 3, 4, 5]), "record 3: field 'rank': item 0 is True, expected an integer"),
    ("Np > Nc", lambda r: r[3].update(Np=7), "record 4: field 'Np': 7 is not between 1 and Nc = 6"),
    ("K zero", lambda r: r[3].update(K=[0, 3, 5]), "record 4: field 'K': cut-offs must be positive"),
    ("P NaN-free", lambda r: r[3].update(P=["x", 0.5, 0.4]), "record 4: field 'P': every item must be a finite number"),
]


@pytest.mark.parametrize("name, mutate, expected", RANK_CASES, ids=[c[0] for c in RANK_CASES])
def test_generate_rank_must_be_a_permutation(tmp_path, name, mutate, expected):
    texts, ranked = _tiny(tmp_path, mutate)
    before = _snapshot(texts, ranked)
    out = tmp_path / "answers.jsonl"
    code, _, err = _run("generate", "--texts", texts, "--ranked", ranked, "--out", out, "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, f"{ranked}: {expected}")
    assert _snapshot(texts, ranked) == before
    assert not out.exists() and not Path(f"{out}.manifest.json").exists()


@pytest.mark.parametrize("target", ["texts", "ranked", "manifest-of-out"])
def test_generate_outputs_never_overwrite_inputs(tmp_path, target):
    texts, ranked = _tiny(tmp_path)
    if target == "manifest-of-out":
        # --out answers.jsonl would write answers.jsonl.manifest.json, which is the --ranked file here
        ranked = ranked.rename(tmp_path / "answers.jsonl.manifest.json")
        out = tmp_path / "answers.jsonl"
    else:
        out = {"texts": texts, "ranked": ranked}[target]
    before = _snapshot(texts, ranked)
    code, _, err = _run("generate", "--texts", texts, "--ranked", ranked, "--out", out, "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, "would overwrite the input")
    assert _snapshot(texts, ranked) == before


def test_grade_out_and_its_manifest_never_overwrite_the_answers(tmp_path):
    answers = tmp_path / "g.json.manifest.json"
    answers.write_text(json.dumps({"kind": "ideal", "id": "M-1", "q": "q", "answer": "a"}) + "\n")
    before = _snapshot(answers)
    code, _, err = _run("grade", "--answers", answers, "--out", tmp_path / "g.json", "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, "manifest", "would overwrite the input")
    code, _, err = _run("grade", "--answers", answers, "--out", answers, "--cache-dir", tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, "would overwrite the input")
    assert _snapshot(answers) == before and not (tmp_path / "g.json").exists()


# ---------------------------------------------------------------- grade --answers


def _answers_rows() -> list[dict]:
    """A well-formed answers file as ``ragdiag generate`` writes it (meta, ideal, topK rows)."""
    rows: list[dict] = [{"kind": "meta", "meta": {"command": "generate"}}]
    for sample in ranked_samples()[:2]:
        rows.append({"kind": "ideal", "id": sample["id"], "q": "What?", "answer": "ideal text"})
    for sample in ranked_samples()[:2]:
        for k in (2, 3):
            top = sample["rank"][:k]
            in_k = [1 if i < 2 else 0 for i in top]
            rows.append({"kind": "topK", "id": sample["id"], "E": "AM", "Nc": 6, "Np": 2, "K": k, "rank": top,
                         "inK": in_k, "P": sum(in_k) / k, "R": sum(in_k) / 2, "q": "What?", "answer": "top text"})
    return rows


ANSWER_CASES = [
    ("K abc", 3, lambda r: r.update(K="abc"), "line 4: field 'K': expected int, got str"),
    ("inK longer than K", 3, lambda r: r.update(inK=r["inK"] + [0]), "line 4: field 'inK': has 3 items but K = 2"),
    ("Np negative", 3, lambda r: r.update(Np=-4), "line 4: field 'Np': -4 is not a positive count"),
    ("Np > Nc", 3, lambda r: r.update(Np=9), "line 4: field 'Np': 9 positives exceed Nc = 6"),
    ("answer not a string", 4, lambda r: r.update(answer=42), "line 5: field 'answer': must be a string or null, got int"),
    ("ideal answer a list", 1, lambda r: r.update(answer=["a"]), "line 2: field 'answer': must be a string or null, got list"),
    ("null question", 3, lambda r: r.update(q=None), "line 4: field 'q': the question must be a string, got NoneType"),
    ("ideal without id", 1, lambda r: r.pop("id"), "line 2: field 'id': missing or not a non-empty string"),
    ("rank out of range", 3, lambda r: r.update(rank=[0, 9]), "line 4: field 'rank': items must be distinct candidate indices 0..5"),
    ("rank repeated", 3, lambda r: r.update(rank=[0, 0]), "line 4: field 'rank': items must be distinct"),
    ("inK contradicts rank", 3, lambda r: r.update(inK=[0, 0]), "line 4: field 'inK': does not match rank"),
    ("P not a number", 3, lambda r: r.update(P="half"), "line 4: field 'P': expected a finite number, got 'half'"),
    ("unknown kind", 3, lambda r: r.update(kind="top"), "line 4: field 'kind': expected meta, ideal or topK, got 'top'"),
]


@pytest.mark.parametrize("name, index, mutate, expected", ANSWER_CASES, ids=[c[0] for c in ANSWER_CASES])
def test_grade_validates_the_whole_answers_file_before_any_call(tmp_path, name, index, mutate, expected):
    rows = _answers_rows()
    mutate(rows[index])
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = _snapshot(answers)
    out = tmp_path / "graded.json"
    code, _, err = _run("grade", "--answers", answers, "--out", out, "--cache-dir", tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, f"{answers}: {expected}")
    assert _snapshot(answers) == before and not out.exists() and not Path(f"{out}.manifest.json").exists()


@pytest.mark.parametrize("duplicate, expected", [
    (1, "line 8: field 'id': a second ideal row for 'M-1' (first on line 2)"),
    (4, "line 8: the same top-K row as line 5 (id 'M-1', E 'AM', Nc 6, Np 2, K 3)"),
])
def test_grade_rejects_duplicated_rows_naming_both_lines(tmp_path, duplicate, expected):
    rows = _answers_rows()
    rows.append(dict(rows[duplicate]))
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, _, err = _run("grade", "--answers", answers, "--out", tmp_path / "g.json", "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, f"{answers}: {expected}")


def test_grade_line_numbers_count_blank_lines(tmp_path):
    rows = _answers_rows()
    rows[3]["Np"] = 0
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n\n" + "".join(json.dumps(r) + "\n" for r in rows))  # two blank lines first
    code, _, err = _run("grade", "--answers", answers, "--out", tmp_path / "g.json", "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, f"{answers}: line 6: field 'Np': 0 is not a positive count")


def test_a_valid_answers_file_passes_validation_and_reaches_the_cache(tmp_path):
    """The control: the same file unmutated gets past validation (and fails only on the replay miss)."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in _answers_rows()))
    code, _, err = _run("grade", "--answers", answers, "--out", tmp_path / "g.json", "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    assert code == 2 and "line" not in err.split("error:", 1)[1][:40]
    assert "replay" in err or "no LLM call cache" in err or "cache" in err


# ---------------------------------------------------------------- generate: reported, not silently dropped


def test_generate_reports_ranked_samples_without_texts_and_k_above_nc(tmp_path, monkeypatch):
    from tests.servers.chat_server import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    texts, ranked = _tiny(tmp_path, lambda r: [r.append(dict(r[0], id=f"M-{9 + i}")) for i in range(7)])
    out = tmp_path / "answers.jsonl"
    with ChatServer() as server:
        code, _, err = _run("generate", "--texts", texts, "--ranked", ranked, "--ks", "2,7", "--out", out,
                            "--cache-dir", tmp_path / "cache", "--base-url", server.base_url, "--no-progress")
    assert code == 0, err
    assert "skipped 7 ranked sample(s) with no texts sample" in err and "M-9, M-10, M-11, M-12, M-13 …" in err
    assert "skipped 4 (ranked sample, K) pair(s) whose K exceeds the sample's Nc: M-1 (E=AM, Nc=6, Np=2, K=7)" in err
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["skipped"]["ranked_without_texts"] == {"count": 7, "first": [f"M-{i}" for i in range(9, 14)]}
    assert manifest["skipped"]["k_above_nc"]["count"] == 4
    assert manifest["run_record"]["command"] == "ragdiag generate"
    assert {i["path"] for i in manifest["run_record"]["inputs"]} == {str(texts), str(ranked)}
    assert manifest["run_record"]["prompts"] == {"generation": "generation@v2", "degenerate-patterns": "degenerate-patterns@v1"}


@pytest.mark.parametrize("name", ["answers.jsonl", "graded.json", "correlation.json", "graded.json.manifest.json",
                                  "answers.jsonl.manifest.json"])
def test_pipeline_outputs_never_overwrite_an_input_inside_out_dir(tmp_path, name):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    texts, ranked = _tiny(tmp_path)
    ranked = ranked.rename(out_dir / name)  # the --ranked file sits where the pipeline would write
    before = _snapshot(texts, ranked)
    code, _, err = _run("pipeline", "--texts", texts, "--ranked", ranked, "--out-dir", out_dir, "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, "would overwrite the input", name)
    assert _snapshot(texts, ranked) == before and sorted(p.name for p in out_dir.iterdir()) == [name]


def test_pipeline_out_dir_that_is_a_file_is_refused(tmp_path):
    texts, ranked = _tiny(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.write_text("not a folder")
    code, _, err = _run("pipeline", "--texts", texts, "--ranked", ranked, "--out-dir", out_dir, "--cache-dir",
                        tmp_path / "cache", *REPLAY)
    _one_line_error(code, err, str(out_dir), "not a folder")
    assert out_dir.read_text() == "not a folder"
