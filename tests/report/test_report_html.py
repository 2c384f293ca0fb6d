"""``ragdiag report``: sections by result kind, labels, escaping of untrusted strings, one-line errors."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.commands.report import build_report
from ragdiag.report.html.inputs import kind_of
from tests.report.tamper import assert_report_refuses

from .conftest import HOSTILE, HOSTILE_GROUP

runner = CliRunner()


@pytest.fixture(scope="module")
def page(results_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "report.html"
    result = runner.invoke(app, ["report", str(results_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(), result.output


def test_every_result_kind_gets_a_section_in_reading_order(page):
    html, log = page
    kinds = re.findall(r'<section id="[^"]+" data-kind="([^"]+)"', html)
    assert kinds == ["correlate", "correlate", "evaluate", "robustness", "probe-names", "llm-run", "graded"]
    assert "skipped" in log and "notes.json: not a ragdiag result" in log
    assert html.count('<li><a href="#') == len(kinds)  # contents list: one entry per section


def test_verdict_heatmap_labels_and_run_record(page):
    html, _ = page
    assert 'class="verdict"' in html and "predicts the grade best" in html
    assert html.count("data:image/png;base64,") >= 4  # 2 heatmaps, robustness plots, name bars
    assert "TEST SERVER" in html  # the manifest's replies came from the test server
    assert "<summary>run_record</summary>" in html and "ragdiag correlate" in html
    assert "segment codes: EMBEDDER^SUBSET^side" in html


def test_untrusted_strings_are_escaped(page):
    html, _ = page
    assert HOSTILE not in html and HOSTILE_GROUP not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("<script>") == 1  # only the page's own sorter


def test_no_network_reference(page):
    html, _ = page
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "default-src 'none'" in html


def test_simulated_label(tmp_path, results_dir):
    doc = json.loads((results_dir / "correlate.json").read_text())
    doc["meta"]["simulated_grades"] = True
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(doc))
    html, sections, _ = build_report([path])
    assert "SIMULATED GRADES" in html and [s.kind for s in sections] == ["correlate"]


def test_unknown_file_is_one_line_error(tmp_path, results_dir):
    result = runner.invoke(app, ["report", str(results_dir / "notes.json"), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"ragdiag: error: {results_dir / 'notes.json'}: not a ragdiag result the report knows (top-level: hello); "
        "expected correlate, robustness, sweep, evaluate, probe, generate/grade manifest or graded JSON"]
    result = runner.invoke(app, ["report", str(results_dir / "correlate.json"), "--out",
                                 str(results_dir / "correlate.json")])
    assert result.exit_code == 2 and "would overwrite the input" in result.output


def test_kinds_by_keys():
    assert kind_of({"results": [], "verdicts": []}) == "correlate"
    assert kind_of({"meta": {"command": "ragdiag sweep"}, "points": []}) == "sweep"
    assert kind_of({"params": {}, "runs": []}) == "evaluate"
    assert kind_of([{"lang": "en", "embedder": "x", "levels": []}]) == "probe-noise"
    assert kind_of([{"grade": 3, "inK": [1]}]) == "graded"
    assert kind_of({"summary": {}, "run": {}}) == "llm-run"
    assert kind_of({"a": 1}) is None and kind_of([1, 2]) is None


def test_sweep_section_shows_grades_recommendation_and_test_server(tmp_path, results_dir):
    doc = json.loads((results_dir / "robustness.json").read_text())
    for point in doc["points"]:
        point.update(label=f"hnsw ef={point['params']['efSearch']}", grade_mean=3.5, grade_ci=[3.2, 3.8],
                     grade_diff_vs_exact={"value": -0.25, "ci": [-0.5, 0.0]})
    doc["meta"]["llm"] = {"model": "ragdiag-test-server"}
    doc["controls"] = [{"name": "exact", "grade_mean": 3.75, "grade_ci": [3.5, 4.0], "n_graded": 150}]
    doc["recommendation"] = {"point": "hnsw ef=16", "reason": "fastest point within 0.3 grade points of exact"}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(doc))
    html, sections, _ = build_report([path])
    assert [s.kind for s in sections] == ["sweep"]
    assert "Recommendation:</strong> hnsw ef=16" in html and "3.500 [3.200, 3.800]" in html
    assert "-0.250 [-0.500, 0.000]" in html and "TEST SERVER" in html


def test_evaluate_section_has_metrics_with_intervals(page):
    html, _ = page
    section = html[html.index('data-kind="evaluate"'):]
    section = section[: section.index("</section>")]
    assert "ra_nwg" in section and "95% interval" in section and re.search(r"\[\d\.\d{3}, \d\.\d{3}\]", section)
    # the decision first, then one row per run, every metric row folded
    assert section.index("<strong>Decision</strong>") < section.index("runs at a glance") < section.index("<details>")
    glance = section[section.index("runs at a glance"):section.index("<details>")]
    assert glance.count("<tr>") == 1 + 2 and "RA-nWG" in glance and "PROC" in glance
    assert "<summary>every metric (" in section


def test_graded_rows_from_a_test_server_are_labelled(tmp_path, results_dir):
    run = tmp_path / "run"
    run.mkdir()
    (run / "graded.json").write_text((results_dir / "inputs" / "graded.json").read_text())
    html, _, _ = build_report([run / "graded.json"])
    assert "TEST SERVER" not in html
    (run / "graded.json.manifest.json").write_text((results_dir / "graded.json.manifest.json").read_text())
    html, sections, _ = build_report([run / "graded.json"])
    assert [s.kind for s in sections] == ["graded"] and "TEST SERVER" in html


def test_the_page_renders_objects_it_is_given(results_dir):
    """The renderers open no file: a correlate result, graded rows and the manifest beside them,
    given in memory under paths that do not exist, make the same sections the files make, heatmap
    drawn in memory included."""
    from ragdiag.report.html.build import build_page
    from ragdiag.report.html.inputs import Input

    manifest = json.loads((results_dir / "graded.json.manifest.json").read_text())
    rows = json.loads((results_dir / "inputs" / "graded.json").read_text())
    correlate = json.loads((results_dir / "correlate.json").read_text())
    nowhere = Path("/nonexistent/ragdiag")
    html, sections = build_page([Input("graded", nowhere / "graded.json", rows, sidecars=[manifest]),
                                 Input("correlate", nowhere / "correlate.json", correlate)], [str(nowhere)])
    assert [s.kind for s in sections] == ["correlate", "graded"]
    assert "TEST SERVER" in sections[1].body and "TEST SERVER" not in sections[0].body
    assert sections[0].body.count("data:image/png;base64,") == 1  # the heatmap
    _, from_files, _ = build_report([results_dir / "correlate.json"])
    assert from_files[0].body == sections[0].body


def test_pngs_beside_a_result_are_not_shown_twice(tmp_path, results_dir, page):
    """A PNG the module's report already drew (any real PNG will do: the folder, not the picture, decides) sits
    beside a robustness result, which redraws its plots, and alone in another folder."""
    folder = tmp_path / "rob"
    folder.mkdir()
    (folder / "robustness.json").write_text((results_dir / "robustness.json").read_text())
    html = page[0]
    png = html[html.index("data:image/png;base64,") + 22:].split('"')[0]
    (folder / "robustness_vs_recall.png").write_bytes(base64.b64decode(png))
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "figure.png").write_bytes((folder / "robustness_vs_recall.png").read_bytes())
    html, sections, notes = build_report([folder, alone])
    assert [s.kind for s in sections] == ["robustness", "plot"] and sections[1].title == "Plot: figure.png"
    assert notes == [f"skipped {folder / 'robustness_vs_recall.png'}: its plot is redrawn from the result beside it"]


def test_noise_section_shows_recovery_flags(tmp_path):
    levels = [{"level": lv, "name": n, "cosine_to_clean": c, "cosine_to_clean_sd": 0.01, "cosine_to_reference": r,
               "cosine_to_reference_sd": 0.02, "drop_pct": d, "recovery_pct": rec}
              for lv, n, c, r, d, rec in ((0, "none", 1.0, 0.70, 0.0, None), (2, "moderate", 0.9, 0.69, 1.4, -5900.0))]
    levels[1]["recovery_flag"] = "absurd: -5900% — the rewrites moved the queries away from their references"
    path = tmp_path / "noise.json"
    path.write_text(json.dumps({"meta": {"probe": "noise"}, "lang": "en", "embedder": "e", "levels": levels}))
    html, sections, _ = build_report([path])
    assert [s.kind for s in sections] == ["probe-noise"]
    assert "recovery ⚠" in html and "absurd: -5900%" in html


# ---------------------------------------------------------------- issue 18: wrong field types are one line


TAMPERED = [
    ("correlate.json", ["results", 2, "n"], "thirty", "field 'results[2].n' is wrong: expected number, got str"),
    ("correlate.json", ["results"], {"a": 1}, "field 'results' is wrong: expected a list, got dict"),
    ("correlate.json", ["meta", "measures"], "T,F", "field 'meta.measures' is wrong: expected a list, got str"),
    ("correlate.json", ["verdicts", 0, "lead"], KeyError, "field 'verdicts[0].lead' is wrong: missing"),
    ("correlate.json", ["verdicts", 0, "best_mean"], True, "field 'verdicts[0].best_mean' is wrong: expected number or null, got bool"),
    ("robustness.json", ["points", 1, "robustness"], [0.5], "field 'points[1].robustness' is wrong: expected an object, got list"),
    ("robustness.json", ["points", 0, "recall_mean"], "high", "field 'points[0].recall_mean' is wrong"),
    ("evaluate.json", ["runs", 0, "metrics"], 7, "field 'runs[0].metrics' is wrong: expected a list or null, got int"),
    ("names.json", ["ablations", 1], "strip", "field 'ablations[1]' is wrong: expected an object, got str"),
    ("graded.json.manifest.json", ["summary"], [1, 2], "field 'summary' is wrong: expected an object, got list"),
]


@pytest.mark.parametrize("name, path, value, needle", TAMPERED, ids=[f"{t[0]}:{'.'.join(map(str, t[1]))}" for t in TAMPERED])
def test_a_recognised_result_with_wrong_field_types_is_one_line(tmp_path, results_dir, name, path, value, needle):
    assert_report_refuses(json.loads((results_dir / name).read_text()), path, value, needle, tmp_path / name)


def test_graded_rows_with_a_wrong_grade_type_are_one_line(tmp_path):
    bad = tmp_path / "graded.json"
    bad.write_text(json.dumps([{"id": "q1", "inK": [1], "grade": 4}, {"id": "q2", "inK": [0], "grade": "four"}]))
    result = runner.invoke(app, ["report", str(bad), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "field '[1].grade' is wrong: expected number or null, got str" in result.stderr


def test_every_real_result_of_the_page_passes_the_shape_check(results_dir):
    from ragdiag.commands.report import collect
    from ragdiag.report.html.shapes import check_shape

    inputs, _ = collect([results_dir])
    for item in inputs:
        check_shape(item.kind, item.doc, str(item.path))  # raises on a false refusal
    assert {item.kind for item in inputs} >= {"correlate", "robustness", "evaluate", "probe-names", "llm-run", "graded"}


def test_names_on_own_queries_get_their_section():
    """``probe names --queries`` results (tests/probes/golden/names_real.json, through the test
    embeddings server): the change per ablation with its interval and the queries that lose most."""
    golden = Path(__file__).resolve().parents[1] / "probes" / "golden" / "names_real.json"
    html, sections, _ = build_report([golden])
    assert [s.kind for s in sections] == ["probe-names-queries"]
    doc = json.loads(golden.read_text())
    mask = doc["impacts"][0]
    assert f"+{mask['difference']['ra_nwg']['value']:.3f}" in html and "Δ RA-nWG@5" in html
    assert "who is NAME" in html and "test server" in html.lower()
