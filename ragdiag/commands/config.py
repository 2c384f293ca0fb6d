"""``ragdiag config show``: the effective settings and where each came from (see :mod:`ragdiag.settings`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragdiag.io.json_record import JsonRecord
from ragdiag.io.redact import redact_arg
from ragdiag.settings import SettingsFile, effective


@dataclass(kw_only=True)
class SettingValue(JsonRecord):
    """One setting: its file key, environment variable, flag, value (None: the option's own default) and source
    (``env``, ``file`` or ``default``)."""

    key: str = ""
    env: str = ""
    flag: str = ""
    value: str | None = None
    source: str = "default"
    help: str = ""


@dataclass(kw_only=True)
class ConfigResult(JsonRecord):
    """The settings file read (None: none found) and every setting's effective value."""

    file: str | None = None
    settings: list[SettingValue] = field(default_factory=list)
    nested = {"settings": SettingValue}


def run(settings: SettingsFile) -> ConfigResult:
    """Every setting's value outside any flag: environment, else file, else default."""
    keys = tuple(SettingValue.named())
    rows = [SettingValue(present=keys, key=e.setting.key, env=e.setting.env, flag=e.setting.flag,
                         value=None if e.value is None else redact_arg(e.value), source=e.source, help=e.setting.help)
            for e in effective(settings)]
    return ConfigResult(present=("file", "settings"), file=None if settings.path is None else str(settings.path),
                        settings=rows)
