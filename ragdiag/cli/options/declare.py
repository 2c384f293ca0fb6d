"""How an option is declared: its help panel, its metavar, its checked range, and a shared
declaration told in a command's own words.

Every option names its panel (``rich_help_panel``, typer's public attribute): :data:`PANELS` in the
order ``--help`` shows them (:class:`ragdiag.cli.help_format.PanelCommand`). A shared declaration is
an ``Annotated[T, typer.Option(...)]`` alias; a command that describes it in its own words writes
``Annotated[T, retold(Shared, "...")]`` (a plain call inside ``Annotated``'s metadata, which type
checkers accept), keeping its flag, metavar, range, check and panel.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, Optional, get_args

import typer

INTEGER, FLOAT, TEXT, PATH = "INTEGER", "FLOAT", "TEXT", "PATH"
SEED_MAX = 2**32 - 1

Panel = Literal["Input", "Retrieval", "LLM", "Statistics", "Output", "LLM client", "Prompt budget", "Batch", "Engine",
                "Options"]
INPUT: Panel = "Input"
RETRIEVAL: Panel = "Retrieval"
LLM: Panel = "LLM"  # what to ask and of whom: --model, --base-url first, then the command's own choices
STATISTICS: Panel = "Statistics"
OUTPUT: Panel = "Output"
LLM_CLIENT: Panel = "LLM client"  # how the calls are made: cache, workers, seed, retries, rate limits, prices
PROMPT_BUDGET: Panel = "Prompt budget"  # --max-prompt-tokens, --fit, --tokenizer, --chars-per-token, --max-answer-tokens
BATCH: Panel = "Batch"  # --batch and its files
ENGINE_PANEL: Panel = "Engine"  # where the embeddings and LLM calls run
OPTIONS: Panel = "Options"  # --help
# what a user sets first leads: inputs, --k, --model and --base-url; the rest comes after Output
PANELS: tuple[Panel, ...] = (INPUT, RETRIEVAL, LLM, STATISTICS, OUTPUT, LLM_CLIENT, PROMPT_BUDGET, BATCH, ENGINE_PANEL, OPTIONS)


def option(panel: Panel, *decls: str, **extra: Any) -> Any:
    """``typer.Option(*decls, **extra)`` shown under ``panel`` in ``--help``."""
    return typer.Option(*decls, rich_help_panel=panel, **extra)


def choices_metavar(enum: type[Enum]) -> str:
    """``[a|b|c]``, click's conventional metavar for a closed choice."""
    return "[" + "|".join(str(member.value) for member in enum) + "]"


def _interval(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    left = "(" if lo_open or lo is None else "["
    right = ")" if hi_open or hi is None else "]"
    return f"{left}{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}{right}"


def finite_float(
    lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False,
    optional: bool = False,
) -> Callable[[Optional[float]], Optional[float]]:
    """A typer callback accepting only finite floats in the interval (rejects nan, ±inf)."""
    where = _interval(lo, hi, lo_open, hi_open)

    def check(value: Optional[float]) -> Optional[float]:
        if value is None and optional:
            return value
        if value is None or not math.isfinite(value):
            raise typer.BadParameter(f"{value} is not a finite number; expected a number in {where}")
        too_low = lo is not None and (value <= lo if lo_open else value < lo)
        too_high = hi is not None and (value >= hi if hi_open else value > hi)
        if too_low or too_high:
            raise typer.BadParameter(f"{value:g} is out of range; expected a number in {where}")
        return value

    return check


def float_option(panel: Panel, flag: str, help_text: str, lo: float | None = None, hi: float | None = None, *,
                 lo_open: bool = False, hi_open: bool = False, optional: bool = False, **extra: Any) -> Any:
    """A float option: finite and within the interval (stated in the help), checked before any work."""
    where = _interval(lo, hi, lo_open, hi_open)
    check = finite_float(lo, hi, lo_open=lo_open, hi_open=hi_open, optional=optional)
    return option(panel, flag, help=f"{help_text} Range {where}.", metavar=FLOAT, callback=check, **extra)


def path_option(panel: Panel, flag: str, help_text: str, **extra: Any) -> Any:
    """A command's own file or folder option (metavar PATH)."""
    return option(panel, flag, help=help_text, metavar=PATH, **extra)


def text_option(panel: Panel, flag: str, help_text: str, **extra: Any) -> Any:
    """A command's own free-text option (metavar TEXT)."""
    return option(panel, flag, help=help_text, metavar=TEXT, **extra)


def int_option(panel: Panel, flag: str, help_text: str, lo: int, hi: int, **extra: Any) -> Any:
    """A command's own integer option, range [lo, hi] checked before any work."""
    return option(panel, flag, help=help_text, metavar=INTEGER, min=lo, max=hi, **extra)


def _info(decl: Any) -> Any:
    """The ``typer.Option`` of a shared ``Annotated`` declaration."""
    return get_args(decl)[1]


def retold(decl: Any, help_text: str | None = None, *, also: tuple[str, ...] = (), panel: Panel | None = None) -> Any:
    """A shared declaration in a command's own words: the same flag, metavar, range, check and panel,
    with this help text (``None``: the shared one); ``also`` more flag names, ``panel`` another panel.
    Used as ``Annotated[T, retold(Shared, "...")]``."""
    info = copy.copy(_info(decl))
    if help_text is not None:
        info.help = help_text
    info.param_decls = (*info.param_decls, *also)
    if panel is not None:
        info.rich_help_panel = panel
    return info


def with_note(decl: Any, sentence: str) -> Any:
    """A shared declaration whose help says one thing more for this command (a sentence after it)."""
    return retold(decl, f"{_info(decl).help} {sentence}")


def given(decl: Any, flag: str) -> Any:
    """A shared declaration that applies only with ``flag``: its help starts "With FLAG: "."""
    text = _info(decl).help
    lead = text if text.split(" ", 1)[0].isupper() else text[:1].lower() + text[1:]
    return retold(decl, f"With {flag}: {lead}")


def checked_by(module: str, function: str) -> Callable[[Optional[str]], Optional[str]]:
    """A typer callback running a library parser (imported on use) on the value, so a bad value is a
    one-line usage error before any work; the value itself is passed on unchanged."""

    def check(value: Optional[str]) -> Optional[str]:
        if value is None:
            return value
        from importlib import import_module

        from ragdiag.errors import RagdiagError

        try:
            getattr(import_module(module), function)(value)
        except RagdiagError as err:
            raise typer.BadParameter(str(err)) from None
        return value

    return check
