"""Settings users repeat (model, base URL, cache and data folders, workers, prices, embedder, the hub
dataset), from a file and the environment.

Precedence, highest first: the command's flag > ``RAGDIAG_<NAME>`` in the environment > the settings
file > the option's default. The file is ``--config PATH``, else ``ragdiag.toml`` in the working
directory (top-level keys), else ``[tool.ragdiag]`` in its ``pyproject.toml``. A file value reaches
the options through its environment variable (set only where the environment has none, and restored
when the command ends), so click's own order — command line, environment, default — applies, and
every value is checked by the option's own range. API keys are never settings.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError

FILE_NAME = "ragdiag.toml"


@dataclass(frozen=True)
class Setting:
    """One setting: its file key, its environment variable, the flag it fills and what it is."""

    key: str
    env: str
    flag: str
    kind: type
    help: str
    bounds: tuple[int, int] | None = None  # an integer setting's range, the option's own


SETTINGS: tuple[Setting, ...] = (
    Setting("model", "RAGDIAG_MODEL", "--model", str, "chat model name for generation, grading and labels"),
    Setting("base_url", "RAGDIAG_BASE_URL", "--base-url", str, "OpenAI-compatible server URL"),
    Setting("cache_dir", "RAGDIAG_CACHE_DIR", "--cache-dir", str, "folder of the LLM and embedding cache"),
    Setting("data_dir", "RAGDIAG_DATA", "--dir", str, "folder of `ragdiag data get` (its --dir)"),
    Setting("workers", "RAGDIAG_WORKERS", "--workers", int, "concurrent LLM requests", (1, 256)),
    Setting("prices", "RAGDIAG_PRICES", "--prices", str, "JSON price table {model: {input, output}}, USD per 1M tokens"),
    Setting("embedder", "RAGDIAG_EMBEDDER", "--embedder", str, "local, st:NAME, openai:MODEL or voyage:MODEL"),
    Setting("hf_repo", "RAGDIAG_HF_REPO", "hf:OWNER/NAME", str,
            "Hugging Face dataset read by hf: (--texts, --ranked) and correlate --dataset "
            "(default primer-ai/retrieval-response)"),
)
BY_KEY = {s.key: s for s in SETTINGS}
_FROM_FILE: set[str] = set()  # the environment variables :func:`applied` set from the file


@dataclass(frozen=True)
class SettingsFile:
    """The settings file found (or none) and the values it holds, checked."""

    path: Path | None
    values: dict[str, Any]


def find_file(config: Path | None, cwd: Path | None = None) -> Path | None:
    """``config`` if given (it must exist), else ``ragdiag.toml``, else a pyproject.toml with [tool.ragdiag]."""
    if config is not None:
        if not config.is_file():
            raise RagdiagError(f"--config {config}: not found (or not a file)")
        return config
    here = cwd or Path.cwd()
    if (here / FILE_NAME).is_file():
        return here / FILE_NAME
    pyproject = here / "pyproject.toml"
    if pyproject.is_file() and "ragdiag" in _read_toml(pyproject).get("tool", {}):
        return pyproject
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise RagdiagError(f"{path}: not a readable TOML file ({err})") from None


def _checked(path: Path, key: str, value: Any) -> Any:
    setting = BY_KEY.get(key)
    if setting is None:
        raise RagdiagError(f"{path}: unknown setting '{key}'; known: {', '.join(BY_KEY)}")
    if setting.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RagdiagError(f"{path}: setting '{key}': expected an integer, got {value!r}")
        if setting.bounds and not setting.bounds[0] <= value <= setting.bounds[1]:
            raise RagdiagError(f"{path}: setting '{key}': {value} is out of range [{setting.bounds[0]}, {setting.bounds[1]}]")
        return value
    if not isinstance(value, str) or not value.strip():
        raise RagdiagError(f"{path}: setting '{key}': expected a non-empty string, got {value!r}")
    return value


def load_file(config: Path | None = None, cwd: Path | None = None) -> SettingsFile:
    """The settings file's checked values (empty when there is no file)."""
    path = find_file(config, cwd)
    if path is None:
        return SettingsFile(None, {})
    doc = _read_toml(path)
    table = doc.get("tool", {}).get("ragdiag", {}) if path.name == "pyproject.toml" and config is None else doc
    if not isinstance(table, dict):
        raise RagdiagError(f"{path}: [tool.ragdiag] is not a table")
    return SettingsFile(path, {key: _checked(path, key, value) for key, value in table.items()})


@contextmanager
def applied(settings: SettingsFile) -> Iterator[None]:
    """The file's values as environment variables where the environment has none, for the block."""
    added = [BY_KEY[key].env for key in settings.values if BY_KEY[key].env not in os.environ]
    for key, value in settings.values.items():
        os.environ.setdefault(BY_KEY[key].env, str(value))
    _FROM_FILE.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)
            _FROM_FILE.discard(name)


@dataclass(frozen=True)
class Effective:
    """A setting's value and where it came from: ``env``, ``file`` or ``default`` (None: the option's own)."""

    setting: Setting
    value: str | None
    source: str


def effective(settings: SettingsFile, environ: Mapping[str, str] | None = None) -> list[Effective]:
    """Every setting's value outside any flag: the environment's, else the file's, else the default."""
    env = os.environ if environ is None else environ
    out = []
    for setting in SETTINGS:
        if setting.env in env and setting.env not in _FROM_FILE:
            out.append(Effective(setting, env[setting.env], "env"))
        elif setting.key in settings.values:
            out.append(Effective(setting, str(settings.values[setting.key]), "file"))
        else:
            out.append(Effective(setting, None, "default"))
    return out


_INVOCATION: list[str] = []  # the arguments of the running ragdiag command (set by the root group)


def set_invocation(argv: list[str]) -> None:
    """Remember the running command's arguments (the root group calls this once per command)."""
    _INVOCATION[:] = argv


def _flag_value(flag: str, argv: list[str]) -> str | None:
    """The last value given to ``flag`` in ``argv`` (``--flag V`` or ``--flag=V``), None if absent."""
    found = None
    for i, token in enumerate(argv):
        if token == flag and i + 1 < len(argv):
            found = argv[i + 1]
        elif token.startswith(flag + "="):
            found = token[len(flag) + 1:]
    return found


def in_this_run() -> dict[str, dict[str, str | None]]:
    """For the run record: every setting's value and source — ``flag`` (given to the command), ``env``,
    ``file`` or ``default`` (value None: the option's own). Never a key: API keys are not settings."""
    from ragdiag.io.redact import redact_arg

    out: dict[str, dict[str, str | None]] = {}
    for setting in SETTINGS:
        given = _flag_value(setting.flag, _INVOCATION)
        if given is not None:
            value, source = given, "flag"
        elif setting.env in os.environ:
            value, source = os.environ[setting.env], "file" if setting.env in _FROM_FILE else "env"
        else:
            value, source = None, "default"
        out[setting.key] = {"value": None if value is None else redact_arg(value), "source": source}
    return out
