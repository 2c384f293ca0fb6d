"""The ONNX Runtime backend: exported locally once, same vectors as torch (fp32), its own cache keys."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.retrieval.embedders import load_embedder

pytest.importorskip("onnxruntime", reason="the ONNX Runtime backend needs onnxruntime (pip install 'ragdiag[onnx]')")
pytest.importorskip("onnxscript", reason="exporting to ONNX needs onnxscript (pip install 'ragdiag[onnx]')")

TEXTS = ["hello world", "Volcanic lava flows destroyed the village near the crater; ash fell for days afterwards."]


@pytest.mark.model
def test_onnx_fp32_matches_torch_and_is_exported_once(tmp_path):
    torch_vectors = load_embedder("local", use_cache=False).encode(TEXTS)
    onnx = load_embedder("local?backend=onnx", cache_dir=tmp_path, use_cache=False)
    np.testing.assert_allclose(onnx.encode(TEXTS), torch_vectors, atol=1e-5)
    exported = list((tmp_path / "onnx").glob("*/model.onnx"))
    assert len(exported) == 1 and exported[0].stat().st_size > 1_000_000
    mtime = exported[0].stat().st_mtime_ns
    again = load_embedder("local?backend=onnx", cache_dir=tmp_path, use_cache=False)
    np.testing.assert_allclose(again.encode(TEXTS[:1]), torch_vectors[:1], atol=1e-5)
    assert exported[0].stat().st_mtime_ns == mtime  # reused, not re-exported


def test_backends_have_distinct_cache_keys(tmp_path):
    keys = {spec: load_embedder(spec, tmp_path)._vector_keys().key("0" * 64)
            for spec in ("local", "local?backend=onnx", "local?backend=onnx&quantize=int8")}
    assert len(set(keys.values())) == 3


@pytest.mark.model
def test_onnx_int8_quantises_per_channel_and_stays_close_to_torch(tmp_path):
    torch_vectors = load_embedder("local", use_cache=False).encode(TEXTS)
    int8 = load_embedder("local?backend=onnx&quantize=int8", cache_dir=tmp_path, use_cache=False)
    cosines = np.sum(int8.encode(TEXTS) * torch_vectors, axis=1)
    assert np.all(cosines > 0.95) and np.all(cosines < 1 - 1e-6)  # close, yet really quantised
    assert [p.name for p in (tmp_path / "onnx").glob("*/model_int8*.onnx")] == ["model_int8_per_channel.onnx"]
    assert int8.cache_params() == {"backend": "onnx", "quantize": "int8-per-channel"}
