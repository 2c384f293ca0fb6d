"""Plots draw every string as plain text: configuration, embedder, run and point names are the user's,
and matplotlib would read a name holding two ``$`` as mathtext (``$\\frac$`` raises a ParseException
at save time, after the result was written). :func:`plain_text_plot` turns mathtext off
(``text.parse_math``, matplotlib ≥ 3.5) for everything a plotting function creates and draws; the
encoder (:mod:`ragdiag.io.figures`) keeps it off for what is laid out while saving.

A plotting function returns its :class:`~matplotlib.figure.Figure` (several: :class:`NamedFigure`,
named by the file a command writes it to) and writes nothing; :func:`at_dpi` gives a figure the
resolution it is saved at, once its layout is done."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, ParamSpec, TypeVar

if TYPE_CHECKING:
    from matplotlib.figure import Figure

P = ParamSpec("P")
R = TypeVar("R")


class NamedFigure(NamedTuple):
    """A figure and the file name it is written as (e.g. ``robustness_vs_recall.png``)."""

    name: str
    figure: Figure


def at_dpi(fig: Figure, dpi: float) -> Figure:
    """``fig`` saved at ``dpi`` (set after the layout, as ``savefig(dpi=…)`` did: the same pixels)."""
    fig.set_dpi(dpi)
    return fig


def plain_text_plot(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` run with ``text.parse_math`` off (restored after): every title, label, legend entry,
    annotation and tick label it makes is shown as written."""

    @functools.wraps(draw)
    def plain(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            import matplotlib
        except ImportError:  # the plot's own check names the install command
            return draw(*args, **kwargs)
        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return plain
