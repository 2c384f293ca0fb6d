"""The result of ``ragdiag config show``: the settings file read and every setting's effective value and source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ragdiag.results.base import JsonRecord


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
    nested: ClassVar[dict[str, type[JsonRecord]]] = {"settings": SettingValue}
