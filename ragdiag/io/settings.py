"""Settings users repeat (model, base URL, cache and data folders, workers, prices, embedder, the hub
dataset), from a file and the environment.

Precedence, highest first: the command's flag > ``RAGDIAG_<NAME>`` in the environment > the settings
file > the option's default. The file is ``--config PATH``, else ``ragdiag.toml`` in the working
directory (top-level keys), else ``[tool.ragdiag]`` in its ``pyproject.toml`` (a ``pyproject.toml``
given as ``--config`` is read the same way). An empty ``RAGDIAG_*`` variable counts as unset. A file value reaches
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
_FILE_OF: dict[str, Path] = {}  # … and the file each came from


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
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool")
        if isinstance(tool, dict) and "ragdiag" in tool:  # a `tool` that is no table holds no [tool.ragdiag]
            return pyproject
    return None


def _is_pyproject(path: Path) -> bool:
    return path.name == "pyproject.toml"


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
    table: Any = doc
    if _is_pyproject(path):  # found here or given as --config: its [tool.ragdiag] table, never its top level
        tool = doc.get("tool")
        if not isinstance(tool, dict) or "ragdiag" not in tool:
            raise RagdiagError(f"{path}: no [tool.ragdiag] table; write the settings under [tool.ragdiag], or give "
                               f"a ragdiag.toml with --config")
        table = tool["ragdiag"]
    if not isinstance(table, dict):
        raise RagdiagError(f"{path}: [tool.ragdiag] is not a table")
    return SettingsFile(path, {key: _checked(path, key, value) for key, value in table.items()})


def env_value(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """A ``RAGDIAG_*`` variable's value, None when unset or empty: the one rule of ``config show``, the
    run record and the commands (click, too, ignores an empty variable)."""
    value = (os.environ if environ is None else environ).get(name)
    return value or None


@contextmanager
def applied(settings: SettingsFile) -> Iterator[None]:
    """The file's values as environment variables where the environment has none (or an empty one),
    for the block; the environment is restored as it was."""
    before = {BY_KEY[key].env: os.environ.get(BY_KEY[key].env) for key in settings.values
              if env_value(BY_KEY[key].env) is None}
    for key, value in settings.values.items():
        if BY_KEY[key].env in before:
            os.environ[BY_KEY[key].env] = str(value)
    _FROM_FILE.update(before)
    _FILE_OF.update({name: settings.path for name in before if settings.path is not None})
    try:
        yield
    finally:
        for name, old in before.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
            _FROM_FILE.discard(name)
            _FILE_OF.pop(name, None)


def value_source(env: str) -> str | None:
    """Where an option's value came from when no flag gave it: ``FILE: setting 'KEY' (through ENV)`` or
    ``environment variable ENV``; None when neither holds a value."""
    if env_value(env) is None:
        return None
    setting = next((s for s in SETTINGS if s.env == env), None)
    if env in _FROM_FILE and setting is not None:
        return f"{_FILE_OF.get(env, 'the settings file')}: setting '{setting.key}'"
    return f"environment variable {env}"


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
        value = env_value(setting.env, env)
        if value is not None and setting.env not in _FROM_FILE:
            out.append(Effective(setting, value, "env"))
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
        elif env_value(setting.env) is not None:
            value, source = os.environ[setting.env], "file" if setting.env in _FROM_FILE else "env"
        else:
            value, source = None, "default"
        out[setting.key] = {"value": None if value is None else redact_arg(value), "source": source}
    return out


def shown_env_value(env: str) -> str:
    """A variable's value quoted for an error line, or a placeholder when it looks like an API key."""
    from ragdiag.io.redact import shown_value

    return shown_value(env_value(env) or "")
