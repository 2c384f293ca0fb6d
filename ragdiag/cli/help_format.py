"""``--help`` as click's plain help, in panels and wrapped at spaces only.

- :class:`PanelCommand` lists a command's options under their panels (:data:`PANELS`: Input,
  Retrieval, LLM, Statistics, Output, then LLM client, Prompt budget, Batch, Engine and Options:
  ``--help``), each option in the panel its declaration names (``rich_help_panel``, set in
  :mod:`ragdiag.cli.options`), all panels aligned on one column, and keeps its options in that order; arguments come first, as ``NAME TYPE`` (``DIR PATH``), and the usage line names them
  ``DIR`` / ``[DIR]`` / ``DIR...``. Only click's public API is used: ``format_options``,
  ``collect_usage_pieces``, ``get_help_record`` and ``HelpFormatter.section``.
- :class:`SpaceWrappingFormatter` is click's formatter, but an option name, a metavar, a path or a
  hyphenated word in a help text is never broken at its hyphen (``--max-prompt-`` / ``tokens``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from ragdiag.cli.options import OPTIONS, PANELS
from ragdiag.cli.options.group import collect, expand

if TYPE_CHECKING:  # the typer the lock file pins (0.29) vendors click as typer._click
    from typer._click.core import Parameter
    from typer._click.formatting import HelpFormatter
else:
    HelpFormatter = typer.Context.formatter_class  # click's HelpFormatter, vendored or not
COL_MAX, COL_SPACING = 30, 2


def wrap_paragraphs(text: str, width: int, indent: str = "") -> list[str]:
    """Lines of ``text`` wrapped to ``width`` at spaces; paragraphs are blank-line separated, a
    paragraph starting with ``\\b`` keeps its line breaks (click's convention)."""
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        if lines:
            lines.append("")
        if paragraph.startswith("\b"):
            lines.extend(indent + line for line in paragraph[1:].strip("\n").splitlines())
            continue
        wrapped = textwrap.wrap(" ".join(paragraph.split()), max(width, 10), initial_indent=indent,
                                subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
        for line in wrapped:
            lines.extend(_split_list(line, max(width, 10), indent))
    return lines


def _split_list(line: str, width: int, indent: str) -> list[str]:
    """A line longer than ``width`` (one long word: a comma or ``|`` list) broken after a comma
    or a bar, never inside a name."""
    out: list[str] = []
    while len(line) > width:
        cut = max(line.rfind(",", len(indent), width), line.rfind("|", len(indent), width))
        if cut <= len(indent):
            break
        out.append(line[:cut + 1])
        line = indent + line[cut + 1:].lstrip()
    return [*out, line]


def first_column(rows: Sequence[tuple[str, str]], col_max: int = COL_MAX) -> int:
    """Width of the name column (click's rule: the longest name up to ``col_max``, plus the spacing)."""
    return min(max((len(first) for first, _ in rows), default=0), col_max) + COL_SPACING


class SpaceWrappingFormatter(HelpFormatter):
    """click's help layout (usage, paragraphs, a two-column option list) wrapped at spaces only."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        self.write("\n".join(wrap_paragraphs(text, self.width, indent)))
        self.write("\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = COL_MAX, col_spacing: int = COL_SPACING,
                 first_col: Optional[int] = None) -> None:
        """click's definition list; ``first_col`` the name column's width (default: from ``rows``)."""
        rows = list(rows)
        first_col = first_col or first_column(rows, col_max)
        pad = " " * (first_col + self.current_indent)
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - len(first)))
            else:
                self.write("\n" + pad)
            lines = wrap_paragraphs(second, max(self.width - first_col - 2, 10)) or [""]
            self.write(lines[0] + "\n")
            for line in lines[1:]:
                self.write((pad + line if line else "") + "\n")


class HelpContext(typer.Context):
    """A click context whose help formatter wraps at spaces only."""

    formatter_class = SpaceWrappingFormatter


def type_name(param: Any) -> str:
    """TEXT / INTEGER / FLOAT / PATH / BOOLEAN / [a|b] for an argument, from its declared type."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:  # typer on top of click: click names its types
        return str(getattr(param.type, "name", "text")).upper()
    if getattr(descriptor, "is_choice", False):
        return "[" + "|".join(str(getattr(c, "value", c)) for c in descriptor.choices or ()) + "]"
    if getattr(descriptor, "is_path", False):
        return "PATH"
    annotation = descriptor.annotation
    while getattr(annotation, "__args__", None) and getattr(annotation, "__origin__", None) is list:
        annotation = annotation.__args__[0]
    return {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN", Path: "PATH"}.get(annotation, "TEXT")


def argument_name(param: Parameter) -> str:
    """An argument as the usage line names it: DIR, [DIR] when optional, DIR... when repeated."""
    shown = param.metavar or (param.name or "").upper()
    return (shown if param.required else f"[{shown}]") + ("..." if param.nargs != 1 else "")


def in_panel_order(params: Sequence[Parameter]) -> list[Parameter]:
    """The arguments, then the options panel by panel (:data:`PANELS`' order), each in its declared
    order: the order of ``--help``, kept in ``params`` so that the generated CLI reference reads alike."""
    rank = {panel: i for i, panel in enumerate(PANELS)}

    def place(param: Parameter) -> int:
        if param.param_type_name == "argument":
            return -1
        return rank.get(getattr(param, "rich_help_panel", None) or OPTIONS, len(PANELS))

    return sorted(params, key=place)


class PanelCommand(TyperCommand):
    """A command whose ``--help`` lists its options in panels (see the module); an option group
    parameter stands for the group's options (:mod:`ragdiag.cli.options.group`)."""

    context_class = HelpContext

    def __init__(self, *args: Any, params: Sequence[Parameter] = (), **kwargs: Any) -> None:
        spliced, self.option_groups = expand(params)
        super().__init__(*args, params=in_panel_order(spliced), **kwargs)

    def invoke(self, ctx: Any) -> Any:
        collect(ctx.params, self.option_groups)
        return super().invoke(ctx)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            pieces += [argument_name(param)] if param.param_type_name == "argument" else param.get_usage_pieces(ctx)
        return pieces

    def format_options(self, ctx: Any, formatter: HelpFormatter) -> None:
        arguments: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((f"{param.metavar or param.name} {type_name(param)}", record[1]))
            else:
                panels.setdefault(getattr(param, "rich_help_panel", None) or OPTIONS, []).append(record)
        unknown = set(panels) - set(PANELS)
        if unknown:
            raise ValueError(f"{self.name}: options in unknown help panels {sorted(unknown)}; panels are {PANELS}")
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        width = first_column([row for rows in panels.values() for row in rows])
        for panel in PANELS:
            if panel in panels:
                with formatter.section(panel):
                    if isinstance(formatter, SpaceWrappingFormatter):
                        formatter.write_dl(panels[panel], first_col=width)
                    else:
                        formatter.write_dl(panels[panel])


class HelpGroup(TyperGroup):
    """A command group whose help wraps at spaces only (its commands are :class:`PanelCommand`)."""

    context_class = HelpContext


class PanelGroup(HelpGroup):
    """A command group that runs on its own too (``ragdiag testset`` and ``ragdiag testset certify``):
    its options in panels as :class:`PanelCommand`'s (option groups included, as there), then its commands."""

    def __init__(self, *args: Any, params: Sequence[Parameter] = (), **kwargs: Any) -> None:
        spliced, self.option_groups = expand(params)
        super().__init__(*args, params=in_panel_order(spliced), **kwargs)

    def invoke(self, ctx: Any) -> Any:
        collect(ctx.params, self.option_groups)
        return super().invoke(ctx)

    def format_options(self, ctx: Any, formatter: HelpFormatter) -> None:
        PanelCommand.format_options(self, ctx, formatter)  # type: ignore[arg-type]
        self.format_commands(ctx, formatter)
