"""Public retrieval sets ``ragdiag data get`` can fetch, and how each is read from where it lives.

BEIR sets come from the Hugging Face hub through ``datasets`` (Thakur et al., "BEIR", NeurIPS 2021
Datasets and Benchmarks): ``BeIR/<name>`` has the configs ``corpus`` (``_id``, ``title``, ``text``)
and ``queries`` (``_id``, ``text``), ``BeIR/<name>-qrels`` one split per qrels file (``query-id``,
``corpus-id``, ``score``). Rows are streamed (``streaming=True``), so a sample of MS MARCO's 8.8M
passages downloads only what it reads. SPF-QR-fr is not on the hub: it is one JSON file in the
history of github.com/etalab-ia/piaf-ml, fetched by its commit and checked against its sha256.

A *source* other than the hub is a local folder laid out like the hub (``SOURCE/BeIR/scifact``
with the same configs, ``SOURCE/BeIR/scifact-qrels``; ``SOURCE/etalab-ia/piaf-ml/<commit>/data/
questions_spf.json``): the same code reads it, which is how the tests run without a network.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import RagdiagError
from ragdiag.io.progress import note, progress_reporter

HUB = "hub"


class FetchError(RagdiagError):
    """A public dataset could not be fetched (network, missing files, unexpected content)."""


@dataclass(frozen=True)
class PublicSet:
    """One fetchable dataset: where it lives and what ragdiag writes from it."""

    name: str
    description: str
    origin: str  # shown by `data list`: where the rows come from
    license: str
    corpus_size: int  # passages at the origin (for progress and for `data list`)
    repo: str = ""  # BEIR hub repository ("" for a set that is not on the hub)
    qrels_splits: tuple[tuple[tuple[str, ...], str], ...] = ()  # (hub split names to try, file written)
    default_sample: int = 0  # passages kept by default (0 = all)


PUBLIC_SETS: dict[str, PublicSet] = {s.name: s for s in (
    PublicSet("scifact", "SciFact claims → scientific abstracts (en)", "hub BeIR/scifact",
              "CC BY-NC 2.0", 5_183, "BeIR/scifact", ((("test",), "test.tsv"), (("train",), "train.tsv"))),
    PublicSet("nfcorpus", "NFCorpus nutrition questions → PubMed articles (en)", "hub BeIR/nfcorpus",
              "see BEIR", 3_633, "BeIR/nfcorpus", ((("test",), "test.tsv"),)),
    PublicSet("fiqa", "FiQA-2018 financial questions → forum posts (en)", "hub BeIR/fiqa",
              "see BEIR", 57_638, "BeIR/fiqa", ((("test",), "test.tsv"),)),
    PublicSet("msmarco", "MS MARCO passage ranking, dev qrels (en); a sample of the 8.8M passages",
              "hub BeIR/msmarco", "MS MARCO terms (research only)", 8_841_823,
              "BeIR/msmarco", ((("validation", "dev"), "test.tsv"),), default_sample=100_000),
    PublicSet("spf-qr-fr", "Service-Public.fr questions → pages (fr), not on the hub",
              "GitHub etalab-ia/piaf-ml@90328c74 (not on the hub)", "Licence Ouverte 2.0; repo MIT",
              535),
)}

SPF_COMMIT = "90328c74c34d346d7e5814842e51fa757662f02f"
SPF_PATH = "data/questions_spf.json"
SPF_URL = f"https://raw.githubusercontent.com/etalab-ia/piaf-ml/{SPF_COMMIT}/{SPF_PATH}"
SPF_SHA256 = "bb92609a3ca492b87cef8fdaca62d9e14aa1b4b79c96f059a3958e9df04b00ca"


def public_set(name: str) -> PublicSet:
    """The registry entry for ``name``, or a one-line error listing the known names."""
    try:
        return PUBLIC_SETS[name]
    except KeyError:
        raise RagdiagError(f"unknown dataset '{name}'; known: {', '.join(PUBLIC_SETS)}") from None


@dataclass
class FetchedSet:
    """Rows of one dataset in the BEIR layout, before they are written."""

    corpus: list[dict[str, str]]
    queries: list[dict[str, str]]
    qrels: dict[str, list[tuple[str, str, int]]]  # file name → (query-id, corpus-id, score)
    origin: str  # what was read: hub repositories, a URL, or a local mirror
    notes: list[str]


# ---------------------------------------------------------------- hub (BEIR) sets


def _hub_location(source: str, repo: str) -> str:
    if source == HUB:
        from ragdiag.data.loaders import hub_reachable

        if not hub_reachable():
            raise FetchError(f"cannot reach the Hugging Face hub to fetch {repo} (no network, or HF_HUB_OFFLINE "
                             "is set); retry online, or give --source DIR with a local mirror of the hub's layout")
        return repo
    location = Path(source) / repo
    if not location.is_dir():
        raise FetchError(f"--source {source}: no folder {location} (a local mirror holds {repo} as the hub does)")
    return str(location)


@contextmanager
def _torch_unused(datasets: Any) -> Iterator[None]:
    """``datasets`` told torch is absent while it builds a streamed dataset: with torch installed, each
    ``IterableDataset`` otherwise imports it (seconds) to share its epoch counter with DataLoader workers
    and to subclass torch's dataset class. The rows are only read here; no DataLoader ever sees them."""
    config = datasets.config
    available = getattr(config, "TORCH_AVAILABLE", False)
    config.TORCH_AVAILABLE = False
    try:
        yield
    finally:
        config.TORCH_AVAILABLE = available


def _stream(location: str, config: str | None, split: str | None) -> Any:
    from ragdiag.extras import require

    datasets = require("datasets")
    what = f"{location} ({config})" if config else location
    try:
        with _torch_unused(datasets):
            return datasets.load_dataset(location, config, split=split, streaming=True)
    except StopIteration:  # datasets infers the columns from the first rows: an empty file has none
        raise FetchError(f"cannot load {what}: it holds no rows (an empty file?)") from None
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as err:
        raise FetchError(f"cannot load {what}: {str(err).splitlines()[0] if str(err) else type(err).__name__}") from None


def _rows(dataset: Any, what: str) -> Iterator[dict[str, Any]]:
    """Iterate a streamed split, turning a network or format failure mid-way into one line."""
    try:
        yield from dataset
    except (ConnectionError, OSError, ValueError) as err:
        raise FetchError(f"reading {what} failed: {str(err).splitlines()[0] if str(err) else type(err).__name__}") from None


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return "" if value is None else str(value)


def _score(row: dict[str, Any], where: str) -> int:
    """A qrels row's relevance grade: a whole number (an int, an integral float, or its text); a missing,
    non-numeric or fractional score is refused, never truncated."""
    value = row.get("score")
    if value is None:
        raise FetchError(f"{where}: field 'score': missing (BEIR qrels rows are query-id, corpus-id, score)")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise FetchError(f"{where}: field 'score': expected a whole number, got {row['score']!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value):
        raise FetchError(f"{where}: field 'score': expected a whole number, got {row['score']!r} (a fractional "
                         "grade is not truncated)")
    return int(value)


def _qrels_rows(split: Any, location: str, file: str) -> list[tuple[str, str, int]]:
    """(query-id, corpus-id, score) of one qrels split, every score checked (:func:`_score`)."""
    return [(_text(r, "query-id"), _text(r, "corpus-id"), _score(r, f"{location} qrels for {file}: row {n}"))
            for n, r in enumerate(_rows(split, f"{location} qrels"), 1)]


def _qrels_split(splits: Any, location: str, names: tuple[str, ...]) -> Any:
    """The first split of ``splits`` (the qrels repository, loaded once) named one of ``names``."""
    for name in names:
        if name in splits:
            return splits[name]
    raise FetchError(f"{location}: no qrels split named {' or '.join(names)} (found {', '.join(splits) or 'none'})")


def fetch_beir(spec: PublicSet, source: str, sample: int, show_progress: bool = True) -> FetchedSet:
    """Corpus (the first ``sample`` passages in hub order, all when 0), the qrels of the queries whose
    relevant passages are all in it, and those queries."""
    corpus_location = _hub_location(source, spec.repo)
    qrels_location = _hub_location(source, spec.repo + "-qrels")
    if show_progress:  # after the checks above, so that a failure stays one line
        note(f"fetching {spec.name} from {spec.origin if source == HUB else source}"
             + (f" (first {sample:,} passages)" if sample else ""))
    qrels_by_file: dict[str, list[tuple[str, str, int]]] = {}
    qrels_splits = _stream(qrels_location, None, None)  # one load for every split (each load reads the repository)
    for names, file in spec.qrels_splits:
        split = _qrels_split(qrels_splits, qrels_location, names)
        qrels_by_file[file] = _qrels_rows(split, qrels_location, file)
    rows: Iterable[dict[str, Any]] = _rows(_stream(corpus_location, "corpus", "corpus"), f"{corpus_location} corpus")
    if sample:
        rows = itertools.islice(rows, sample)
    corpus = []
    total = min(sample, spec.corpus_size) if sample else spec.corpus_size
    with progress_reporter(f"{spec.name} passages", total, enabled=show_progress) as bar:
        for row in rows:
            corpus.append({"_id": _text(row, "_id"), "title": _text(row, "title"), "text": _text(row, "text")})
            bar.advance(1)
    notes = []
    if sample and len(corpus) == sample:
        kept = {row["_id"] for row in corpus}
        for file, rels in qrels_by_file.items():
            missing = {q for q, d, s in rels if s > 0 and d not in kept}
            before = len({q for q, _, _ in rels})
            qrels_by_file[file] = [r for r in rels if r[0] not in missing and r[1] in kept]
            notes.append(f"{file}: kept {len({q for q, _, _ in qrels_by_file[file]}):,} of {before:,} queries, those "
                         f"whose relevant passages are all in the first {sample:,} passages")
    wanted = {q for rels in qrels_by_file.values() for q, _, _ in rels}
    queries = [{"_id": _text(r, "_id"), "text": _text(r, "text")}
               for r in _rows(_stream(corpus_location, "queries", "queries"), f"{corpus_location} queries")
               if _text(r, "_id") in wanted]
    where = "the hub" if source == HUB else f"the local mirror {source}"
    return FetchedSet(corpus, queries, qrels_by_file, f"{spec.repo}, {spec.repo}-qrels from {where}", notes)


# ---------------------------------------------------------------- SPF-QR-fr (GitHub history)


def _spf_bytes(source: str, timeout: float = 30.0) -> tuple[bytes, str]:
    if source != HUB:
        path = Path(source) / "etalab-ia" / "piaf-ml" / SPF_COMMIT / SPF_PATH
        if not path.is_file():
            raise FetchError(f"--source {source}: no file {path}")
        return path.read_bytes(), str(path)
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(SPF_URL, timeout=timeout) as response:
            return response.read(), SPF_URL
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise FetchError(f"cannot download {SPF_URL}: {reason}; retry online, or give --source DIR") from None


def spf_rows(data: bytes, where: str) -> FetchedSet:
    """BEIR rows from ``questions_spf.json`` (a JSON array of ``[fiche_id, question, page_text]``):
    corpus ``{"_id": fiche, "title": "", "text": page}``, queries ``q%04d``, one qrel each."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != SPF_SHA256:
        raise FetchError(f"{where}: sha256 {digest} is not the expected {SPF_SHA256} (a different file)")
    triples = json.loads(data.decode("utf-8"))
    corpus = [{"_id": fiche, "title": "", "text": page} for fiche, _, page in triples]
    queries = [{"_id": f"q{i:04d}", "text": question} for i, (_, question, _) in enumerate(triples)]
    qrels = {"test.tsv": [(f"q{i:04d}", fiche, 1) for i, (fiche, _, _) in enumerate(triples)]}
    return FetchedSet(corpus, queries, qrels, f"{where} (sha256 checked)", [])


def fetch_spf(source: str) -> FetchedSet:
    """SPF-QR-fr from its commit on GitHub (or a local mirror), checked against its known sha256."""
    data, where = _spf_bytes(source)
    return spf_rows(data, where)


def fetch(spec: PublicSet, source: str, sample: int, show_progress: bool = True) -> FetchedSet:
    """Rows of ``spec`` from ``source`` (``"hub"`` = the public origin, else a local mirror folder)."""
    if spec.name == "spf-qr-fr":
        return fetch_spf(source)
    return fetch_beir(spec, source, sample, show_progress)
