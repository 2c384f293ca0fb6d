"""The bundled model's vectors for the texts the documentation examples embed, shipped in
``tests/docs/example-vectors/`` so that the examples' test does not embed them again in every session.

A user running a page embeds these texts with the bundled model (``--embedder local``,
``dense:local``); the test session starts its shared embedding cache with the shipped vectors
instead (:func:`seed`, the same as ``RAGDIAG_EXAMPLES_CACHE`` kept from an earlier session; cached
vectors do not change results), and a page with its own ``--cache-dir /tmp/ragdiag/cache`` starts
that folder with a copy of them (``seed_page_cache`` in tests/docs/test_examples.py). A text the file
lacks (an example or a bundled set changed since it was built) is embedded by the model as before:
the file saves time, it never stands in for a vector it does not hold.
``tests/docs/test_example_vectors.py`` re-embeds some of the shipped texts with the model and
compares.

Rebuild (after changing what the examples embed; ~2 minutes of embedding)::

    RAGDIAG_EXAMPLES_VECTORS=off RAGDIAG_EXAMPLES_CACHE=/tmp/ex-cache \\
        pytest -p no:xdist --basetemp /tmp/ex-run tests/docs/test_examples.py tests/docs/test_examples_other_pages.py
    python -m tests.docs.example_vectors /tmp/ex-cache/embeddings.sqlite /tmp/ex-run/*/out/ragdiag/cache/embeddings.sqlite

File layout (``numpy.savez_compressed``): ``identity`` (one canonical JSON embedder identity per
group, the embedding cache's), ``label`` (its readable label), ``group`` (each row's index into
``identity``), ``text_sha256`` (each row's text hash, ASCII hex) and ``vectors`` (rows × dim, float32, as the
cache holds them), rows sorted by group then hash.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import numpy as np

from tests.docs.examples import ROOT

VECTORS = ROOT / "tests" / "docs" / "example-vectors" / "minilm.npz"
MODEL = "st:all-MiniLM-L6-v2"  # the bundled model's embedder label (ragdiag/retrieval/embedders.py)


def seed(cache_dir: Path, source: Path = VECTORS) -> int:
    """Add the shipped vectors to the embedding cache in ``cache_dir`` (existing ones kept); returns how many."""
    from ragdiag.remote.embedding_cache import CACHE_FILE, EmbeddingCache

    data = np.load(source)
    cache = EmbeddingCache(cache_dir / CACHE_FILE)
    try:
        for index, (identity, label) in enumerate(zip(data["identity"], data["label"])):
            rows = data["group"] == index
            cache.put_many(cache.register(json.loads(str(identity)), str(label)),
                           [h.decode("ascii") for h in data["text_sha256"][rows]], data["vectors"][rows])
    finally:
        cache.close()
    return len(data["group"])


def collect(caches: list[Path], label: str = MODEL) -> dict[tuple[str, str], dict[str, bytes]]:
    """The vectors of the embedder ``label`` in the given cache files: {(identity, label): {hash: float32 bytes}}."""
    found: dict[tuple[str, str], dict[str, bytes]] = {}
    for path in caches:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT e.identity, e.label, v.text_sha256, v.vector FROM vectors v "
                              "JOIN embedders e ON v.identity_key = e.identity_key WHERE e.label = ?", (label,))
            for identity, name, text_sha, blob in rows:
                found.setdefault((identity, name), {}).setdefault(text_sha, blob)
    return found


def write(found: dict[tuple[str, str], dict[str, bytes]], out: Path = VECTORS) -> int:
    """Write the collected vectors in the file layout above; returns the number of rows."""
    groups = sorted(found)
    group, hashes, vectors = [], [], []
    for index, key in enumerate(groups):
        for text_sha in sorted(found[key]):
            group.append(index)
            hashes.append(text_sha)
            vectors.append(np.frombuffer(found[key][text_sha], dtype="<f4"))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as handle:
        np.savez_compressed(handle, identity=np.array([g[0] for g in groups]), label=np.array([g[1] for g in groups]),
                            group=np.array(group, dtype=np.int32), text_sha256=np.array(hashes, dtype="S64"),
                            vectors=np.stack(vectors).astype("<f4"))
    return len(group)


if __name__ == "__main__":
    count = write(collect([Path(p) for p in sys.argv[1:]]))
    print(f"wrote {VECTORS.relative_to(ROOT)} ({count} vectors)")
