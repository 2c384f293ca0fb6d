"""Options shared by several commands are declared once (the ``ragdiag/cli/options/`` package); a
command that tells one in its own words does so with ``retold`` / ``with_note`` / ``given`` inside
``Annotated``, which keep the flag, metavar, range, check and help panel of the shared declaration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Optional, get_args

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli import options as o

CLI = Path(__file__).resolve().parents[2] / "ragdiag" / "cli"
# one flag, different concepts: another type, another set of choices or another range on purpose
DISTINCT = {
    "--alpha": "rarity exponent (evaluate) / error level (calibrate) / one-sided level in (0, 0.5) (compare)",
    "--batch-size": "texts per embedding call / compare's judged loop: questions answered and graded per look",
    "--by": "correlate's views / calibrate's groups: other choices",
    "--format": "a run file's layout (retrieve) / batch's plain-text choice",
    "--k": "sweep: passages given to the generator, at most 1000",
    "--kind": "cache: an entry kind / data inspect: the kind of file (corpus, questions, qrels …)",
    "--ks": "evaluate and dynamic-k parse their list after parsing (their error lines name --k / --ks as before)",
    "--max-drop": "mean grade drop in [0, 4] (sweep) / non-inferiority margin on any metric's Δ (compare)",
    "--metric": "index build's vector metric (cosine, ip, l2) / testset certify's METRIC@K that orders the systems",
    "--metrics": "evaluate-registry names (evaluate) / METRIC@K or table columns (compare)",
    "--lang": "prompt language / BM25 language / probe languages: other types",
    "--model": "cache prune: a filter, not the chat model",
    "--plot": "sweep: a --plot/--no-plot switch",
    "--plan": "compare: the queries a paired comparison needs (with --budget also the spend on Δ) / calibrate: the next spend over questions, judge repeats and human labels",
    "--budget": "clq: the cost per 1,000 queries a configuration may have / calibrate --plan and compare --plan: the money to allocate",
    "--pool-depth": "PROC's candidate pool (evaluate) / depth per pool retriever (label): other ranges",
    "--runs": "noise: a count of runs / testset certify: run files (paths)",
    "--max-queries": "triage and others: queries to take from the input / compare --sequential: where the replay stops",
    "--pool": "label: the pool it judges / testset: the pool graded with --label-pool only (its help says so)",
    "--queries": "noise: 'bundled' or a file (TEXT)",
    "--repeats": "grade/label: judge each answer N times (1–100) / triage: generations and gradings per variant (1–20)",
}


def _info(decl):
    return get_args(decl)[1]


def test_retold_keeps_flag_metavar_range_check_and_panel():
    told = o.retold(o.K, "Top passages.", also=("--top",))
    assert told.help == "Top passages." and told.param_decls[-1] == "--top"
    assert (told.min, told.max, told.metavar, told.rich_help_panel) == (1, 100_000, "INTEGER", o.RETRIEVAL)
    assert _info(o.K).help == "Cut-off K: passages per query."  # the shared declaration is left as it was
    assert _info(o.K).param_decls == () and told.param_decls == ("--top",)
    floats = o.retold(o.MinCoverage, "Share of items.")
    assert floats.callback is _info(o.MinCoverage).callback
    moved = o.retold(o.CacheDir, panel=o.INPUT)
    assert (moved.help, moved.rich_help_panel) == (_info(o.CacheDir).help, o.INPUT)


def test_with_note_and_given_compose_the_shared_help():
    assert o.with_note(o.Plot, "The frontier.").help == "PNG file to draw the plot into (.png). The frontier."
    assert o.given(o.MaxQueries, "--corpus").help == "With --corpus: use only the first N judged queries."
    assert o.given(o.FolderQueries, "--corpus").help.startswith("With --corpus: BEIR queries.jsonl")


Top = Annotated[int, o.retold(o.K, "Top passages.", also=("--top",))]


def test_a_retold_option_still_checks_its_range():
    app_ = typer.Typer()

    @app_.command()
    def main(k: Top = 10) -> None:
        typer.echo(k)

    runner = CliRunner()
    assert runner.invoke(app_, ["--k", "0"]).exit_code == 2
    assert runner.invoke(app_, ["--top", "100001"]).exit_code == 2
    assert runner.invoke(app_, ["--k", "7"]).output.strip() == "7"
    assert runner.invoke(app_, ["--top", "8"]).output.strip() == "8"
    assert "Top passages." in runner.invoke(app_, ["--help"]).output


def test_a_retold_option_may_take_another_value_type():
    app_ = typer.Typer()

    @app_.command()
    def main(k: Annotated[Optional[int], o.retold(o.K, "Optional here.")] = None) -> None:
        typer.echo(repr(k))

    runner = CliRunner()
    assert runner.invoke(app_, []).output.strip() == "None"
    assert runner.invoke(app_, ["--k", "3"]).output.strip() == "3"


def _declared_flags() -> dict[str, set[str]]:
    """Flag → the modules declaring it (``typer.Option("--x"``, ``option(PANEL, "--x"``, ``*_option(PANEL, "--x"``);
    the ``options`` package counts as one module, the one home of shared declarations."""
    found: dict[str, set[str]] = {}
    for module in CLI.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        home = module.relative_to(CLI).parts[0].removesuffix(".py")
        for flag in re.findall(r'(?:Option|option)\(\s*(?:[^,"\n()]+,\s*)?"(--[a-z0-9-]+)', text):
            found.setdefault(flag, set()).add(home)
    return found


def test_the_declaration_scan_sees_the_shared_and_the_command_declarations():
    flags = _declared_flags()
    assert flags["--qrels"] == {"options"} and flags["--model"] >= {"options", "cache"}
    assert flags["--ranked-out"] == {"generate"} and flags["--refine-seed"] == {"label"} and flags["--dir"] == {"data"}


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
        assert helps["fmt"] == _info(o.FormatOpt).help and helps["out"] == _info(o.Out).help
        assert helps["plot"].startswith(_info(o.Plot).help + " ")


def test_cli_rewrites_no_signature_and_evaluates_no_annotation():
    """Option groups are plain parameters: nothing in cli/ rewrites a signature or calls eval()."""
    for module in CLI.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert "__signature__" not in text and not re.search(r"\beval\(", text), module.name
        assert not re.search(r"\._usage_display_name\s*=|rich_utils", text), module.name
