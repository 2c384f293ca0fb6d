"""Loaders for graded samples: local JSON / JSONL files, the Hugging Face dataset
``primer-ai/retrieval-response`` (through ``datasets``), and the bundled sample.

``--dataset NAME`` tries the hub; when it cannot be reached it falls back to the bundled sample
with a one-line notice (``offline=True`` forces the bundled sample, ``fallback=False`` makes an
unreachable hub an error).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ragdiag.data.graded_columns import graded_columns
from ragdiag.data.graded_parquet import is_parquet, read_graded_parquet
from ragdiag.data.graded_table import GradedSource, GradedTable, build_graded_table, graded_table_from_columns
from ragdiag.data.schema import DATASET_NAMES, SUBSET_OF_DATASET, subset_of
from ragdiag.errors import DataError, RagdiagError
from ragdiag.extras import install_command
from ragdiag.io.files import existing_file, file_sha256, sha256_in_background
from ragdiag.io.jsonl import map_json_bytes, no_cyclic_gc, read_json_records
from ragdiag.resources import resource_path

HF_REPO = "primer-ai/retrieval-response"
HF_REPO_ENV = "RAGDIAG_HF_REPO"
GRADED_FILE = "samples_graded.json"
BUNDLED_SAMPLE = "retrieval-response-sample"


def _bundled_meta() -> dict[str, Any]:
    meta_path = resource_path("fixtures", BUNDLED_SAMPLE, "meta.json")
    return json.loads(meta_path.read_text()) if meta_path.is_file() else {}


def bundled_sample_path(filename: str = GRADED_FILE) -> Path:
    """Path of a file of the bundled retrieval-response sample."""
    return resource_path("fixtures", BUNDLED_SAMPLE, filename)


def load_graded_file(path: Path, simulated_grades: bool = False, name: str | None = None, gate=None) -> GradedTable:
    """Graded samples from a local JSON/JSONL file, or a Parquet file read columnar, validated (``gate``:
    mark degenerate ideal answers, see :func:`ragdiag.data.graded_table.build_graded_table`; not applied
    to Parquet, which carries no answer texts)."""
    path = Path(path)
    if is_parquet(path):
        existing_file(path)
        source = GradedSource(name=name or str(path), sha256=file_sha256(path), simulated_grades=simulated_grades)
        return read_graded_parquet(path, source)
    data = map_json_bytes(path)
    # the file's sha256 from the bytes mapped, hashed while they are decoded (a .gz file's bytes were
    # decompressed: read it again)
    digest = (lambda: file_sha256(path)) if path.suffix == ".gz" else sha256_in_background(data)
    with no_cyclic_gc():
        columns = graded_columns(data)
        del data
        if columns is not None:  # the table built while the hash may still run; the source's fields after it
            source = GradedSource(name=name or str(path))
            table = graded_table_from_columns(columns, str(path), source, gate)
        sha256 = digest()
        bundled = sha256 == file_sha256(bundled_sample_path())  # the bundled sample given by path: simulated grades
        if columns is not None and table is not None:
            source.sha256 = sha256
            source.simulated_grades = simulated_grades or bundled or columns.simulated
            return table
        records = read_json_records(path)
        if not isinstance(records, list):
            raise DataError(f"{path}: expected a JSON list of graded samples")
        flags = [r.get("simulated_grades") if isinstance(r, dict) else None for r in records]
        source = GradedSource(name=name or str(path), sha256=sha256,
                              simulated_grades=simulated_grades or bundled or _all_simulated(flags))
        return build_graded_table(records, str(path), source, gate)


def _all_simulated(flags: list) -> bool:
    """A file of simulated grades says so in every row (``simulated_grades: true``, tools/judge_noise_demo.py)."""
    return bool(flags) and all(flag is True for flag in flags)


def _filter_dataset(table: GradedTable, dataset: str) -> GradedTable:
    if dataset == "all":
        return table
    subset = SUBSET_OF_DATASET[dataset]
    if subset not in table.subset_names:
        raise RagdiagError(
            f"dataset '{dataset}' (subset {subset}) has no rows in {table.source.name}; "
            f"subsets present: {', '.join(table.subset_names) or 'none'}"
        )
    return table.take(table.subset == table.subset_names.index(subset))


def load_bundled(dataset: str, notice: str | None = None) -> GradedTable:
    """The bundled sample (simulated grades), filtered to ``dataset``."""
    meta = _bundled_meta()
    path = bundled_sample_path()
    table = load_graded_file(path, simulated_grades=bool(meta.get("simulated_grades", True)),
                             name=f"bundled sample fixtures/{BUNDLED_SAMPLE}/{GRADED_FILE}")
    table.source.notice = notice
    table.source.details = {"bundled_meta": meta}
    return _filter_dataset(table, dataset)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face endpoint answers a TCP connection (fails fast without network)."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def load_graded_hub(dataset: str, repo: str | None = None) -> GradedTable:
    """Graded samples from the Hugging Face dataset (``datasets.load_dataset``), filtered by subset.

    ``repo`` may also be a local directory with the same layout (used by the tests).
    """
    import datasets

    repo = repo or os.environ.get(HF_REPO_ENV, HF_REPO)
    ds = datasets.load_dataset(repo, data_files=GRADED_FILE, split="train")
    if dataset != "all":
        subset = SUBSET_OF_DATASET[dataset]
        ds = ds.filter(lambda ids: [subset_of(i) == subset for i in ids], input_columns="id", batched=True)
    columns = ds.column_names
    data = ds.to_dict()
    records = ({c: data[c][i] for c in columns} for i in range(ds.num_rows))
    source = GradedSource(name=f"{repo}/{GRADED_FILE}", sha256=ds._fingerprint)
    table = build_graded_table(records, f"{repo}/{GRADED_FILE}", source)
    if len(table) == 0:
        raise RagdiagError(f"dataset '{dataset}' has no graded rows in {repo}")
    return table


def load_graded(graded: Path | None, dataset: str | None, offline: bool = False, fallback: bool = True,
                hf_repo: str | None = None, gate=None) -> GradedTable:
    """A graded file (``graded``) or a named dataset (``dataset``): exactly one of the two (``gate``
    applies to a graded file)."""
    if graded is not None and dataset is None:
        return load_graded_file(graded, gate=gate)
    if dataset is not None and graded is None:
        return load_graded_dataset(dataset, offline=offline, fallback=fallback, repo=hf_repo)
    raise RagdiagError("give exactly one of --dataset NAME or --graded PATH")


def load_graded_dataset(dataset: str, offline: bool = False, fallback: bool = True,
                        repo: str | None = None) -> GradedTable:
    """``--dataset NAME``: the hub when reachable, else the bundled sample with a notice."""
    if dataset not in DATASET_NAMES:
        raise RagdiagError(f"unknown dataset '{dataset}': choose one of {', '.join(DATASET_NAMES)}")
    if offline:
        return load_bundled(dataset, notice="--offline: using the bundled sample (simulated grades)")
    local_repo = repo is not None and Path(repo).is_dir()
    if importlib.util.find_spec("datasets") is None:
        if not fallback:
            raise RagdiagError("loading from the hub needs the 'datasets' package, which is not installed: "
                               f"{install_command('hub')}")
        return load_bundled(dataset, notice=f"the 'datasets' package is not installed ({install_command('hub')}): "
                                            "using the bundled sample (simulated grades)")
    if not local_repo and not hub_reachable():
        if not fallback:
            raise RagdiagError("the Hugging Face hub cannot be reached and --no-fallback was given")
        return load_bundled(dataset, notice="Hugging Face hub unreachable: using the bundled sample (simulated grades)")
    try:
        return load_graded_hub(dataset, repo)
    except (ConnectionError, OSError) as err:
        if not fallback:
            raise RagdiagError(f"cannot load {repo or HF_REPO} from the hub: {err}") from None
        return load_bundled(dataset, notice=f"hub load failed ({type(err).__name__}): using the bundled sample (simulated grades)")
