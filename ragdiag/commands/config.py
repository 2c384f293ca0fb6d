"""``ragdiag config show``: the effective settings and where each came from (see :mod:`ragdiag.io.settings`)."""

from __future__ import annotations

from ragdiag.io.redact import redact_arg
from ragdiag.io.settings import SettingsFile, effective
from ragdiag.results.config import ConfigResult, SettingValue


def _default_folders() -> dict[str, str]:
    """The folders used when nothing sets them (the user cache and data dirs of this machine)."""
    from ragdiag.config import default_cache_dir, default_data_dir

    return {"cache_dir": str(default_cache_dir()), "data_dir": str(default_data_dir())}


def run(settings: SettingsFile) -> ConfigResult:
    """Every setting's value outside any flag: environment, else file, else default (the folders'
    defaults shown as the paths they are on this machine; the others are the option's default)."""
    keys = tuple(SettingValue.named())
    folders = _default_folders()
    rows = [SettingValue(present=keys, key=e.setting.key, env=e.setting.env, flag=e.setting.flag,
                         value=redact_arg(e.value) if e.value is not None else folders.get(e.setting.key),
                         source=e.source, help=e.setting.help)
            for e in effective(settings)]
    return ConfigResult(present=("file", "settings"), file=None if settings.path is None else str(settings.path),
                        settings=rows)
