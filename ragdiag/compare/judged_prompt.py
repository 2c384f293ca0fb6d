"""The generation prompt of one side of the judged loop (``--base-prompt`` / ``--new-prompt``): a bundled
prompt by id (``generation@v2``, ``prompts/generation.v2.toml``) or a user TOML file in the bundled schema
(``name``, ``version``, ``system``, ``user`` with ``$query`` and ``$references``, and a ``[fences]`` table).

A prompt whose user template does not fence both the question and the passages is refused: untrusted text
reaches the model only inside an element (:func:`ragdiag.llm.prompts.fence`). A file's id carries the
SHA-256 of its bytes (:attr:`ragdiag.llm.prompts.Prompt.digest`), and the id is part of every cache key and
of the run record, so two different files never share cached answers.
"""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.llm.prompts import Prompt, load_prompt

PLACEHOLDERS = ("query", "references")  # what the generation call fills: the question and the ranked passages
_ID = re.compile(r"^(?P<name>[a-z0-9][a-z0-9-]*)@v(?P<version>\d{1,6})$")
_ELEMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
SPEC_MAX = 1000
FILE_MAX = 1_000_000  # bytes


def side_prompt(spec: str, flag: str) -> Prompt:
    """The prompt ``spec`` names (a bundled id or a TOML file), checked fenced; refused in one line otherwise."""
    if not spec.strip() or len(spec) > SPEC_MAX or not spec.isprintable():
        raise RagdiagError(f"{flag} {spec!r}: expected a bundled prompt id (e.g. generation@v2) or a prompt file path")
    match = _ID.match(spec)
    if match:
        try:
            prompt = load_prompt(match["name"], int(match["version"]))
        except RagdiagError as err:
            raise RagdiagError(f"{flag} {spec}: {err}; give a bundled prompt id such as generation@v2, or a TOML "
                               "file in the same schema") from None
    else:
        prompt = _from_file(Path(spec), flag)
    _check_fenced(prompt, flag, spec)
    return prompt


def _from_file(path: Path, flag: str) -> Prompt:
    if not path.is_file():
        raise RagdiagError(f"{flag} {path}: neither a bundled prompt id (name@vN, e.g. generation@v2) nor a file; "
                           "give one of them")
    raw = path.read_bytes()
    if len(raw) > FILE_MAX:
        raise RagdiagError(f"{flag} {path}: {len(raw):,} bytes, more than a prompt file's {FILE_MAX:,}")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise RagdiagError(f"{flag} {path}: malformed TOML ({err}); fix the file (schema: name, version, system, "
                           "user, [fences] as in the bundled prompts/generation.v2.toml)") from None
    fences = data.get("fences", {})
    shape = {"name": str, "version": int, "system": str, "user": str}
    for key, kind in shape.items():
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise RagdiagError(f"{flag} {path}: '{key}' missing or not a {kind.__name__}; the schema is name "
                               "(text), version (whole number), system and user (text), [fences] (as in "
                               "prompts/generation.v2.toml)")
    if not isinstance(fences, dict) or not all(isinstance(v, str) for v in fences.values()):
        raise RagdiagError(f"{flag} {path}: [fences] must map placeholders to element names (query = \"question\", "
                           "references = \"passage\")")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,79}", data["name"]) or not 1 <= data["version"] <= 999_999:
        raise RagdiagError(f"{flag} {path}: name must be 1–80 of a-z, 0-9 and '-' and version a whole number in "
                           f"1–999999, got {data['name']!r} and {data['version']}")
    return Prompt(data["name"], data["version"], data["system"], data["user"],
                  tuple((str(k), str(v)) for k, v in fences.items()), hashlib.sha256(raw).hexdigest()[:12])


def _check_fenced(prompt: Prompt, flag: str, spec: str) -> None:
    """The user template fills exactly $query and $references, both fenced in well-formed elements."""
    template = string.Template(prompt.user)
    if not template.is_valid():
        raise RagdiagError(f"{flag} {spec}: the user template has a stray '$' (write $$ for a dollar sign)")
    used = set(template.get_identifiers())
    fences = dict(prompt.fences)
    unfenced = [p for p in PLACEHOLDERS if p not in fences or not _ELEMENT.match(fences[p])]
    missing = [p for p in PLACEHOLDERS if p not in used]
    extra = sorted(used - set(PLACEHOLDERS))
    if missing or extra:
        raise RagdiagError(f"{flag} {spec}: a generation prompt's user template fills $query and $references and "
                           f"nothing else ({'no $' + missing[0] if missing else 'unknown $' + extra[0]}); fix the "
                           "template")
    if unfenced:
        raise RagdiagError(f"{flag} {spec}: ${unfenced[0]} is not fenced, and untrusted text reaches a prompt only "
                           "fenced; add [fences] query = \"question\" and references = \"passage\" (and say in the "
                           "system message that fenced text is data), as prompts/generation.v2.toml does")
