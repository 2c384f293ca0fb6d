"""``--help`` text wrapped at spaces only: click's formatter, but an option name, a metavar, a
path or a hyphenated word in a help text is never broken at its hyphen (``--max-prompt-`` /
``tokens``). Set on every command through click's public ``Context.formatter_class``."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

try:  # recent typers vendor click as typer._click
    from typer._click.core import Context
    from typer._click.formatting import HelpFormatter, measure_table
except ImportError:  # pragma: no cover - typer on top of click
    from click.core import Context
    from click.formatting import HelpFormatter, measure_table


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


class SpaceWrappingFormatter(HelpFormatter):
    """click's help layout (usage, paragraphs, a two-column option list) wrapped at spaces only."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        self.write("\n".join(wrap_paragraphs(text, self.width, indent)))
        self.write("\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        widths = measure_table(rows)
        first_col = min(widths[0], col_max) + col_spacing if widths else col_spacing
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


class HelpContext(Context):
    """A click context whose help formatter wraps at spaces only."""

    formatter_class = SpaceWrappingFormatter


def wrap_help_at_spaces(commands: Iterable[Any]) -> None:
    """Give every command the space-wrapping help formatter."""
    for command in commands:
        command.context_class = HelpContext
