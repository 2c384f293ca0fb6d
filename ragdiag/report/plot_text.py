"""Plots draw every string as plain text: configuration, embedder, run and point names are the user's,
and matplotlib would read a name holding two ``$`` as mathtext (``$\\frac$`` raises a ParseException
at save time, after the result was written). :func:`plain_text_plot` turns mathtext off
(``text.parse_math``, matplotlib ≥ 3.5) for everything a plotting function creates and draws."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def plain_text_plot(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` run with ``text.parse_math`` off (restored after): every title, label, legend entry,
    annotation and tick label it makes, and every one drawn when it saves, is shown as written."""

    @functools.wraps(draw)
    def plain(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            import matplotlib
        except ImportError:  # the plot's own check names the install command
            return draw(*args, **kwargs)
        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return plain
