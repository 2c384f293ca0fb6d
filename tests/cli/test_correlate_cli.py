"""``ragdiag correlate`` driven through the real Typer app."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tools.synthetic import synthetic_graded

runner = CliRunner()


@pytest.fixture(scope="module")
def graded_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("graded") / "graded.json"
    path.write_text(json.dumps(synthetic_graded(n_queries=25, seed=9, keep=0.9)))
    return path


def _invoke(*args: str):
    return runner.invoke(app, ["correlate", *args])


def test_json_output_has_the_documented_shape(graded_file, tmp_path):
    out = tmp_path / "r.json"
    result = _invoke("--graded", str(graded_file), "--min-samples", "50", "--alpha-grid", "l30^0.8",
                     "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["meta"]["source_sha256"] and report["meta"]["kinds"] == ["spearman", "pearson", "kendall_b", "kendall_c"]
    row = report["results"][0]
    assert set(row) >= {"segment", "measure", "n", "spearman", "pearson", "kendall_b", "kendall_c"}
    assert set(row["spearman"]) == {"value", "alpha"}
    assert "^KtoN^" in row["segment"]
    assert report["verdicts"]


def test_rerun_gives_identical_numbers(graded_file, tmp_path):
    args = ["--graded", str(graded_file), "--min-samples", "50", "--alpha-grid", "l30^0.8", "--bootstrap", "5",
            "--seed", "3", "--segments", "nw", "--format", "json"]
    first, second = _invoke(*args), _invoke(*args)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["results"] == json.loads(second.stdout)["results"]
    assert json.loads(first.stdout)["meta"]["seed"] == 3


def test_bootstrap_compare_and_system_view(graded_file, tmp_path):
    plot = tmp_path / "heat.png"
    result = _invoke("--graded", str(graded_file), "--segments", "nw", "--min-samples", "50", "--alpha-grid", "l30^0.8",
                     "--corr", "spearman", "--bootstrap", "20", "--compare", "T,F", "--by", "config",
                     "--delta", "0.3,0.5", "--plot", str(plot), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for row in report["results"]:
        low, high = row["spearman"]["ci"]
        assert low <= high
    comparison = report["comparisons"][0]
    assert comparison["measures"] == ["T", "F"] and "ci" in comparison["spearman"]
    system = report["system"]
    assert {"robustness@0.3", "robustness@0.5", "recall_mean"} <= {c["statistic"] for c in system["correlations"]}
    assert all(set(g["robustness"]) == {"0.3", "0.5"} for g in system["groups"])
    assert all(v["lead_holds"] is not None for v in report["verdicts"] if v["runner_up"])
    assert plot.stat().st_size > 1000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_table_and_csv(graded_file, tmp_path):
    result = _invoke("--graded", str(graded_file), "--min-samples", "50", "--alpha-grid", "l30^0.8", "--corr", "spearman")
    assert result.exit_code == 0, result.output
    assert "max spearman correlation" in result.stdout and "Verdict" in result.stdout
    csv_out = tmp_path / "r.csv"
    result = _invoke("--graded", str(graded_file), "--min-samples", "50", "--alpha-grid", "l30^0.8",
                     "--format", "csv", "--out", str(csv_out))
    lines = csv_out.read_text().splitlines()
    assert lines[0] == "segment,measure,n,side,kind,value,alpha,ci_low,ci_high" and len(lines) > 10


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "marco"], "--dataset: 'marco' is not one of 'msmarco', 'arxiv'"),
        (["--measures", "F,Q"], "unknown measure 'Q': expected one of F, E, T, T', nDCG, P, R"),
        (["--corr", "spearman,tau"], "unknown correlation kind 'tau'"),
        (["--alpha-grid", "x^y"], "bad --alpha-grid 'x^y'"),
        (["--compare", "T"], "--compare: 'T': expected two measures"),
        (["--by", "query"], "--by: 'query' is not one of 'config'"),
        ([], "give exactly one of --dataset NAME or --graded PATH"),
    ],
)
def test_bad_options_give_one_clear_line(args, message, graded_file):
    extra = [] if args and args[0] == "--dataset" or not args else ["--graded", str(graded_file)]
    result = _invoke(*extra, *args)
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_bad_file_gives_one_clear_line(tmp_path):
    path = tmp_path / "g.json"
    records = synthetic_graded(n_queries=2, seed=1, configs=(("M", 30, 2, range(2, 5)),), embedders=("AM",))
    records[2]["inK"] = [1]
    path.write_text(json.dumps(records))
    result = _invoke("--graded", str(path))
    assert result.exit_code == 2
    assert f"{path}: record 3: field 'inK': has 1 items but K = 4" in result.stderr  # records[2]: 1-based
    missing = _invoke("--graded", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "nope.json: file not found" in missing.stderr


def test_unreachable_hub_falls_back_with_a_notice(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    result = _invoke("--dataset", "msmarco", "--alpha-grid", "l20^0.8", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "Hugging Face hub unreachable: using the bundled sample" in result.stderr
    report = json.loads(result.stdout)
    assert report["meta"]["simulated_grades"] is True and report["results"]
    refused = _invoke("--dataset", "msmarco", "--no-fallback")
    assert refused.exit_code == 2 and "cannot be reached" in refused.stderr


def test_offline_table_says_simulated_grades():
    result = _invoke("--dataset", "msmarco", "--offline", "--alpha-grid", "l20^0.8", "--corr", "spearman")
    assert result.exit_code == 0, result.output
    assert "SIMULATED GRADES" in result.stdout and "--offline" in result.stderr


def test_help_imports_no_heavy_library():
    heavy = ("torch", "sentence_transformers", "faiss", "openai", "voyageai", "httpx", "datasets", "matplotlib", "bm25s")
    code = "import sys; from ragdiag.cli import app; app(['--help'], standalone_mode=False); " \
           f"loaded = [m for m in {heavy!r} if m in sys.modules]; print(loaded, file=sys.stderr); sys.exit(1 if loaded else 0)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "correlate" in done.stdout


@pytest.mark.parametrize("given, flag", [
    (["--segments", "ratio"], "--segments"),  # the default value, given: still refused
    (["--measures", "F,E,T,nDCG"], "--measures"),
    (["--xk", "2"], "--xk"),
    (["--dataset", "msmarco", "--xk", "3"], "--dataset"),  # the first in the documented order
])
def test_table_refuses_an_option_the_user_gave_even_at_its_default(given, flag, graded_file):
    result = _invoke("--table", str(graded_file), "--measure-cols", "K", *given)
    assert result.exit_code == 2
    assert f"{flag} does not apply with --table" in result.stderr and result.stderr.count("\n") == 1


def test_table_accepts_options_left_at_their_defaults(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("grade,m\n" + "".join(f"{i % 5 + 1},{(i * 7) % 11}\n" for i in range(30)))
    result = _invoke("--table", str(table), "--measure-cols", "m", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["meta"]["measures"] == ["m"]


def test_progress_is_silent_for_short_work_and_keeps_every_item(capsys):
    from ragdiag.commands.correlate import PROGRESS_MIN_ITEMS, progress_over_items

    short = list(range(PROGRESS_MIN_ITEMS - 1))
    assert progress_over_items(short, "correlating") is short
    long = list(range(3 * PROGRESS_MIN_ITEMS))
    assert list(progress_over_items(long, "correlating")) == long
    assert capsys.readouterr().err == ""  # a log (not a terminal) gets a line only after LINE_EVERY_S seconds


def test_no_output_overwrites_the_bundled_sample_that_dataset_reads():
    """``--dataset`` reads the bundled sample when offline: ``--out`` naming it is refused before any work."""
    from ragdiag.data.loaders import bundled_sample_path

    sample = bundled_sample_path()
    before = sample.read_bytes()
    res = runner.invoke(app, ["correlate", "--dataset", "msmarco", "--offline", "--out", str(sample)])
    assert res.exit_code == 2 and "would overwrite the input" in res.output and str(sample) in res.output
    assert sample.read_bytes() == before
