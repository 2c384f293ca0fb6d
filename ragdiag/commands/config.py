"""``ragdiag config show``: the effective settings and where each came from (see :mod:`ragdiag.io.settings`)."""

from __future__ import annotations

from ragdiag.io.redact import redact_arg
from ragdiag.io.settings import SettingsFile, effective
from ragdiag.results.config import ConfigResult, SettingValue


def run(settings: SettingsFile) -> ConfigResult:
    """Every setting's value outside any flag: environment, else file, else default."""
    keys = tuple(SettingValue.named())
    rows = [SettingValue(present=keys, key=e.setting.key, env=e.setting.env, flag=e.setting.flag,
                         value=None if e.value is None else redact_arg(e.value), source=e.source, help=e.setting.help)
            for e in effective(settings)]
    return ConfigResult(present=("file", "settings"), file=None if settings.path is None else str(settings.path),
                        settings=rows)
