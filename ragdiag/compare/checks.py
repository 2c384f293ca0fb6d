"""The checks both ways of running ``compare`` share (files already scored, and the judged loop): the gate's
option ranges, a side's name, and the names the outputs give the two sides. Nothing is read or written."""

from __future__ import annotations

from pathlib import Path

from ragdiag.compare.gate import GateOptions
from ragdiag.compare.paired import CORRECTIONS, TESTS
from ragdiag.errors import RagdiagError

NAME_MAX = 80


def check_options(o: GateOptions) -> None:
    """The ranges of issue 31, checked again for callers of the library (the CLI checks them first)."""
    if o.test not in TESTS:
        raise RagdiagError(f"--test must be one of {', '.join(TESTS)}, got {o.test!r}")
    if o.correction not in CORRECTIONS:
        raise RagdiagError(f"--correction must be one of {', '.join(CORRECTIONS)}, got {o.correction!r}")
    if not 0 < o.alpha < 0.5:
        raise RagdiagError(f"--alpha must be in (0, 0.5), got {o.alpha}")
    if not 0 < o.power < 1:
        raise RagdiagError(f"--power must be in (0, 1), got {o.power}")
    if not o.mde > 0:
        raise RagdiagError(f"--mde must be above 0, got {o.mde}")
    if not o.max_drop >= 0:
        raise RagdiagError(f"--max-drop must be at least 0, got {o.max_drop}")
    if o.plan and o.mde <= o.max_drop:
        raise RagdiagError(f"--mde {o.mde:g} must exceed --max-drop {o.max_drop:g}: the plan sizes the test that tells a "
                           "drop of --mde from one within the margin")


def check_name(flag: str, name: str) -> None:
    """A side's name (--base-name, --new-name): 1–80 characters, none of them a control character."""
    if not name.strip() or len(name) > NAME_MAX or not name.isprintable():
        raise RagdiagError(f"{flag} {name!r}: expected 1–{NAME_MAX} printable characters (no line breaks or control "
                           "characters)")


def check_names(base_name: str | None, new_name: str | None) -> None:
    """``--base-name`` and ``--new-name`` when given."""
    for flag, name in (("--base-name", base_name), ("--new-name", new_name)):
        if name is not None:
            check_name(flag, name)


def side_names(base: Path, new: Path | None, base_name: str | None, new_name: str | None) -> tuple[str, str | None]:
    """The names the outputs call the two sides: --base-name / --new-name, else the file names (the
    paths as given when both files have the same name)."""
    same = new is not None and base.name == new.name
    return (base_name or (str(base) if same else base.name),
            None if new is None else new_name or (str(new) if same else new.name))
