"""Texts and ranked loaders: local JSON/JSONL, and the hub path (datasets) on a local directory of the same layout."""

from __future__ import annotations

import json

import pytest

from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
from ragdiag.errors import DataError, RagdiagError
from tests.pipeline.tiny_data import ranked_samples, texts_samples


def test_local_json_and_jsonl(tiny, tmp_path):
    texts, ranked = tiny
    loaded = load_texts(texts)
    assert [s.id for s in loaded.samples] == ["M-1", "M-2", "M-3", "M-4"] and len(loaded.sha256) == 64
    jsonl = tmp_path / "ranked.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in ranked_samples()) + "\n")
    assert [r.to_json() for r in load_ranked(jsonl).samples] == [r.to_json() for r in load_ranked(ranked).samples]


def test_hub_layout_directory_goes_through_datasets(tmp_path):
    folder = tmp_path / "hub"
    folder.mkdir()
    texts = texts_samples()
    texts.append({"id": "A-7", "q": "arxiv q", "p": ["a"], "n": ["b"], "c1": "cat", "q2": "second"})
    (folder / "samples_texts.json").write_text(json.dumps(texts))
    (folder / "samples_ranked.json").write_text(json.dumps(ranked_samples()))
    loaded = load_texts(folder)
    assert loaded.source.endswith("samples_texts.json")
    by_id = {s.id: s for s in loaded.samples}
    assert by_id["A-7"].extra == {"c1": "cat", "q2": "second"}
    assert by_id["M-1"].extra == {}  # keys only ARXIV rows have are not invented as nulls
    assert by_id["M-2"].to_json() == texts[1]
    assert [s.id for s in load_texts(folder, dataset="arxiv").samples] == ["A-7"]
    ranked = load_ranked(f"{folder}", dataset="msmarco")
    for got, want in zip([r.to_json() for r in ranked.samples], ranked_samples(), strict=True):
        # datasets' JSON reader rounds floats to ~10 digits; generate recomputes P and R from rank anyway
        assert got == {**want, "P": pytest.approx(want["P"], abs=1e-9)}


def test_errors_name_file_record_and_field(tmp_path):
    path = tmp_path / "t.json"
    bad = texts_samples()
    del bad[2]["q"]
    path.write_text(json.dumps(bad))
    with pytest.raises(DataError, match=r"t.json: record 3: field 'q': missing"):
        load_texts(path)
    dup = texts_samples()
    dup[3]["id"] = "M-1"
    path.write_text(json.dumps(dup))
    with pytest.raises(DataError, match=r"record 4: field 'id': duplicate id 'M-1' \(first in record 1\)"):
        load_texts(path)
    with pytest.raises(RagdiagError, match="no samples for dataset 'nq'"):
        load_ranked(_write(tmp_path, ranked_samples()), dataset="nq")
    with pytest.raises(RagdiagError, match="unknown dataset"):
        load_texts(path, dataset="bogus")
    with pytest.raises(DataError, match="file not found"):
        load_texts(tmp_path / "missing.json")


def _write(tmp_path, records):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    return path


def test_hub_source_fails_fast_and_clearly_when_unreachable(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RagdiagError, match="cannot load samples_texts.json from primer-ai/retrieval-response: the Hugging Face hub cannot be reached"):
        load_texts("hf:")
