"""Issue 33, without a Ray cluster: the engine options' ranges, where they appear, the conflicts
refused before any work, and the shape of the rows for ``ray.data.llm``'s vLLM processor (no GPU
here: the processor itself is not run)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.cli import options as p
from ragdiag.engine.settings import EngineSettings, active
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig, LLMClient
from ragdiag.llm.vllm_rows import sampling_params, vllm_row

runner = CliRunner()
ENGINE_FLAGS = ("--engine", "--ray-address", "--ray-workers", "--gpus-per-worker", "--llm-backend")
COMMANDS = (["index", "build"], ["robustness"], ["sweep"], ["probe", "names"], ["noise"], ["pipeline"],
            ["generate"], ["grade"], ["label"], ["triage"])


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_embedding_and_llm_command_has_the_engine_options(command):
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert all(flag in result.output for flag in ENGINE_FLAGS), result.output


@pytest.mark.parametrize("kwargs, says", [
    ({"engine": "spark"}, "--engine must be one of local, ray"),
    ({"engine": "ray", "ray_workers": 0}, "--ray-workers must be between 1 and 1024"),
    ({"engine": "ray", "gpus_per_worker": -1.0}, "--gpus-per-worker must be between 0 and 64"),
    ({"engine": "ray", "gpus_per_worker": float("nan")}, "--gpus-per-worker"),
    ({"engine": "ray", "ray_address": " "}, "--ray-address must be"),
    ({"llm_backend": "vllm"}, "--llm-backend vllm runs on Ray's GPU workers"),
])
def test_settings_refuse_out_of_range(kwargs, says):
    with pytest.raises(RagdiagError, match=says.replace("(", r"\(")):
        EngineSettings(**kwargs)


def test_the_help_default_is_the_settings_default():
    assert EngineSettings().ray_workers == p.DEFAULT_RAY_WORKERS


def test_activate_is_scoped():
    ray = EngineSettings(engine="ray")
    with ray.activate():
        assert active() is ray
    assert active().engine == "local"


@pytest.mark.parametrize("config, says", [({"cache": "off"}, "--cache off"), ({"batch": "openai"}, "--batch openai")])
def test_ray_llm_calls_need_the_cache_and_no_batch(config, says, tmp_path):
    with EngineSettings(engine="ray").activate(), pytest.raises(RagdiagError, match=says):
        LLMClient(ClientConfig(cache_dir=tmp_path, **config))


def test_ray_out_of_range_flags_are_usage_errors(tmp_path):
    for flag, value in (("--ray-workers", "0"), ("--gpus-per-worker", "65"), ("--engine", "spark")):
        result = runner.invoke(app, ["index", "build", "--corpus", "c.jsonl", "--out-dir", str(tmp_path / "o"), flag, value])
        assert result.exit_code == 2 and flag in result.output


def test_help_does_not_import_ray():
    code = "import sys, ragdiag.cli, ragdiag.llm.client, ragdiag.retrieval.embedder_base; print('ray' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_vllm_rows_keep_the_messages_and_map_the_sampling_parameters():
    client = LLMClient(ClientConfig(cache="off"))
    request = client.request([{"role": "user", "content": "Q?"}], "generate.v1", json_reply=True, top_logprobs=5)
    row = vllm_row("k1", request)
    assert row["key"] == "k1" and row["messages"] == request["messages"]
    assert row["sampling_params"] == {"temperature": 0.0, "seed": 0, "max_tokens": 1, "logprobs": 5,
                                      "structured_outputs": {"json_object": True}}
    assert sampling_params({"temperature": 0.5})["max_tokens"] == 1024


def test_vllm_rows_have_the_columns_the_ray_vllm_stages_require():
    """The processor's first stage (chat template) and its engine stage, as installed Ray declares them."""
    pytest.importorskip("ray.llm", reason="ray[data] with ray.data.llm")
    from ray.llm._internal.batch.stages import vllm_engine_stage
    from ray.llm._internal.batch.stages.chat_template_stage import ChatTemplateStage
    from ray.llm._internal.batch.stages.vllm_engine_stage import vLLMEngineStage

    row = vllm_row("k", LLMClient(ClientConfig(cache="off")).request([{"role": "user", "content": "Q"}], "p"))
    stage = vLLMEngineStage(fn_constructor_kwargs={"model": "m", "task_type": "generate"}, map_batches_kwargs={})
    first = ChatTemplateStage(fn_constructor_kwargs={"model": "m"}, map_batches_kwargs={})
    required = set(first.get_required_input_keys()) | set(stage.get_required_input_keys())
    assert required == {"messages", "sampling_params"} and required <= set(row)
    import inspect

    assert '"structured_outputs" in sampling_params' in inspect.getsource(vllm_engine_stage)
