"""Options shared by several commands are declared once (cli/params.py, cli/answer_options.py); a
command that tells one in its own words does so with ``retold`` / ``with_note`` / ``given``, which keep
the flag, metavar, range and check of the shared declaration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, get_args

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli import params as p

CLI = Path(__file__).resolve().parents[2] / "ragdiag" / "cli"
# one flag, different concepts: another type, another set of choices or another range on purpose
DISTINCT = {
    "--alpha": "rarity exponent (evaluate) / error level (calibrate) / one-sided level in (0, 0.5) (compare)",
    "--by": "correlate's views / calibrate's groups: other choices",
    "--format": "a run file's layout (retrieve) / batch's plain-text choice",
    "--k": "sweep: passages given to the generator, at most 1000",
    "--ks": "evaluate and dynamic-k parse their list after parsing (their error lines name --k / --ks as before)",
    "--max-drop": "mean grade drop in [0, 4] (sweep) / non-inferiority margin on any metric's Δ (compare)",
    "--metrics": "evaluate-registry names (evaluate) / METRIC@K or table columns (compare)",
    "--lang": "prompt language / BM25 language / probe languages: other types",
    "--model": "cache prune: a filter, not the chat model",
    "--plot": "sweep: a --plot/--no-plot switch",
    "--pool-depth": "PROC's candidate pool (evaluate) / depth per pool retriever (label): other ranges",
    "--queries": "noise: 'bundled' or a file (TEXT)",
}


def _info(decl):
    return get_args(decl)[1]


def test_retold_keeps_flag_metavar_range_and_check():
    told = p.retold(p.K, "Top passages.", kind=Optional[int], also=("--top",))
    kind, info = get_args(told)
    assert kind == Optional[int] and info.help == "Top passages."
    assert (info.min, info.max, info.metavar) == (1, 100_000, "INTEGER")
    assert _info(p.K).help == "Cut-off K: passages per query."  # the shared declaration is left as it was
    floats = p.retold(p.MinCoverage, "Share of items.")
    assert _info(floats).callback is _info(p.MinCoverage).callback


def test_with_note_and_given_compose_the_shared_help():
    assert _info(p.with_note(p.Plot, "The frontier.")).help == "PNG file to draw the plot into (.png). The frontier."
    assert _info(p.given(p.MaxQueries, "--corpus")).help == "With --corpus: use only the first N judged queries."
    assert _info(p.given(p.FolderQueries, "--corpus")).help.startswith("With --corpus: BEIR queries.jsonl")


def test_a_retold_option_still_checks_its_range():
    app_ = typer.Typer()

    @app_.command()
    def main(k: p.retold(p.K, "Top passages.", also=("--top",)) = 10) -> None:  # type: ignore[valid-type]
        typer.echo(k)

    runner = CliRunner()
    assert runner.invoke(app_, ["--k", "0"]).exit_code == 2
    assert runner.invoke(app_, ["--top", "100001"]).exit_code == 2
    assert runner.invoke(app_, ["--k", "7"]).output.strip() == "7"
    assert runner.invoke(app_, ["--top", "8"]).output.strip() == "8"
    assert "Top passages." in runner.invoke(app_, ["--help"]).output


def _declared_flags() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for module in CLI.glob("*.py"):
        for flag in re.findall(r'(?:Option|_option)\(\s*(?:[^,"\n]+,\s*)?"(--[a-z0-9-]+)', module.read_text()):
            found.setdefault(flag, set()).add(module.name)
    return found


def test_a_flag_is_declared_in_one_module():
    twice = {flag: sorted(modules) for flag, modules in _declared_flags().items() if len(modules) > 1}
    assert set(twice) <= set(DISTINCT), {flag: twice[flag] for flag in set(twice) - set(DISTINCT)}


@pytest.mark.parametrize("flag", sorted(DISTINCT))
def test_each_distinct_flag_is_still_declared_twice(flag):
    assert len(_declared_flags().get(flag, ())) > 1, f"{flag} is declared once now: drop it from DISTINCT"


def test_clq_and_dynamic_k_use_the_shared_output_options():
    commands = typer.main.get_command(app).commands
    for name in ("clq", "dynamic-k"):
        helps = {param.name: param.help for param in commands[name].params}
        assert helps["fmt"] == _info(p.FormatOpt).help and helps["out"] == _info(p.Out).help
        assert helps["plot"].startswith(_info(p.Plot).help + " ")
