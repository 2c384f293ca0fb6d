"""``ragdiag report`` over the REAL outputs of every command it reads, each made here by running the
command (small data: bundled fixtures, the dynamic-k run pair of tests/evaluate/golden/dynamic_k,
tests/pipeline/tiny_data.py, the synthetic BEIR folder, and
the local test servers — their replies are test-server output, not an LLM's).

One session-scoped run folder holds every output; each test reads it. The ``--out x.json`` files
also check the one ``--out`` rule: the suffix picks JSON, whatever the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from tests.pipeline.tiny_data import write_tiny
from tests.servers.chat_server import ChatServer
from tests.servers.embeddings_server import EmbeddingsServer
from tests.servers.toy_model import ToyModel
from tests.sweep.synthetic_corpus import DIM, MODEL, write_corpus

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
runner = CliRunner()


def _run(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "100"})
    assert result.exit_code == 0, f"ragdiag {' '.join(map(str, args))}\n{result.output}"
    return result.output


@pytest.fixture(scope="session")
def outputs(tmp_path_factory) -> dict[str, Path]:
    """Run every command the report reads once; the paths of what they wrote, by command."""
    root = tmp_path_factory.mktemp("real-outputs")
    cache = root / "cache"
    fix = FIXTURES / "graded-utility"
    paths: dict[str, Path] = {}
    deltas = ("--delta", "0.5,0.9")  # two panels per δ plot, not five: the report draws the same figures
    with pytest.MonkeyPatch.context() as patch, ChatServer() as chat, ToyModel() as toy, \
            EmbeddingsServer(dim=DIM) as embed:
        patch.setenv("OPENAI_API_KEY", "test")
        patch.setenv("OPENAI_BASE_URL", embed.base_url)  # the probes' openai: embedder
        paths["correlate"] = root / "correlate.json"
        _run("correlate", "--dataset", "msmarco", "--offline", "--out", paths["correlate"])
        paths["evaluate"] = root / "evaluate.json"
        _run("evaluate", "--run", fix / "bm25.jsonl", "--run", fix / "dense.trec", "--qrels", fix / "qrels.tsv",
             "--k", "2,3", "--pool-depth", "5", "--bootstrap", "100", "--out", paths["evaluate"])
        paths["clq"] = root / "clq.json"
        _run("clq", "--configs", FIXTURES / "clq" / "paper001-scenarios.csv", "--slo-ms", "400", "--budget", "1",
             "--out", paths["clq"])
        pair = FIXTURES.parent / "tests" / "evaluate" / "golden" / "dynamic_k"
        paths["dynamic-k"] = root / "dynamic_k.json"
        _run("dynamic-k", "--qrels", pair / "qrels.tsv", "--run-low", pair / "low.jsonl", "--run-high",
             pair / "high.jsonl", "--k-low", "10", "--k-high", "20", "--ks", "5,10", "--steps", "4", "--bootstrap", "100",
             "--out", paths["dynamic-k"])
        paths["robustness-run"] = root / "robustness_run.json"
        _run("robustness", "--run", fix / "bm25.jsonl", "--run", fix / "dense.trec", "--qrels", fix / "qrels.tsv",
             "--k", "2", *deltas, "--out", paths["robustness-run"])
        rng = np.random.default_rng(0)
        np.save(root / "base.npy", rng.normal(size=(400, 16)).astype("float32"))
        np.save(root / "queries.npy", rng.normal(size=(40, 16)).astype("float32"))
        paths["robustness"] = root / "robustness"
        _run("robustness", "--base-vectors", root / "base.npy", "--query-vectors", root / "queries.npy", "--k", "5",
             "--index-spec", "hnsw:M=8,efSearch=4|16", "--latency-queries", "10", "--repeats", "1", *deltas,
             "--out", paths["robustness"] / "robustness.json", "--plot-dir", paths["robustness"])
        emb = ["--embedder", "openai:text-embedding-3-small", "--cache-dir", cache]
        paths["probe-names"] = root / "names.json"
        _run("probe", "names", "--lang", "en", *emb, "--n-queries", "4", "--runs", "2", "--out", paths["probe-names"])
        paths["probe-noise"] = root / "noise.json"
        _run("noise", "--lang", "en", *emb, "--levels", "0,2", "--variants", "1", "--out", paths["probe-noise"])
        texts, ranked = write_tiny(root / "tiny")
        paths["pipeline"] = root / "pipeline"
        said = _run("pipeline", "--texts", texts, "--ranked", ranked, "--ks", "2,3", "--model", "ragdiag-test-server",
             "--base-url", chat.base_url, "--segments", "pooled", "--min-samples", "5", "--cache-dir", cache,
             "--no-progress", "--out-dir", paths["pipeline"])
        assert said.count("TEST SERVER: the replies and grades are ragdiag's test-server output") == 2  # verdict, end
        corpus = write_corpus(root / "synthetic", n_docs=120, n_queries=12)
        llm = ["--model", "toy", "--base-url", toy.base_url, "--cache-dir", cache, "--no-progress"]
        paths["pipeline-corpus"] = root / "corpus-run"
        _run("pipeline", "--corpus", corpus, "--retriever", f"dense:openai:{MODEL}", "--retriever", "bm25",
             "--ks", "1,3", "--embed-base-url", embed.base_url, "--segments", "pooled", "--min-samples", "5", *llm,
             "--out-dir", paths["pipeline-corpus"])
        paths["sweep"] = root / "sweep"
        _run("sweep", "--corpus", corpus, "--index", "ivf:nlist=8,nprobe=1|8", "--k", "3", "--bootstrap", "200", *deltas,
             "--embedder", f"openai:{MODEL}", "--embed-base-url", embed.base_url, "--latency-queries", "5",
             "--qps-repeats", "1", "--plot", *llm, "--out-dir", paths["sweep"])
    return paths


def _report(tmp_path: Path, *inputs: Path) -> tuple[str, list[str], str]:
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", *map(str, inputs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    html = out.read_text()
    return html, re.findall(r'<section id="[^"]+" data-kind="([^"]+)"', html), result.output


@pytest.mark.parametrize(("command", "kinds"), [
    ("correlate", ["correlate"]), ("evaluate", ["evaluate"]), ("robustness-run", ["robustness"]),
    ("probe-names", ["probe-names"]), ("probe-noise", ["probe-noise"]), ("clq", ["clq"]), ("dynamic-k", ["dynamic-k"]),
])
def test_one_result_file_of_each_command(outputs, tmp_path, command, kinds):
    html, found, _ = _report(tmp_path, outputs[command])
    assert found == kinds
    assert "<summary>run_record</summary>" in html


def test_sweep_json_and_its_run_folder(outputs, tmp_path):
    html, kinds, _ = _report(tmp_path, outputs["sweep"] / "sweep.json")
    assert kinds == ["sweep"]
    assert "Recommendation:" in html and "TEST SERVER" in html
    assert html.count("data:image/png;base64,") >= 2  # recall histogram, robustness vs recall, QPS plots
    html, kinds, log = _report(tmp_path, outputs["sweep"])
    assert kinds == ["sweep"]  # its PNGs are redrawn from sweep.json, not shown twice
    assert "its plot is redrawn" in log


def test_robustness_run_folder_with_plots(outputs, tmp_path):
    html, kinds, _ = _report(tmp_path, outputs["robustness"])
    assert kinds == ["robustness"] and "efSearch=16" in html


def test_pipeline_run_folder(outputs, tmp_path):
    html, kinds, log = _report(tmp_path, outputs["pipeline"])
    assert sorted(kinds) == ["correlate", "graded", "llm-run", "llm-run"]
    assert "TEST SERVER" in html and "not a ragdiag result" not in log


def test_pipeline_corpus_run_folder(outputs, tmp_path):
    html, kinds, log = _report(tmp_path, outputs["pipeline-corpus"])
    assert "corpus-run" in kinds and "correlate" in kinds and "graded" in kinds
    assert "not a ragdiag result" not in log  # corpus_run.json and the samples are ragdiag's own files
    html, kinds, _ = _report(tmp_path, outputs["pipeline-corpus"] / "corpus_run.json")
    assert kinds == ["corpus-run"] and "ragdiag pipeline --corpus" in html


def test_every_output_at_once(outputs, tmp_path):
    html, kinds, _ = _report(tmp_path, *outputs.values())
    assert html.count("<section ") == len(kinds) and {"correlate", "evaluate", "robustness", "sweep", "probe-names", "probe-noise", "llm-run", "graded",
            "corpus-run", "clq", "dynamic-k"} <= set(kinds)


def test_out_suffix_picks_json_for_every_command(outputs):
    for command in ("correlate", "evaluate", "robustness-run", "probe-names", "probe-noise", "clq", "dynamic-k"):
        json.loads(outputs[command].read_text())  # JSON, not the text table


def test_correlate_on_test_server_grades_says_so(outputs):
    said = _run("correlate", "--graded", outputs["pipeline"] / "graded.json", "--segments", "pooled",
                "--min-samples", "5")  # the graded file's manifest names the test-server model
    assert said.startswith("TEST SERVER: the replies and grades are ragdiag's test-server output")
