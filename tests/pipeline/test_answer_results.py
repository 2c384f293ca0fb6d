"""The answer commands' results: the files a rerun writes equal the golden files written before the
shape refactor (issue 17), run record and timings aside (replies: the chat test server's output)."""

from __future__ import annotations

import pytest

from tests.pipeline.answers_golden import FILES, GOLDEN, golden_server, read_output, run_all, without_volatile


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("answers-golden")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test")
    mp.delenv("OPENAI_BASE_URL", raising=False)
    try:
        server = golden_server().start()
    except OSError as err:
        mp.undo()
        pytest.skip(f"the golden runs need port 127.0.0.1:{err.args}: taken")
    try:
        run_all(workdir, server.base_url)
    finally:
        server.stop()
        mp.undo()
    return workdir


@pytest.mark.parametrize("produced", sorted(FILES))
def test_rerun_matches_the_golden_file(rerun, produced):
    assert without_volatile(read_output(rerun / produced)) == without_volatile(read_output(GOLDEN / FILES[produced]))
