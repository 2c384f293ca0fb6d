"""The type checker runs (issue 30): mypy with the project's configuration (pyproject.toml [tool.mypy])
finds no error in the package — the default level everywhere, --strict's flags on commands/, results/,
measures/ and answers/. `make lint` runs the same check; this test keeps it inside the suite, so a
type error fails CI even where lint is skipped. mypy is in the dev extra: in CI (CI=true) a missing
mypy is a failure, in a clone a skip with the reason.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.ci_strict import import_or_skip_or_fail

REPO = Path(__file__).resolve().parents[2]
STRICT_PACKAGES = ["ragdiag.commands.*", "ragdiag.results.*", "ragdiag.measures.*", "ragdiag.answers.*"]


def _mypy_config() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _strict_overrides() -> list[dict]:
    """The overrides that turn --strict's flags on (the ones that set disallow_untyped_defs)."""
    return [o for o in _mypy_config().get("overrides", []) if o.get("disallow_untyped_defs") is True]


def _strict_per_module_flags() -> dict[str, bool]:
    """mypy's own --strict flags, those a per-module section can set, with the value --strict gives."""
    main = import_or_skip_or_fail("mypy.main", "mypy is not installed (pip install -e '.[dev]')")
    options = import_or_skip_or_fail("mypy.options", "mypy is not installed (pip install -e '.[dev]')")
    _, _, assignments = main.define_options()
    return {name: value for name, value in assignments if name in options.PER_MODULE_OPTIONS}


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_package():
    api = import_or_skip_or_fail("mypy.api", "mypy is not installed (pip install -e '.[dev]')")
    # the cache next to `make lint`'s: a suite run right after lint re-checks only what changed
    stdout, stderr, status = api.run(["--config-file", str(REPO / "pyproject.toml"),
                                      "--cache-dir", str(REPO / ".mypy_cache"), str(REPO / "ragdiag")])
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert status == 0 and errors == [], (
        f"mypy (pyproject [tool.mypy]) exited {status} with {len(errors)} error(s):\n{stdout}{stderr}")


def test_strict_overrides_name_exactly_commands_results_measures_answers():
    overrides = _strict_overrides()
    assert len(overrides) == 1, f"one override carries --strict's flags, found {len(overrides)}"
    assert sorted(overrides[0]["module"]) == sorted(STRICT_PACKAGES)


def test_strict_overrides_set_every_flag_of_mypys_strict():
    # `strict = true` in an override leaks to every module (python/mypy#11401): the flags are listed
    # one by one, and must stay the ones this mypy's --strict sets
    override = _strict_overrides()[0]
    assert "strict" not in override, "strict = true in an override turns strict on for the whole package"
    expected = _strict_per_module_flags()
    listed = {name: value for name, value in override.items() if name != "module"}
    assert listed == expected


def test_only_untyped_third_party_packages_are_let_through():
    # ignore_missing_imports names third-party packages one by one, never ragdiag, never globally
    config = _mypy_config()
    assert "ignore_missing_imports" not in config
    ignored = [m for o in config.get("overrides", []) if o.get("ignore_missing_imports") for m in o["module"]]
    assert ignored, "no package is let through: the override is gone"
    assert not [m for m in ignored if m.startswith("ragdiag")]
