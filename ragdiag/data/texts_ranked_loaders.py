"""Loaders for texts and ranked samples (docs/methods.md#1-the-retrieval-response-dataset): local JSON/JSONL or the Hugging Face hub.

A source is a local ``.json``/``.jsonl`` file, a local directory laid out like the hub dataset
(``samples_texts.json`` / ``samples_ranked.json``), or ``hf:`` / ``hf:OWNER/NAME`` for the hub
(default ``primer-ai/retrieval-response``, or ``$RAGDIAG_HF_REPO``). Directories and the hub go
through ``datasets.load_dataset(repo, data_files=FILE)``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ragdiag.data.loaders import HF_REPO, HF_REPO_ENV, hub_reachable
from ragdiag.data.schema import (
    DATASET_NAMES,
    SUBSET_OF_DATASET,
    RankedSample,
    TextsSample,
    subset_of,
)
from ragdiag.errors import DataError, RagdiagError
from ragdiag.io.files import file_sha256
from ragdiag.io.jsonl import read_json_records

TEXTS_FILE = "samples_texts.json"
RANKED_FILE = "samples_ranked.json"
T = TypeVar("T", TextsSample, RankedSample)


@dataclass
class Loaded(Generic[T]):
    """Validated samples and where they came from (name and content hash, for result meta)."""

    samples: list[T]
    source: str
    sha256: str


def _hub_records(repo: str, filename: str) -> tuple[list[dict[str, Any]], str]:
    import datasets

    try:
        ds = datasets.load_dataset(repo, data_files=filename, split="train")
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as err:
        raise RagdiagError(f"cannot load {filename} from {repo}: {err}") from None
    columns, data = ds.column_names, ds.to_dict()
    # Arrow fills keys a record lacks (e.g. ARXIV-only c1/c2/q2) with null: drop them again.
    records = [{c: data[c][i] for c in columns if data[c][i] is not None} for i in range(ds.num_rows)]
    return records, ds._fingerprint


def _read(source: str | Path, filename: str) -> tuple[list[Any], str, str]:
    text = str(source)
    if text.startswith("hf:"):
        repo = text[3:] or os.environ.get(HF_REPO_ENV, HF_REPO)
        if not hub_reachable():
            raise RagdiagError(f"cannot load {filename} from {repo}: the Hugging Face hub cannot be reached "
                               f"(give a local file, or a folder holding {filename})")
        records, digest = _hub_records(repo, filename)
        return records, f"{repo}/{filename}", digest
    path = Path(text)
    if path.is_dir():
        records, digest = _hub_records(str(path), filename)
        return records, str(path / filename), digest
    records = read_json_records(path)
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a JSON list (or JSON lines) of samples")
    return records, str(path), file_sha256(path)


def _keep(sample_id: str, dataset: str) -> bool:
    return dataset == "all" or subset_of(sample_id) == SUBSET_OF_DATASET[dataset]


def _refuse_duplicate_ids(samples: list[T], source: str) -> None:
    """Texts samples are keyed by id: a second record with the same id is refused, naming both."""
    first: dict[str, int] = {}
    for number, sample in enumerate(samples, start=1):
        if sample.id in first:
            raise DataError.at(source, number, "id", f"duplicate id '{sample.id}' (first in record {first[sample.id]})")
        first[sample.id] = number


def _load(source: str | Path, filename: str, cls: type[T], dataset: str) -> Loaded[T]:
    if dataset not in DATASET_NAMES:
        raise RagdiagError(f"unknown dataset '{dataset}': choose one of {', '.join(DATASET_NAMES)}")
    records, name, digest = _read(source, filename)
    samples = [cls.from_json(r, name, i) for i, r in enumerate(records, start=1)]
    if cls is TextsSample:
        _refuse_duplicate_ids(samples, name)
    kept = [s for s in samples if _keep(s.id, dataset)]
    if not kept:
        raise RagdiagError(f"{name}: no samples for dataset '{dataset}'")
    return Loaded(kept, name, digest)


def load_texts(source: str | Path, dataset: str = "all") -> Loaded[TextsSample]:
    """Texts samples (id, q, p, n) from a file, a hub-layout directory or ``hf:REPO``."""
    return _load(source, TEXTS_FILE, TextsSample, dataset)


def load_ranked(source: str | Path, dataset: str = "all") -> Loaded[RankedSample]:
    """Ranked samples (id, E, Nc, Np, K, P, R, rank) from a file, a hub-layout directory or ``hf:REPO``."""
    return _load(source, RANKED_FILE, RankedSample, dataset)
