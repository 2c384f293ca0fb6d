"""A matplotlib figure as PNG bytes: the one encoding of every ragdiag plot, shared by the files the
commands write (:func:`ragdiag.io.writer.write_figure`) and the images the HTML report embeds.

PNG at the figure's own resolution (a renderer sets it last, after its layout: ``fig.set_dpi``),
matplotlib's default metadata (its ``Software`` key, no timestamp: the bytes are deterministic), and
mathtext off (``text.parse_math``): every string in a ragdiag plot is plain text, and tick labels and
legends are laid out while saving (:mod:`ragdiag.report.plot_text`).
"""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save_png(fig: Figure, target: IO[bytes] | str) -> None:
    """Draw ``fig`` into ``target`` (a binary stream or a file name) as PNG at ``fig.dpi``.

    A figure whose ``tight_layout()`` already ran keeps a placeholder layout engine, for which
    matplotlib draws the whole figure once more before printing it, to lay out nothing; it is dropped
    first (the same bytes, one draw fewer: ~20% of the save). A live engine (constrained) is kept."""
    import matplotlib
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    with matplotlib.rc_context({"text.parse_math": False, "figure.autolayout": False,
                                "figure.constrained_layout.use": False}):
        if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
            fig.set_layout_engine(None)
        fig.savefig(target, format="png", dpi=fig.dpi)


def png_bytes(fig: Figure, *, close: bool = True) -> bytes:
    """The PNG of ``fig`` in memory (the bytes :func:`ragdiag.io.writer.write_figure` writes);
    the figure is closed unless ``close`` is False."""
    buffer = io.BytesIO()
    try:
        save_png(fig, buffer)
    finally:
        if close:
            close_figure(fig)
    return buffer.getvalue()


def close_figure(fig: Figure) -> None:
    """Release ``fig`` from pyplot's figure manager (its memory is freed with the last reference)."""
    import matplotlib.pyplot as plt

    plt.close(fig)
