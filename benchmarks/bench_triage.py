"""``ragdiag triage`` on the bundled synthetic set (fixtures/triage-synthetic: 30 queries per injected
fault, 9 faults, 30 controls) against the fault-model test server (tests/servers/fault_server.py; its
replies are test-server output, not an LLM's).

Measures: the confusion matrix of injected fault × primary cause (target: primary = injected for
≥ 95% of the faulty queries), the mean paid calls per triaged query with the default interventions
(target ≤ 8; the tree stops once the cause is known), the same with ``--exhaustive``, and wall time
cold (empty cache) and warm (the same run again: nothing is paid).

Run: ``.venv/bin/python benchmarks/bench_triage.py`` (rewrites the ``triage`` section of BENCHMARKS.md).
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

from benchmarks._report import write_section  # noqa: E402
from ragdiag.cli import app  # noqa: E402
from tests.servers.fault_server import FaultServer, load_model  # noqa: E402

FIXTURE = ROOT / "fixtures" / "triage-synthetic"
CAUSES = ("reference", "qrels-gap", "parametric", "generator", "retrieval-miss", "ranking", "position",
          "distractors", "context-size")
WORKERS = 8


FIRST_NINE = ("--max-queries", "300")  # the first nine faults and the controls (q001–q300)


def run_triage(server: FaultServer, out: Path, cache: Path, *extra: str) -> tuple[dict, list[dict], float]:
    """One ``ragdiag triage`` of the synthetic set with its reference answers: (triage.json, per-query rows,
    seconds)."""
    args = ["triage", "--corpus", str(FIXTURE), "--answers", str(FIXTURE / "answers.jsonl"), "--model", "test-model",
            "--base-url", server.base_url, "--out-dir", str(out), "--cache-dir", str(cache), "--workers", str(WORKERS),
            "--no-progress", *extra]
    start = time.perf_counter()
    res = CliRunner().invoke(app, args)
    seconds = time.perf_counter() - start
    if res.exit_code != 0:
        raise SystemExit(f"triage failed: {res.output}")
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    return json.loads((out / "triage.json").read_text()), rows, seconds


def confusion(rows: list[dict], faults: dict[str, str]) -> collections.Counter:
    return collections.Counter((faults[r["id"]], r["cause"]) for r in rows if r["triaged"])


def matrix_markdown(counts: collections.Counter) -> str:
    found = [*CAUSES, "unexplained"]
    lines = ["| injected \\ primary | " + " | ".join(found) + " | correct |",
             "|---|" + "---:|" * (len(found) + 1)]
    for cause in CAUSES:
        n = sum(v for (f, _), v in counts.items() if f == cause)
        cells = [str(counts[(cause, c)]) if counts[(cause, c)] else "·" for c in found]
        lines.append(f"| {cause} | " + " | ".join(cells) + f" | {counts[(cause, cause)] / n:.0%} |")
    return "\n".join(lines)


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "test")
    faults = {r["query_id"]: r["fault"] for r in map(json.loads, (FIXTURE / "faults.jsonl").read_text().splitlines())}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, FaultServer(load_model(FIXTURE / "model.json")) as server:
        root = Path(tmp)
        result, rows, cold_s = run_triage(server, root / "cold", root / "cache", *FIRST_NINE)
        requests = server.requests
        warm, _, warm_s = run_triage(server, root / "warm", root / "cache", *FIRST_NINE)
        warm_requests = server.requests - requests
        exhaustive, ex_rows, ex_s = run_triage(server, root / "exhaustive", root / "cache-ex", *FIRST_NINE, "--exhaustive")
    counts = confusion(rows, faults)
    faulty = sum(v for (f, _), v in counts.items() if f in CAUSES)
    correct = sum(counts[(c, c)] for c in CAUSES)
    per_query = result["calls"]["paid_per_triaged_query"]
    per_cause = collections.defaultdict(list)
    for row in rows:
        if row["triaged"]:
            per_cause[faults[row["id"]]].append(row["calls"])
    ex_agree = sum(a["cause"] == b["cause"] for a, b in zip(rows, ex_rows) if a["triaged"])
    text = f"""## ragdiag triage: attribution on the synthetic fault set (`benchmarks/bench_triage.py`)

{len(rows)} queries of `fixtures/triage-synthetic` (30 per injected fault, 30 controls), BM25, K = 5, `--answers`,
default interventions; the fault-model test server (`tests/servers/fault_server.py`, not an LLM) with {WORKERS}
workers. 1-minute load average {load:.1f} at the start.

Confusion matrix, injected fault × primary cause (controls: {sum(1 for r in rows if faults[r['id']] == 'ok' and not r['triaged'])} of 30 pass the baseline and are not triaged):

{matrix_markdown(counts)}

Primary cause = injected fault for **{correct}/{faulty} = {correct / faulty:.1%}** of the faulty queries (target ≥ 95%).

Paid calls per triaged query (default interventions, the tree stops once the cause is known): **{per_query:.2f}**
(target ≤ 8); by fault: {', '.join(f'{c} {sum(v) / len(v):.1f}' for c, v in sorted(per_cause.items(), key=lambda kv: CAUSES.index(kv[0])))}.
Identical judge requests (same question, answer and reference) are asked once, so a variant whose answer repeats an
earlier one costs one call, not two. Cost computed before any call (worst case, every intervention on every query):
{result['cost']['worst_case_calls']} calls; paid: {result['calls']['paid']}.

| run | wall s | requests at the server | paid calls per triaged query |
|---|---:|---:|---:|
| cold | {cold_s:.1f} | {requests} | {per_query:.2f} |
| warm (same run again, cache) | {warm_s:.1f} | {warm_requests} | {warm['calls']['paid_per_triaged_query']:.2f} |
| `--exhaustive` (own cache) | {ex_s:.1f} | {exhaustive['calls']['paid']} | {exhaustive['calls']['paid_per_triaged_query']:.2f} |

`--exhaustive` keeps the primary cause of {ex_agree}/{len([r for r in rows if r['triaged']])} triaged queries and fills `also`.
"""
    write_section("triage", text)
    print(text)


if __name__ == "__main__":
    main()
