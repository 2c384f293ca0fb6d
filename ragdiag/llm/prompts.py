"""Versioned prompt templates from the bundled ``prompts/`` folder.

Each file ``prompts/<name>.v<N>.toml`` holds ``name``, ``version``, ``system`` and ``user``
(``$placeholders``, :class:`string.Template` syntax, so JSON braces need no escaping). The
prompt id ``<name>@v<N>`` goes into every cache key, so editing a prompt means a new version.

Untrusted text (questions, passages, answers) is fenced: a ``[fences]`` table maps a placeholder
to an element name, and its value is put inside ``<name>…</name>`` (a list of passages becomes
``<passage id="1">…</passage>`` lines, numbered in order) with ``&``, ``<`` and ``>`` escaped as
``&amp;``, ``&lt;``, ``&gt;``, so the text can neither close its element nor open another one.
The system messages say that fenced text is data, never instructions.
"""

from __future__ import annotations

import functools
import html
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
    fences: tuple[tuple[str, str], ...] = ()
    digest: str = ""  # a user prompt file's SHA-256 (first 12 hex digits): part of its id, hence of every cache key

    @property
    def id(self) -> str:
        return f"{self.name}@v{self.version}" + (f"+sha256:{self.digest}" if self.digest else "")

    def messages(self, **values: str | list[str]) -> list[dict[str, str]]:
        """Chat messages with the user template filled, fenced placeholders fenced (a missing
        placeholder is an error)."""
        fences = dict(self.fences)
        filled = {}
        for key, value in values.items():
            if key in fences:
                filled[key] = fence_passages(value, fences[key]) if isinstance(value, list) else fence(fences[key], value)
            elif isinstance(value, list):
                raise RagdiagError(f"prompt {self.id}: placeholder ${key} takes one text, not a list")
            else:
                filled[key] = value
        try:
            user = string.Template(self.user).substitute(filled)
        except KeyError as err:
            raise RagdiagError(f"prompt {self.id}: no value for placeholder ${err.args[0]}") from None
        system = [{"role": "system", "content": self.system.strip()}] if self.system.strip() else []
        return [*system, {"role": "user", "content": user.strip()}]


def neutralise(text: str) -> str:
    """``text`` with ``&``, ``<`` and ``>`` escaped, so it cannot open or close an element."""
    return html.escape(text, quote=False)


def fence(element: str, text: str, **attributes: int | str) -> str:
    """``<element a="v">text</element>`` with the text neutralised (attribute values too)."""
    attrs = "".join(f' {k}="{html.escape(str(v), quote=True)}"' for k, v in attributes.items())
    return f"<{element}{attrs}>{neutralise(text)}</{element}>"


def fence_passages(passages: list[str], element: str = "passage") -> str:
    """One fenced element per passage, numbered ``id="1"``, ``id="2"`` … in the given order."""
    return "\n".join(fence(element, text, id=i) for i, text in enumerate(passages, start=1))


def _versions(name: str, folder: Path) -> dict[int, Path]:
    found = {}
    for path in folder.glob(f"{name}.v*.toml"):
        match = _FILE.match(path.name)
        if match and match["name"] == name:
            found[int(match["version"])] = path
    return found


def load_prompt(name: str, version: int | None = None, folder: Path | None = None) -> Prompt:
    """Prompt ``name`` at ``version`` (default: the highest version in the folder).

    A bundled prompt (no ``folder``) is read once per process: the package's files do not change while it
    runs, and a triage's cost pass asks for the same five prompts once per query."""
    return _bundled(name, version) if folder is None else _load(name, version, folder)


@functools.cache
def _bundled(name: str, version: int | None) -> Prompt:
    return _load(name, version, resource_path("prompts"))


def _load(name: str, version: int | None, folder: Path) -> Prompt:
    versions = _versions(name, folder)
    if not versions:
        raise RagdiagError(f"no prompt named '{name}' in {folder}")
    chosen = max(versions) if version is None else version
    if chosen not in versions:
        raise RagdiagError(f"prompt '{name}' has no version {chosen} (available: {sorted(versions)})")
    path = versions[chosen]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        fences = tuple((str(k), str(v)) for k, v in dict(data.get("fences", {})).items())
        prompt = Prompt(str(data["name"]), int(data["version"]), str(data["system"]), str(data["user"]), fences)
    except (tomllib.TOMLDecodeError, KeyError, ValueError, TypeError) as err:
        raise RagdiagError(f"{path}: malformed prompt file ({err})") from None
    if (prompt.name, prompt.version) != (name, chosen):
        raise RagdiagError(f"{path}: declares {prompt.id}, but its file name says {name}@v{chosen}")
    return prompt


def prompt_name(name: str, lang: str) -> str:
    """The prompt file name for a language: English is the plain name, French ``<name>-fr``."""
    if lang not in ("en", "fr"):
        raise RagdiagError(f"--lang must be en, fr or auto, got '{lang}'")
    return name if lang == "en" else f"{name}-{lang}"


def load_prompt_lang(name: str, lang: str) -> Prompt:
    """The newest version of prompt ``name`` in language ``lang`` (en or fr)."""
    return load_prompt(prompt_name(name, lang))
