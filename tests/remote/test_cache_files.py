"""Issue 9, caches, through the real CLI: corrupted cache files, export onto the cache, validated import,
--kind across both caches. Every failure: exit 2, one stderr line naming the problem, no traceback,
inputs (the cache files) byte-identical, no partial output."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.remote.call_cache import CACHE_FILE, CallCache, request_key
from ragdiag.remote.embedding_cache import CACHE_FILE as EMBEDDINGS_FILE
from ragdiag.remote.embedding_cache import EmbeddingCache, text_key


def cli(*args):
    return CliRunner().invoke(app, [*map(str, args)])


def one_error_line(result, pattern: str, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stdout + result.stderr, result.stderr
    assert lines[0].startswith("ragdiag: error: ") and re.search(pattern, lines[0]), lines[0]
    return lines[0]


def _request(i: int) -> dict:
    return {"provider": "http://127.0.0.1:8000/v1", "model": "m", "prompt": "grading@v2",
            "messages": [{"role": "user", "content": f"question {i}"}], "params": {"temperature": 0.0, "seed": 0}}


@pytest.fixture()
def caches(tmp_path) -> Path:
    """A cache folder with 3 LLM entries and 2 vectors of one embedder."""
    folder = tmp_path / "cache"
    llm = CallCache(folder / CACHE_FILE)
    for i in range(3):
        llm.put(request_key(_request(i)), _request(i), f"reply {i}", 5, 2)
    llm.store.checkpoint()
    llm.close()
    vectors = EmbeddingCache(folder / EMBEDDINGS_FILE)
    keys = vectors.register({"provider": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "e", "params": {}},
                            "openai:e@http://127.0.0.1:8000/v1")
    vectors.put_many(keys, [text_key("a"), text_key("b")], np.eye(2, 4, dtype=np.float32))
    vectors.store.checkpoint()
    vectors.close()
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".sqlite"}


def test_stats_covers_both_caches_by_default(caches):
    result = cli("cache", "stats", "--cache-dir", caches, "--json")
    assert result.exit_code == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["caches"]["llm"]["entries"] == 3 and info["caches"]["embeddings"]["entries"] == 2
    assert info["entries"] == 3 and info["groups"][0]["prompt"] == "grading@v2"  # the old top-level keys stay
    assert info["caches"]["embeddings"]["groups"] == [
        {"embedder": "openai:e@http://127.0.0.1:8000/v1", "model": "e", "entries": 2, "dim": 4}]
    only = json.loads(cli("cache", "stats", "--cache-dir", caches, "--kind", "embeddings", "--json").stdout)
    assert list(only["caches"]) == ["embeddings"]


@pytest.mark.parametrize("target", ["llm_calls.sqlite", "embeddings.sqlite", "llm_calls.sqlite-wal", "new.jsonl"])
def test_export_onto_the_cache_or_into_its_folder_is_refused(caches, target):
    before = _snapshot(caches)
    line = one_error_line(cli("cache", "export", "--cache-dir", caches, "--kind", "all", "--out", caches / target),
                          r"inside the cache folder|would overwrite")
    assert str(caches) in line
    assert _snapshot(caches) == before and not (caches / "new.jsonl").exists()


def test_export_import_round_trip_of_both_kinds(caches, tmp_path):
    out = tmp_path / "all.jsonl"
    result = cli("cache", "export", "--cache-dir", caches, "--kind", "all", "--out", out)
    assert result.exit_code == 0 and "exported 5 entries" in result.stdout
    assert not list(tmp_path.glob(".all.jsonl.*"))  # the temporary file was renamed into place
    fresh = tmp_path / "fresh"
    result = cli("cache", "import", out, "--cache-dir", fresh)
    assert result.exit_code == 0, result.stderr
    assert "3 new llm entries, 2 new embeddings entries" in result.stdout and result.stderr == ""
    keys = [json.loads(line)["key"] for line in out.read_text().splitlines()]
    exported_again = tmp_path / "again.jsonl"
    assert cli("cache", "export", "--cache-dir", fresh, "--kind", "all", "--out", exported_again).exit_code == 0
    assert [json.loads(line)["key"] for line in exported_again.read_text().splitlines()] == keys
    llm_only = cli("cache", "import", out, "--cache-dir", tmp_path / "llm-only", "--kind", "llm")
    assert "3 new llm entries" in llm_only.stdout and "skipped 2 bad entries" in llm_only.stdout


def test_import_skips_bad_entries_with_a_count(caches, tmp_path):
    out = tmp_path / "x.jsonl"
    assert cli("cache", "export", "--cache-dir", caches, "--out", out).exit_code == 0
    good = [json.loads(line) for line in out.read_text().splitlines()]
    bad = [dict(good[0], reply=None), dict(good[1], request={**good[1]["request"], "model": 7}),
           dict(good[2], key="0" * 64), {"request": "text", "reply": "r"}, [1, 2],
           {"kind": "embeddings", "identity": {"model": "e"}, "text_sha256": "zz", "dim": 2, "vector": "AAAA"},
           {"kind": "weights", "reply": "r"}]
    out.write_text("".join(json.dumps(e) + "\n" for e in bad + good[:1]))
    fresh = tmp_path / "fresh"
    result = cli("cache", "import", out, "--cache-dir", fresh)
    assert result.exit_code == 0, result.stderr
    assert "imported 1 new llm entries" in result.stdout and "skipped 7 bad entries" in result.stdout
    reasons = result.stderr.strip().splitlines()
    assert len(reasons) == 7 and all(r.startswith(f"ragdiag: skipped: {out}: entry ") for r in reasons)
    assert any("entry 1: reply must be a string" in r for r in reasons)
    assert any("entry 2: request model and prompt must be strings" in r for r in reasons)
    stored = CallCache(fresh / CACHE_FILE)
    assert [e["reply"] for e in stored.export()] == [good[0]["reply"]]
    stored.close()


def test_import_of_a_file_that_is_not_json_lines(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    one_error_line(cli("cache", "import", bad, "--cache-dir", tmp_path / "c"), rf"{re.escape(str(bad))}: malformed JSON")


def _truncate(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(max(1, os.path.getsize(path) // 3))


def _random(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _header(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.write(b"garbage over the header!")


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize("breaker", [_truncate, _random, _header, _folder], ids=["truncated", "random", "header", "folder"])
@pytest.mark.parametrize("name,kind", [(CACHE_FILE, "llm"), (EMBEDDINGS_FILE, "embeddings")])
def test_corrupted_cache_is_one_line_naming_the_file_and_the_way_out(caches, tmp_path, breaker, name, kind):
    path = caches / name
    breaker(path)
    before = path.read_bytes() if path.is_file() else None
    for args in (("stats", "--kind", kind), ("export", "--kind", kind, "--out", tmp_path / "out.jsonl")):
        line = one_error_line(cli("cache", *args, "--cache-dir", caches), re.escape(str(path)))
        assert "--cache off" in line and "move the file aside" in line
        assert not (tmp_path / "out.jsonl").exists()
    assert (path.read_bytes() if path.is_file() else None) == before


def test_corrupted_llm_cache_stops_a_command_with_one_line(caches, tmp_path, monkeypatch):
    from tests.pipeline.tiny_data import write_tiny

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    _random(caches / CACHE_FILE)
    texts, ranked = write_tiny(tmp_path / "data")
    result = cli("generate", "--texts", texts, "--ranked", ranked, "--ks", "2", "--out", tmp_path / "a.jsonl",
                 "--base-url", "http://127.0.0.1:9/v1", "--cache-dir", caches, "--no-progress")
    one_error_line(result, re.escape(str(caches / CACHE_FILE)) + r".*--cache off")
    assert not (tmp_path / "a.jsonl").exists()


def test_prune_needs_a_filter_and_works_per_kind(caches):
    one_error_line(cli("cache", "prune", "--cache-dir", caches), r"needs --model")
    one_error_line(cli("cache", "prune", "--cache-dir", caches, "--kind", "all", "--model", "m"), r"one cache at a time")
    result = cli("cache", "prune", "--cache-dir", caches, "--kind", "embeddings", "--model", "e")
    assert result.exit_code == 0 and "deleted 2 entries" in result.stdout
    assert "deleted 3 entries" in cli("cache", "prune", "--cache-dir", caches, "--model", "m").stdout


def test_missing_cache_and_a_file_as_cache_dir(tmp_path):
    one_error_line(cli("cache", "stats", "--kind", "llm", "--cache-dir", tmp_path / "none"), r"no LLM call cache at")
    one_error_line(cli("cache", "stats", "--cache-dir", tmp_path / "none"), r"no LLM call cache or embedding cache in")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for args in (("stats",), ("export", "--out", tmp_path / "o.jsonl"), ("prune", "--model", "m")):
        one_error_line(cli("cache", *args, "--cache-dir", a_file), rf"{re.escape(str(a_file))}.*(is a file|not a folder)")
    assert a_file.read_text() == "x"


def test_embedding_commands_take_the_cache_modes(tmp_path, monkeypatch):
    from tests.servers.embeddings_server import EmbeddingsServer

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"passage {i}"}) + "\n" for i in range(3)))
    queries.write_text("".join(json.dumps({"_id": f"q{i}", "text": f"query {i}"}) + "\n" for i in range(2)))
    cache = tmp_path / "cache"

    def build(url, *extra):
        return cli("index", "build", "--corpus", corpus, "--out-dir", tmp_path / "idx", "--embedder", "openai:m",
                   "--index-spec", "flat", "--base-url", url, "--cache-dir", cache, *extra)

    def retrieve(url, *extra):
        return cli("retrieve", "--index-dir", tmp_path / "idx", "--queries", queries, "--out", tmp_path / "run.jsonl",
                   "--k", "2", "--base-url", url, "--cache-dir", cache, *extra)

    with EmbeddingsServer(dim=8) as server:
        url = server.base_url
        one_error_line(build(url, "--cache", "replay"), r"--cache replay: 3 of 3 distinct texts have no cached vector")
        assert server.requests == 0 and server.model_list_requests == 0
        assert build(url).exit_code == 0 and retrieve(url).exit_code == 0
        assert server.texts_embedded == 5
    assert build(url, "--cache", "replay").exit_code == 0  # the server is gone: the cache answers everything
    result = retrieve(url, "--cache", "replay")
    assert result.exit_code == 0, result.stderr


def test_import_skips_lines_that_are_not_json_and_counts_them(caches, tmp_path):
    """Issue 18: as the README says, bad entries are skipped and counted — a line that is not JSON
    (cut short, binary junk) included — instead of refusing the whole file."""
    out = tmp_path / "x.jsonl"
    assert cli("cache", "export", "--cache-dir", caches, "--out", out).exit_code == 0
    lines = out.read_bytes().splitlines()
    out.write_bytes(b"\n".join([lines[0], lines[1][: len(lines[1]) // 2], b"\xff\xfe junk", lines[2]]) + b"\n")
    fresh = tmp_path / "fresh"
    result = cli("cache", "import", out, "--cache-dir", fresh, "--kind", "llm")
    assert result.exit_code == 0, result.stderr
    assert "imported 2 new llm entries" in result.stdout and "skipped 2 bad entries" in result.stdout
    reasons = result.stderr.strip().splitlines()
    assert [r.split(": malformed JSON")[0] for r in reasons] == [f"ragdiag: skipped: {out}: entry 2 (line 2)",
                                                                f"ragdiag: skipped: {out}: entry 3 (line 3)"]
