"""``--llm-backend vllm``: ragdiag's requests as rows for ``ray.data.llm``'s vLLM processor.

Each cache-key request becomes one row ``{"key", "messages", "sampling_params"}``: the chat messages
unchanged (the processor's chat-template stage applies the model's template), and the request's
parameters mapped to vLLM ``SamplingParams`` fields (temperature, seed, ``max_tokens``, ``logprobs`` =
the number of top log-probabilities, JSON replies as ``structured_outputs.json_object``, which Ray's vLLM stage turns into vLLM's
``StructuredOutputsParams``). The processor
(``vLLMEngineProcessorConfig`` + ``build_processor``) runs the model on ``--ray-workers`` GPU actors
(``--gpus-per-worker`` each, at least 1); its ``generated_text`` and token counts come back to this
process, which caches them under the same keys (provider ``ray.data.llm:vllm``).
Tested here for the row and config shapes only: this machine has no GPU.
Source: https://docs.ray.io/en/latest/data/working-with-llms.html
"""

from __future__ import annotations

from typing import Any

from ragdiag.errors import RagdiagError

DEFAULT_MAX_TOKENS = 1024  # vLLM's own default is 16: too short for an answer


def sampling_params(params: dict[str, Any]) -> dict[str, Any]:
    """vLLM ``SamplingParams`` fields for a request's ``params`` (an OpenAI chat-completions subset)."""
    out: dict[str, Any] = {"temperature": float(params.get("temperature", 0.0)),
                           "max_tokens": int(params.get("max_tokens") or DEFAULT_MAX_TOKENS)}
    if params.get("seed") is not None:
        out["seed"] = int(params["seed"])
    if params.get("logprobs"):
        out["logprobs"] = int(params.get("top_logprobs") or 1)
    if (params.get("response_format") or {}).get("type") == "json_object":
        out["structured_outputs"] = {"json_object": True}
    return out


def vllm_row(key: str, request: dict[str, Any]) -> dict[str, Any]:
    """One processor input row: the cache key, the chat messages, the sampling parameters."""
    return {"key": key, "messages": [dict(m) for m in request["messages"]],
            "sampling_params": sampling_params(request["params"])}


def processor_config(model: str, settings: Any, batch_size: int = 64) -> Any:
    """The ``vLLMEngineProcessorConfig`` for ``model`` on ``--ray-workers`` engine replicas."""
    from ray.data.llm import vLLMEngineProcessorConfig

    return vLLMEngineProcessorConfig(model_source=model, concurrency=settings.ray_workers, batch_size=batch_size,
                                     engine_kwargs={"tensor_parallel_size": max(1, int(settings.gpus_per_worker))})


def reply_row(row: dict[str, Any]) -> dict[str, Any]:
    """The processor's output row as (key, text, token counts)."""
    return {"key": row["key"], "text": row["generated_text"], "prompt_tokens": int(row.get("num_input_tokens") or 0),
            "completion_tokens": int(row.get("num_generated_tokens") or 0)}


def run_vllm(client: Any, settings: Any, keys: list[str], pending: dict[str, dict[str, Any]]) -> None:
    """Run the requests through the vLLM processor and cache the replies (needs GPU workers with vllm)."""
    from ragdiag.engine.settings import ray_session

    session = ray_session()
    session.check_gpus(max(1.0, settings.gpus_per_worker))
    session.check_packages(["ragdiag", "vllm"])
    if any(pending[k]["params"].get("logprobs") for k in keys):
        raise RagdiagError("--grade-mode logprobs needs the server's top_logprobs in OpenAI's reply shape: use "
                           "--llm-backend openai (a vLLM server's OpenAI API) for it")
    models = sorted({pending[k]["model"] for k in keys})
    if len(models) != 1:
        raise RagdiagError(f"--llm-backend vllm runs one model per run, got {', '.join(models)}")
    import ray.data
    from ray.data.llm import build_processor

    processor = build_processor(processor_config(models[0], settings), postprocess=reply_row)
    dataset = processor(ray.data.from_items([vllm_row(k, pending[k]) for k in keys]))
    for row in dataset.iter_rows():
        request = pending[row["key"]]
        client.cache.put(row["key"], request, row["text"], row["prompt_tokens"], row["completion_tokens"])
        with client._lock:
            client._sent.add(row["key"])
            client._batched.add(row["key"])
            client.stats.calls += 1
