"""Names drawn in plots are the user's (configurations, embedders, runs, sweep points, policies): a
name holding ``$…$`` is drawn as written, never parsed as mathtext (which raised a ParseException
while saving, after the result file was written). The plotting functions return figures; the
writer (:func:`ragdiag.io.writer.write_figure`) and the HTML report save them outside the plotting
function, so these tests also prove the encoder keeps mathtext off (:mod:`ragdiag.io.figures`)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.io.writer import write_figure
from tools.synthetic import synthetic_graded

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (r"$\frac{bm}{25}$", "$$", r"dense $x^2$ ($\alpha")  # each raised inside matplotlib's mathtext


def _png(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_function_that_draws_a_figure_is_plain_text():
    """A new plot gets the decorator too: every report function making a figure (``subplots()``,
    ``plt.figure()``, ``Figure()``) or saving one (none may: tests/architecture/test_renderers.py)."""
    missing = []
    for module in sorted((ROOT / "ragdiag" / "report").rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)  # once per module (ast.get_source_segment splits it per function)
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef):
                continue
            source = "".join(lines[node.lineno - 1:node.end_lineno])  # the function's lines, its body's calls
            draws = any(call in source for call in ("subplots(", "plt.figure(", "Figure(", ".savefig("))
            if draws and not any(isinstance(d, ast.Name) and d.id == "plain_text_plot" for d in node.decorator_list):
                missing.append(f"{module.relative_to(ROOT)}:{node.name}")
    assert not missing, missing


def test_clq_plot_draws_dollar_names(tmp_path):
    configs = tmp_path / "configs.csv"
    rows = [f'"{name}",{12 * (i + 1)},{0.1 * (i + 1):.1f},{0.6 + 0.05 * i},{0.55 + 0.05 * i}' for i, name in enumerate(HOSTILE)]
    configs.write_text("name,latency_p50_ms,cost_per_1k,ra_nwg@10,nrecall4@10\n" + "\n".join(rows) + "\n")
    out, plot = tmp_path / "clq.json", tmp_path / "clq.png"
    done = CliRunner().invoke(app, ["clq", "--configs", str(configs), "--out", str(out), "--plot", str(plot),
                                    "--slo-ms", "30"])
    assert done.exit_code == 0, done.output
    _png(plot)
    assert [c["name"] for c in json.loads(out.read_text())["configs"]] == list(HOSTILE)


def test_correlate_grade_plot_draws_dollar_embedders(tmp_path):
    records = [r for r in synthetic_graded(n_queries=12, seed=2, keep=0.9, embedders=HOSTILE[:2])
               if r["grade"] is not None]
    graded = tmp_path / "graded.json"
    graded.write_text(json.dumps(records))
    plot, grade_plot = tmp_path / "heat.png", tmp_path / "grades.png"
    done = CliRunner().invoke(app, ["correlate", "--graded", str(graded), "--segments", "pooled", "--min-samples", "20",
                                    "--plot", str(plot), "--grade-plot", str(grade_plot)])
    assert done.exit_code == 0, done.output
    _png(plot)
    _png(grade_plot)


def _renamed(doc, keys: tuple[str, ...], names: dict[str, str]):
    """``doc`` with the string values under ``keys`` (at any depth) replaced through ``names``."""
    if isinstance(doc, list):
        return [_renamed(v, keys, names) for v in doc]
    if isinstance(doc, dict):
        return {k: (names.setdefault(v, HOSTILE[len(names) % 3] + f" {len(names)}") if k in keys and isinstance(v, str)
                    else _renamed(v, keys, names)) for k, v in doc.items()}
    return doc


def test_evaluate_sweep_and_dynamic_k_plots_draw_dollar_names(tmp_path):
    from ragdiag.report import dynamic_k_report, evaluate_report
    from ragdiag.report.sweep_accuracy import plot_relative_accuracy
    from ragdiag.report.sweep_report import plot_sweep
    from ragdiag.results.dynamic_k import DynamicKResult
    from ragdiag.results.evaluate import EvaluateResult
    from ragdiag.results.sweep import SweepResult

    golden = json.loads((ROOT / "tests" / "evaluate" / "golden" / "evaluate.json").read_text())
    result = EvaluateResult.from_json(_renamed(golden, ("run", "a", "b"), {}))
    assert "$$ 1" in [r.run for r in result.runs]
    _png(write_figure(tmp_path / "evaluate.png", evaluate_report.plot(result)))
    golden = json.loads((ROOT / "tests" / "evaluate" / "golden" / "dynamic_k.json").read_text())
    dynamic = DynamicKResult.from_json(_renamed(golden, ("label",), {}))
    _png(write_figure(tmp_path / "dynamic_k.png", dynamic_k_report.plot(dynamic)))
    golden = json.loads((ROOT / "tests" / "sweep" / "golden" / "sweep.json").read_text())
    sweep = SweepResult.from_json(_renamed(golden, ("label",), {}))
    for name, figure in [*plot_sweep(sweep), plot_relative_accuracy(sweep)]:
        _png(write_figure(tmp_path / name, figure))


@pytest.mark.parametrize("kind", ["names", "noise"])
def test_probe_plots_draw_dollar_embedders(tmp_path, kind):
    from ragdiag.report import probe_report
    from ragdiag.results.probes import NamesResult, NoiseResult

    golden = json.loads((ROOT / "tests" / "probes" / "golden" / f"{kind}.json").read_text())
    names: dict[str, str] = {}
    docs = _renamed(golden if isinstance(golden, list) else [golden], ("embedder",), names)
    assert names
    plot = tmp_path / f"{kind}.png"
    if kind == "names":
        figure = probe_report.names_plot([NamesResult.from_json(d) for d in docs])
    else:
        figure = probe_report.noise_plot([NoiseResult.from_json(d) for d in docs])
    _png(write_figure(plot, figure))


def test_robustness_plots_draw_dollar_run_labels(tmp_path):
    from ragdiag.report.robustness_plots import robustness_figures
    from ragdiag.results.robustness import RobustnessResult

    golden = json.loads((ROOT / "tests" / "bench" / "golden" / "runs.json").read_text())
    names: dict[str, str] = {}
    result = RobustnessResult.from_json(_renamed(golden, ("label", "spec"), names))
    assert names
    written = robustness_figures(result)
    assert written
    for name, figure in written:
        _png(write_figure(tmp_path / name, figure))
