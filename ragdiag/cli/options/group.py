"""An option group: declared once as a frozen dataclass, attached to a command in one line, handed to
it as one typed object (pip's ``cmdoptions.make_option_group``, with typer's declarations).

A group is a dataclass whose fields are shared option declarations with their defaults::

    @dataclass(frozen=True)
    class EngineGroup(OptionGroup):
        engine: EngineOpt = EngineKind.local
        ...

    ENGINE = EngineGroup()

and a command takes it as one parameter, ``engine: o.EngineGroup = o.ENGINE``. Typer reads the
dataclass like any command function (:func:`group_options`: ``typer.main.get_command`` on a one-command
app), so each field is a typer option with its flag, metavar, range, check and panel; a type checker
sees every field. :class:`ragdiag.cli.help_format.PanelCommand` puts the group's options where the
parameter stands (:func:`expand`) and, when the command runs, builds the dataclass from their values
(:func:`collect`). Nothing rewrites a signature or evaluates an annotation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import typer
import typer.main


class OptionGroup:
    """Base of the option groups (frozen dataclasses of option declarations with their defaults)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The group's parameter names, in ``--help`` order."""
        return tuple(field.name for field in dataclasses.fields(cls))  # type: ignore[arg-type]


_OPTIONS: dict[type[OptionGroup], tuple[Any, ...]] = {}


def group_options(group: type[OptionGroup]) -> tuple[Any, ...]:
    """The click options of ``group``'s fields, as typer makes them from the dataclass (made once)."""
    if group not in _OPTIONS:
        app = typer.Typer(add_completion=False)
        app.command()(group)
        _OPTIONS[group] = tuple(typer.main.get_command(app).params)
    return _OPTIONS[group]


def expand(params: Sequence[Any]) -> tuple[list[Any], dict[str, type[OptionGroup]]]:
    """``params`` with each group parameter (its default an :class:`OptionGroup`) replaced in place by
    the group's options; and the group parameters by name."""
    spliced: list[Any] = []
    groups: dict[str, type[OptionGroup]] = {}
    for param in params:
        if isinstance(param.default, OptionGroup):
            groups[param.name] = type(param.default)
            spliced.extend(group_options(type(param.default)))
        else:
            spliced.append(param)
    return spliced, groups


def collect(values: dict[str, Any], groups: dict[str, type[OptionGroup]]) -> None:
    """Replace, in a command's parsed ``values``, each group's option values by the group object."""
    for name, group in groups.items():
        values[name] = group(**{field: values.pop(field) for field in group.names()})
