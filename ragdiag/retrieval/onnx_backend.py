"""ONNX Runtime backend for sentence-transformers models (``local?backend=onnx[&quantize=int8]``).

The model's transformer is exported locally with ``torch.onnx.export`` (dynamo exporter, dynamic
batch and sequence axes; no hub access) into the cache folder, optionally quantised with ONNX
Runtime's dynamic int8 quantisation (``quantize_dynamic``: weights int8 with one scale per output
channel, activations quantised per tensor at run time), and run with ``onnxruntime``; pooling follows the model's own ``1_Pooling`` config (mean,
CLS or max over the attention mask). sentence-transformers' built-in ONNX path needs ``optimum``,
whose current release pins transformers < 4.58, hence this small loader.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ragdiag.config import resolve_cache_dir
from ragdiag.errors import RagdiagError
from ragdiag.extras import require
from ragdiag.io.progress import note
from ragdiag.io.writer import atomic_path

SUPPORTED_MODULES = {"sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
                     "sentence_transformers.models.Normalize"}


def _pooling_mode(model_dir: Path) -> str:
    """mean / cls / max from the model's modules.json and 1_Pooling/config.json."""
    modules = json.loads((model_dir / "modules.json").read_text()) if (model_dir / "modules.json").is_file() else []
    kinds = {m.get("type", "") for m in modules}
    unsupported = kinds - SUPPORTED_MODULES
    if unsupported:
        raise RagdiagError(f"the onnx backend runs Transformer + Pooling (+ Normalize) models; {model_dir} also has "
                           f"{', '.join(sorted(unsupported))}: use backend=torch")
    pooling = next((m for m in modules if m.get("type", "").endswith("Pooling")), None)
    config = json.loads((model_dir / pooling["path"] / "config.json").read_text()) if pooling else {}
    for mode, key in (("cls", "pooling_mode_cls_token"), ("max", "pooling_mode_max_tokens"), ("mean", "pooling_mode_mean_tokens")):
        if config.get(key):
            return mode
    return "mean"


def _export(model_dir: Path, target: Path, quantize: str | None) -> Path:
    """Export (and quantise) once into ``target``; later runs reuse the files."""
    fp32 = target / "model.onnx"
    if not fp32.is_file():
        torch = require("torch")
        require("onnxscript")  # torch.onnx's dynamo exporter
        from transformers import AutoModel, AutoTokenizer

        note(f"exporting {model_dir.name} to ONNX in {target} (once) …")
        model = AutoModel.from_pretrained(str(model_dir)).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tokenizer.model_input_names]

        class _Hidden(torch.nn.Module):
            def __init__(self, inner) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids=None):
                given = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
                return self.inner(**{n: given[n] for n in names}).last_hidden_state

        sample = tokenizer(["a short text", "a somewhat longer text for the example"] * 2, padding=True, return_tensors="pt")
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", min=2, max=4096)
        with atomic_path(fp32) as tmp:
            torch.onnx.export(_Hidden(model), tuple(sample[n] for n in names), str(tmp), input_names=names,
                              output_names=["last_hidden_state"], dynamic_shapes={n: {0: batch, 1: seq} for n in names},
                              opset_version=18, dynamo=True, external_data=False)
    if quantize != "int8":
        return fp32
    int8 = target / "model_int8_per_channel.onnx"
    if not int8.is_file():
        require("onnxruntime")
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with atomic_path(int8) as tmp:  # per-channel weights: on SciFact nDCG@10 −0.0054 per tensor, see BENCHMARKS.md
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    return int8


class OnnxSentenceModel:
    """The part of ``SentenceTransformer`` ragdiag uses (tokenizer, max_seq_length, encode), on ONNX Runtime."""

    def __init__(self, model_dir: Path, onnx_file: Path, device: str) -> None:
        ort = require("onnxruntime")
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        config = model_dir / "sentence_bert_config.json"
        self.max_seq_length = int(json.loads(config.read_text()).get("max_seq_length") or 512) if config.is_file() else 512
        self.pooling = _pooling_mode(model_dir)
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device.startswith("cuda") else ["CPUExecutionProvider"]
        available = set(ort.get_available_providers())
        self.session = ort.InferenceSession(str(onnx_file), providers=[p for p in providers if p in available])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def encode(self, texts: list[str], batch_size: int = 32, **_: object) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            enc = self.tokenizer(texts[start : start + batch_size], padding=True, truncation=True,
                                 max_length=self.max_seq_length, return_tensors="np")
            hidden = self.session.run(None, {n: enc[n].astype(np.int64) for n in self.inputs})[0]
            mask = enc["attention_mask"][..., None].astype(hidden.dtype)
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            elif self.pooling == "max":
                pooled = np.where(mask > 0, hidden, -np.inf).max(axis=1)
            else:
                pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            out.append(pooled.astype(np.float32))
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def load_onnx_model(path: str, device: str, quantize: str | None = None, cache_dir: Path | None = None) -> OnnxSentenceModel:
    """Export ``path`` (a local sentence-transformers folder) once into ``<cache>/onnx/<digest>/`` and load it."""
    model_dir = Path(path)
    if not (model_dir / "config.json").is_file():
        raise RagdiagError(f"the onnx backend needs a local model folder with config.json; '{path}' is not one")
    digest = hashlib.sha256(str(model_dir.resolve()).encode()).hexdigest()[:16]
    target = resolve_cache_dir(cache_dir) / "onnx" / f"{model_dir.name}-{digest}"
    return OnnxSentenceModel(model_dir, _export(model_dir, target, quantize), device)
