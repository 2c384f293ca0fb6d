"""`make install`'s torch choice (tools/install_torch.sh), run with DRY_RUN=1: the pip command it would run.

The branches: TORCH=gpu and a Linux machine with an NVIDIA GPU take PyPI's default build; otherwise
the CPU build from TORCH_INDEX when it answers (a local HTTP server stands in for
download.pytorch.org), else VERSION+cpu when the configured indexes list it, else the plain pin with
a warning on stderr.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "install_torch.sh"
UNREACHABLE = "http://127.0.0.1:9/whl/cpu"  # port 9 (discard): connection refused at once

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the script's auto branch is for Linux")


def _choose(mode: str, version: str, index: str, path_prefix: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DRY_RUN": "1"}  # pip's own settings (PIP_FIND_LINKS, …) stay as `make` sees them
    if path_prefix:
        env["PATH"] = f"{path_prefix}:{env.get('PATH', '/usr/bin:/bin')}"
    return subprocess.run(["bash", str(SCRIPT), sys.executable, mode, version, index], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def test_gpu_takes_the_plain_pin():
    result = _choose("gpu", "2.13.0", UNREACHABLE)
    assert result.returncode == 0 and result.stdout.split()[-1] == "torch==2.13.0"


def test_auto_with_an_nvidia_gpu_takes_the_plain_pin(tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: test double'\n")
    fake.chmod(0o755)
    result = _choose("auto", "2.13.0", UNREACHABLE, path_prefix=str(tmp_path))
    assert result.stdout.split()[-1] == "torch==2.13.0" and "an NVIDIA GPU answers nvidia-smi" in result.stderr


def test_cpu_index_that_answers_is_used(tmp_path):
    (tmp_path / "whl" / "cpu" / "torch").mkdir(parents=True)
    (tmp_path / "whl" / "cpu" / "torch" / "index.html").write_text("<html></html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)  # a quick shutdown
    thread.start()
    try:
        index = f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
        result = _choose("cpu", "2.13.0", index)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert result.stdout.split()[-3:] == ["--index-url", index, "torch==2.13.0"], result.stderr


def test_unreachable_index_and_no_cpu_build_listed_falls_back_loudly():
    result = _choose("cpu", "0.0.1", UNREACHABLE)  # no index lists torch 0.0.1+cpu
    assert result.stdout.split()[-1] == "torch==0.0.1"
    assert "WARNING" in result.stderr and "CUDA build" in result.stderr and "TORCH_INDEX" in result.stderr


def test_unreachable_index_takes_the_cpu_build_the_configured_indexes_list():
    listed = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "torch"], capture_output=True, text=True,
                            timeout=120, check=False).stdout
    if "2.13.0+cpu" not in listed:
        pytest.skip("the configured indexes do not list torch 2.13.0+cpu here")
    result = _choose("cpu", "2.13.0", UNREACHABLE)
    assert result.stdout.split()[-1] == "torch==2.13.0+cpu" and "list torch 2.13.0+cpu" in result.stderr


def test_unknown_mode_is_refused():
    result = _choose("tpu", "2.13.0", UNREACHABLE)
    assert result.returncode == 2 and "expected auto, cpu or gpu" in result.stderr
