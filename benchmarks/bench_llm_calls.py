"""1,000 grading calls with 16 workers against the local test chat server answering in ~50 ms.

Cold: ``run_grade`` (the code path of ``ragdiag grade``) with an empty call cache — the endpoint
check, then every judge call goes through ``ragdiag.remote`` (retry policy, transport seam) to the
server, is parsed and committed to the shared SQLite store. Warm: the same run again on the filled
cache — no request is sent. Baseline measured in the same run: the same 1,000 requests sent with
the bare ``openai`` SDK from 16 threads (no cache, no parsing, no bookkeeping); the floor is
1,000 × latency / 16. Server and client share this process (and its GIL), so the server's own
work is included in every timing.

Targets (issue 4): cold ≤ 10 s, warm ≤ 1 s.

Run: ``.venv/bin/python benchmarks/bench_llm_calls.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import median_time, write_section  # noqa: E402
from ragdiag.commands.grade import GradeRequest  # noqa: E402
from ragdiag.commands.grade import run as grade_command  # noqa: E402
from ragdiag.llm.client import ClientConfig  # noqa: E402
from ragdiag.llm.prompts import load_prompt  # noqa: E402


def run_grade(answers, out, config, progress=False):
    """``ragdiag grade``'s code path (:func:`ragdiag.commands.grade.run`)."""
    return grade_command(GradeRequest(answers, out, config, progress=progress))

from tests.servers.chat_server import ChatServer  # noqa: E402

CALLS, WORKERS, LATENCY, REPEATS = 1000, 16, 0.05, 3


def write_answers(path: Path, rows: int) -> None:
    """An answers file with ``rows`` top-K rows (4 per query), each graded once."""
    lines = [{"kind": "meta", "meta": {"command": "bench_llm_calls"}}]
    for q in range(rows // 4):
        lines.append({"kind": "ideal", "id": f"M-{q}", "q": f"question {q}?", "answer": f"ideal answer {q} words{q}"})
        for k in (2, 3, 4, 5):
            rank = [1] + list(range(2, k + 1))  # one positive (index 1 < Np) on top, negatives after
            in_k = [1 if r < 2 else 0 for r in rank]
            lines.append({"kind": "topK", "id": f"M-{q}", "E": "L6", "Nc": 10, "Np": 2, "K": k, "rank": rank,
                          "inK": in_k, "P": 1 / k, "R": 0.5, "q": f"question {q}?", "answer": f"top {k} answer words{q}"})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


def sdk_baseline(base_url: str, answers: Path) -> None:
    """The same judge requests with the bare openai SDK, 16 threads, nothing cached."""
    import openai

    grading = load_prompt("grading")
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    ideal = {r["id"]: r["answer"] for r in rows if r["kind"] == "ideal"}
    messages = [grading.messages(query=r["q"], ideal=ideal[r["id"]], candidate=r["answer"])
                for r in rows if r["kind"] == "topK"]
    client = openai.OpenAI(api_key="bench", base_url=base_url, max_retries=0)

    def send(m):
        return client.chat.completions.create(model="gpt-4o-mini", messages=m, temperature=0.0, seed=0,
                                              response_format={"type": "json_object"}).choices[0].message.content

    with ThreadPoolExecutor(WORKERS) as pool:
        assert len(list(pool.map(send, messages))) == CALLS
    client.close()


def main() -> None:
    os.environ["OPENAI_API_KEY"] = "bench"
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, ChatServer(latency=LATENCY) as server:
        tmp_dir = Path(tmp)
        answers = tmp_dir / "answers.jsonl"
        write_answers(answers, CALLS)
        sdk_baseline(server.base_url, answers)  # warm-up: imports, connections
        baseline, _ = median_time(lambda: sdk_baseline(server.base_url, answers), REPEATS)

        cold_samples, warm_samples, counts = [], [], []
        for rep in range(REPEATS):
            config = ClientConfig(base_url=server.base_url, cache_dir=tmp_dir / f"cache{rep}", workers=WORKERS)
            before = server.requests
            cold, _ = median_time(lambda config=config: run_grade(answers, tmp_dir / "g.json", config, progress=False), 1)
            sent_cold = server.requests - before
            warm, _ = median_time(lambda config=config: run_grade(answers, tmp_dir / "g.json", config, progress=False), 1)
            counts.append((sent_cold, server.requests - before - sent_cold))
            cold_samples.append(cold)
            warm_samples.append(warm)
    cold, warm = statistics.median(cold_samples), statistics.median(warm_samples)
    floor = CALLS * LATENCY / WORKERS
    assert all(c == (CALLS, 0) for c in counts), counts
    table = "\n".join([
        "| run | median s | samples s | requests sent | target |",
        "|---|---:|---:|---:|---|",
        f"| bare openai SDK, 16 threads, no cache (baseline) | {baseline:.2f} | – | {CALLS} | – |",
        f"| `run_grade` cold (empty cache) | {cold:.2f} | {', '.join(f'{s:.2f}' for s in cold_samples)} | {CALLS} | ≤ 10 s |",
        f"| `run_grade` warm (all cached) | {warm:.3f} | {', '.join(f'{s:.3f}' for s in warm_samples)} | 0 | ≤ 1 s |",
    ])
    markdown = (
        "## LLM calls: 1,000 grading calls, 16 workers, local server at 50 ms\n\n"
        "`.venv/bin/python benchmarks/bench_llm_calls.py` — the grading path of `ragdiag grade` "
        "(judge prompt; endpoint check, retry policy and transport seam of `ragdiag/remote/`; JSON parse; "
        "the shared SQLite store; progress bookkeeping) against the local test chat "
        f"server (`tests/servers/chat_server.py`, {LATENCY * 1000:.0f} ms per reply) in the same process. "
        f"Floor = 1,000 × {LATENCY * 1000:.0f} ms / 16 = {floor:.2f} s. Cold/warm: {REPEATS} runs, each with a fresh "
        "cache dir (cold) then the same run again (warm).\n\n"
        f"{table}\n\n"
        f"Cold overhead over the bare SDK: {cold / baseline:.2f}×. Load average (1 min) {load_before:.1f} before "
        f"and {os.getloadavg()[0]:.1f} after the run on {os.cpu_count()} cores"
        + (": other processes were loading the machine, so absolute times are inflated; the ratio to the "
           "baseline measured in the same run is the figure to compare." if load_before > (os.cpu_count() or 1) else ".")
    )
    write_section("bench_llm_calls", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
