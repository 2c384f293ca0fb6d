"""Versioned prompt templates from the bundled ``prompts/`` folder.

Each file ``prompts/<name>.v<N>.toml`` holds ``name``, ``version``, ``system`` and ``user``
(``$placeholders``, :class:`string.Template` syntax, so JSON braces need no escaping). The
prompt id ``<name>@v<N>`` goes into every cache key, so editing a prompt means a new version.
"""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.resources import resource_path

_FILE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9-]*)\.v(?P<version>\d+)\.toml$")


@dataclass(frozen=True)
class Prompt:
    """One prompt version: a system message and a user template."""

    name: str
    version: int
    system: str
    user: str

    @property
    def id(self) -> str:
        return f"{self.name}@v{self.version}"

    def messages(self, **values: str) -> list[dict[str, str]]:
        """Chat messages with the user template filled (a missing placeholder is an error)."""
        try:
            user = string.Template(self.user).substitute(values)
        except KeyError as err:
            raise RagdiagError(f"prompt {self.id}: no value for placeholder ${err.args[0]}") from None
        system = [{"role": "system", "content": self.system.strip()}] if self.system.strip() else []
        return [*system, {"role": "user", "content": user.strip()}]


def _versions(name: str, folder: Path) -> dict[int, Path]:
    found = {}
    for path in folder.glob(f"{name}.v*.toml"):
        match = _FILE.match(path.name)
        if match and match["name"] == name:
            found[int(match["version"])] = path
    return found


def load_prompt(name: str, version: int | None = None, folder: Path | None = None) -> Prompt:
    """Prompt ``name`` at ``version`` (default: the highest version in the folder)."""
    folder = folder or resource_path("prompts")
    versions = _versions(name, folder)
    if not versions:
        raise RagdiagError(f"no prompt named '{name}' in {folder}")
    chosen = max(versions) if version is None else version
    if chosen not in versions:
        raise RagdiagError(f"prompt '{name}' has no version {chosen} (available: {sorted(versions)})")
    path = versions[chosen]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        prompt = Prompt(str(data["name"]), int(data["version"]), str(data["system"]), str(data["user"]))
    except (tomllib.TOMLDecodeError, KeyError, ValueError) as err:
        raise RagdiagError(f"{path}: malformed prompt file ({err})") from None
    if (prompt.name, prompt.version) != (name, chosen):
        raise RagdiagError(f"{path}: declares {prompt.id}, but its file name says {name}@v{chosen}")
    return prompt
