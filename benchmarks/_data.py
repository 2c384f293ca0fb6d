"""Where the benchmarks find their datasets: ``--data DIR`` (BEIR folders named as ``ragdiag data get``
names them), else ``$RAGDIAG_DATA`` / the user data dir, else ``../shared/data`` beside the clone
(the project's workplace copy) when it is there.

``ragdiag data get scifact`` (and ``msmarco``, ``spf-qr-fr``) fills the data folder. The workplace
copy names its MS MARCO sample ``msmarco-passage-sample``: :func:`dataset` accepts either name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKPLACE = ROOT.parent / "shared" / "data"
ALIASES = {"msmarco": ("msmarco", "msmarco-passage-sample")}


def data_dir() -> Path:
    """``--data DIR`` from the command line (other arguments are left alone), else the default above."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--data", type=Path, default=None)
    given = parser.parse_known_args()[0].data
    if given is not None:
        return given
    from ragdiag.config import default_data_dir

    default = default_data_dir()
    if not any((default / name / "corpus.jsonl").is_file() for name in ("scifact", "msmarco", "spf-qr-fr")) \
            and WORKPLACE.is_dir():
        return WORKPLACE
    return default


def dataset(name: str, data: Path | None = None) -> Path:
    """The BEIR folder of ``name`` (``scifact``, ``msmarco``, ``spf-qr-fr``) in the data folder, or exit
    with the command that fetches it."""
    data = data or data_dir()
    for folder in ALIASES.get(name, (name,)):
        if (data / folder / "corpus.jsonl").is_file():
            return data / folder
    sys.exit(f"benchmark data: no {name} in {data}; fetch it with `ragdiag data get {name}` "
             "(or give --data DIR / set RAGDIAG_DATA)")
