"""The files of the LLM commands (generate, grade, label, pipeline): the run record they open, the
manifest beside each output (``answers.jsonl`` → ``answers.jsonl.manifest.json``), and outputs written
from bytes held in memory, so a later stage of the same run can name their size and sha256 without
opening them again. Everything goes through :mod:`ragdiag.io.writer`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ragdiag.io.run_record import RUN_RECORD_KEY, RunRecord, stamp, start_run, without_run_record
from ragdiag.io.writer import OutputError, PathLike, guard_outputs, sidecar_path, write_bytes, write_json
from ragdiag.llm.client import ClientConfig
from ragdiag.results.llm_run import RunManifest


class InputEntry(TypedDict):
    """An input of the run record: path, size and sha256 (as :func:`ragdiag.io.run_record.describe_input`)."""

    path: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Written:
    """A file this run wrote: its path, size and sha256 (what :func:`ragdiag.io.run_record.describe_input`
    would read back from it)."""

    path: Path
    size: int
    sha256: str

    def described(self) -> InputEntry:
        """The run record's entry for this file as an input of a later stage."""
        return InputEntry(path=str(self.path), bytes=self.size, sha256=self.sha256)


def write_held(path: Path, data: bytes, inputs: Iterable[PathLike | None]) -> Written:
    """Write ``data`` atomically (never over an input); its description from the bytes in memory."""
    write_bytes(path, data, inputs=inputs)
    return Written(path, len(data), hashlib.sha256(data).hexdigest())


def json_bytes(data: Any) -> bytes:
    """The bytes :func:`ragdiag.io.writer.write_json` writes for ``data``."""
    return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def jsonl_bytes(rows: Iterable[dict[str, Any]]) -> bytes:
    """The bytes :func:`ragdiag.io.writer.write_jsonl` writes for ``rows``."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def local(inputs: Iterable[PathLike | str | None]) -> list[PathLike]:
    """The inputs that are files here (hub names ``hf:…`` and None left out)."""
    return [p for p in inputs if p is not None and not str(p).startswith("hf:")]


def open_record(command: str, config: ClientConfig, inputs: Iterable[PathLike | str | None],
                prompts: Mapping[str, str], models: list[str] | None = None,
                held: Iterable[Written] = ()) -> RunRecord:
    """The run record of an LLM command: inputs hashed (``held``: files this run wrote, described from
    memory), models, prompt versions, seed, cache mode."""
    seeds = {"llm": config.seed} if config.seed is not None else {}
    record = start_run(f"ragdiag {command}", inputs=local(inputs), models={"llm": models or [config.model]},
                       prompts=dict(prompts), seeds=seeds, cache=config.cache)
    record.inputs.extend(dict(w.described()) for w in held)
    return record


def manifest_path(out: PathLike) -> Path:
    """``answers.jsonl`` → ``answers.jsonl.manifest.json``: named from the whole output name."""
    return sidecar_path(out, "manifest")


def guard_run_outputs(outputs: list[PathLike | None], inputs: list[PathLike | str | None]) -> Path:
    """Before any work: refuse outputs (and the first output's manifest) that are inputs or coincide;
    return the manifest path."""
    first = outputs[0]
    assert first is not None
    manifest = manifest_path(first)
    paths = local(inputs)
    for src in paths:
        if Path(src).resolve() == manifest.resolve():
            raise OutputError(f"the manifest {manifest} of output {first} would overwrite the input {src}; "
                              "choose another output name")
    guard_outputs([*outputs, manifest], paths)
    return manifest


def write_run_manifest(path: Path, record: RunRecord, inputs: list[PathLike | str | None],
                       manifest: RunManifest) -> RunManifest:
    """Write a generate/grade manifest stamped with the run record; returns it, record included."""
    doc = stamp(without_run_record(manifest.to_json()), record)
    write_json(path, doc, inputs=local(inputs))
    manifest.run_record = doc[RUN_RECORD_KEY]
    return manifest


def stderr_notice(text: str) -> None:
    """A ``note: …`` line on stderr (yellow on a terminal)."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(f"note: {text}", style="yellow", highlight=False)
