"""The ``ragdiag`` command line: a root Typer app composing one module per command group.

Command modules stay thin (parse options, call one pipeline function, render) and import
heavy libraries (torch, faiss, openai) only inside the functions that need them, so
``ragdiag --help`` starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ragdiag import __version__
from ragdiag.cli.help_format import HelpGroup, PanelCommand
from ragdiag.errors import RagdiagError

if TYPE_CHECKING:  # the typer the lock file pins (0.29) vendors click as typer._click
    from typer._click.core import Context


class _RagdiagGroup(HelpGroup):
    """Root group: turns a :class:`RagdiagError` or a usage error from any subcommand into one line
    on stderr, rewrites deprecated option spellings, and lists each command's first sentence whole."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from ragdiag.cli.usage import whole_short_help

        whole_short_help(self)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        from ragdiag.io.settings import set_invocation

        set_invocation(list(sys.argv[1:] if args is None else args))
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
        from ragdiag.cli.usage import main_one_line

        return main_one_line(super().main, self, args, prog_name=prog_name, complete_var=complete_var,
                             windows_expand_args=windows_expand_args, **extra)

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagdiagError as err:
            typer.echo(f"ragdiag: {getattr(err, 'kind', 'error')}: {err}", err=True)
            raise typer.Exit(err.exit_code) from None
        except ModuleNotFoundError as err:
            from ragdiag.extras import EXTRA_OF_MODULE, install_hint

            missing = err.name or ""
            if missing.split(".")[0] not in EXTRA_OF_MODULE:
                raise
            typer.echo(f"ragdiag: error: this command needs the '{missing}' package, which is not installed: "
                       f"{install_hint(missing)}", err=True)
            raise typer.Exit(2) from None


_ROOT_SETTINGS: dict[str, Any] = {
    "cls": _RagdiagGroup,
    "name": "ragdiag",
    "help": "Which retrieval numbers predict RAG answer quality, and where retrieval breaks.",
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_show_locals": False,
    "rich_markup_mode": None,  # click's help: option names and metavars are never cut (issue 34)
}
app = typer.Typer(**_ROOT_SETTINGS)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"ragdiag {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
    ),
    config: Path | None = typer.Option(
        None, "--config", metavar="PATH",
        help="Settings file (default: ragdiag.toml here, else [tool.ragdiag] in pyproject.toml). "
             "Precedence: flag > RAGDIAG_* environment > file > default; see `ragdiag config show`.",
    ),
) -> None:
    """Which retrieval numbers predict RAG answer quality, and where retrieval breaks."""
    from ragdiag.io.settings import applied, load_file

    settings = load_file(config)
    ctx.meta["ragdiag.io.settings"] = settings
    ctx.with_resource(applied(settings))


def _register() -> None:
    """Attach every command module, in the order of the data flow (modules import nothing heavy)."""
    from ragdiag.cli import (
        cache,
        correlate,
        generate,
        grade,
        import_data,
        index,
        noise,
        pipeline,
        probe,
        report,
        retrieve,
        robustness,
    )

    app.command("correlate", cls=PanelCommand)(correlate.correlate)
    app.command("generate", cls=PanelCommand)(generate.generate)
    app.command("grade", cls=PanelCommand)(grade.grade)
    app.command("pipeline", cls=PanelCommand)(pipeline.pipeline)
    app.add_typer(cache.app, name="cache")
    app.add_typer(index.app, name="index")
    app.command("retrieve", cls=PanelCommand)(retrieve.retrieve)
    app.command("robustness", cls=PanelCommand)(robustness.robustness)
    from ragdiag.cli import sweep as sweep_cli

    app.command("sweep", cls=PanelCommand)(sweep_cli.sweep)
    from ragdiag.cli import evaluate as evaluate_cli

    app.command("evaluate", cls=PanelCommand)(evaluate_cli.evaluate)
    from ragdiag.cli import label as label_cli

    app.command("label", cls=PanelCommand)(label_cli.label)
    app.add_typer(probe.app, name="probe")
    app.command("noise", cls=PanelCommand)(noise.noise)
    app.add_typer(import_data.app, name="import")
    app.command("report", cls=PanelCommand)(report.report)
    from ragdiag.cli import clq as clq_cli

    app.command("clq", cls=PanelCommand)(clq_cli.clq)
    from ragdiag.cli import dynamic_k as dynamic_k_cli

    app.command("dynamic-k", cls=PanelCommand)(dynamic_k_cli.dynamic_k)
    from ragdiag.cli import calibrate as calibrate_cli

    app.command("calibrate", cls=PanelCommand)(calibrate_cli.calibrate)
    from ragdiag.cli import triage as triage_cli

    app.command("triage", cls=PanelCommand)(triage_cli.triage)
    from ragdiag.cli import compare as compare_cli

    app.command("compare", cls=PanelCommand)(compare_cli.compare)
    from ragdiag.cli import testset as testset_cli

    app.add_typer(testset_cli.app, name="testset")
    index.app.command("search", cls=PanelCommand, help="Same as 'ragdiag retrieve'.")(retrieve.retrieve)
    probe.app.command("noise", cls=PanelCommand, help="Same as 'ragdiag noise'.")(noise.noise)
    from ragdiag.cli import data as data_cli

    app.add_typer(data_cli.app, name="data")
    from ragdiag.cli import batch as batch_cli

    app.add_typer(batch_cli.app, name="batch")
    from ragdiag.cli import config as config_cli

    app.add_typer(config_cli.app, name="config")


_register()


def one_command_app(args: Sequence[str]) -> typer.Typer | None:
    """For ``ragdiag NAME …``, NAME a command or a group: the root (same settings and callback) with that
    command or group alone. Typer builds the options of every command it holds before it parses (a
    pydantic adapter each); the one invoked is the only one that needs them. None when the first
    argument names none (a root option such as ``--version``, a typo): the whole app answers."""
    name = args[0] if args else None
    commands = [info for info in app.registered_commands if info.name == name]
    groups = [info for info in app.registered_groups if info.name == name]
    if not commands and not groups:
        return None
    one = typer.Typer(**_ROOT_SETTINGS)
    one.registered_callback = app.registered_callback
    one.registered_commands, one.registered_groups = commands, groups
    return one


def main() -> None:
    """Console-script entry point (a broken pipe on stdout is silence, not exit 1: :mod:`ragdiag.io.quiet_pipe`);
    the invoked command alone is built (:func:`one_command_app`)."""
    from ragdiag.io import quiet_pipe

    sys.stdout = quiet_pipe.install(sys.stdout)
    (one_command_app(sys.argv[1:]) or app)()
