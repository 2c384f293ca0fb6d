"""Every install hint comes from :mod:`ragdiag.extras` (``pip install -e '.[extra]' in the ragdiag
clone``: ragdiag is on no index), never a hand-written ``pip install 'ragdiag[...]'`` or
``pip install pyarrow`` (issue 28 §4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ragdiag"
HAND_WRITTEN = re.compile(r"pip install")


def test_no_module_but_extras_writes_a_pip_install_command():
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
                 for path in sorted(PACKAGE.rglob("*.py")) if path.name != "extras.py"
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if HAND_WRITTEN.search(line)]
    assert offenders == []


@pytest.mark.parametrize(("module", "extra"), [("pyarrow", "parquet"), ("krippendorff", "llm"), ("ppi_py", "calibrate")])
def test_the_hint_names_the_extra_to_install_from_the_clone(module, extra):
    from ragdiag.extras import install_hint

    assert install_hint(module) == f"pip install -e '.[{extra}]' in the ragdiag clone"


def test_a_missing_pyarrow_says_how_to_install_it(monkeypatch, tmp_path):
    import builtins

    from ragdiag.data.graded_parquet import _pyarrow
    from ragdiag.errors import RagdiagError

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.split(".")[0] == "pyarrow":
            raise ImportError(name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(RagdiagError, match=re.escape("pip install -e '.[parquet]' in the ragdiag clone")):
        _pyarrow()
