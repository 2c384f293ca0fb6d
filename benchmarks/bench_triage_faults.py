"""``ragdiag triage`` beyond its first fault model: the fifteen fault types of ``fixtures/triage-synthetic``
(the nine first ones, and six more: last-passage bias, long context, split answer, conflicting relevant
passage, a generator right half the time, a judge that misgrades 40% of right answers) against the
fault-model test server (tests/servers/fault_server.py; its replies are test-server output, not an LLM's).

Measures, with ``--answers`` (references), per injected type: the share of its triaged queries whose
primary cause is the type's truth (``faults.jsonl``: the fault, or its ``cause`` for the later six;
target ≥ 90% for the later six, ≥ 95% for the first nine), the confusion matrix (type × primary cause),
the mean paid calls per triaged query, and the same run with ``--repeats 1`` (no repeats: the cost of
repeats and what they buy).

Run: ``.venv/bin/python benchmarks/bench_triage_faults.py [--repeats 3]`` (rewrites the ``triage-faults``
section of BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from benchmarks._report import write_section  # noqa: E402
from benchmarks.bench_triage import run_triage  # noqa: E402
from ragdiag.triage.tree import CAUSES  # noqa: E402
from tests.servers.fault_server import FaultServer, load_model  # noqa: E402
from tools.make_triage_synthetic import BEYOND  # noqa: E402
from tools.make_triage_synthetic import CAUSES as FIRST  # noqa: E402

FIXTURE = ROOT / "fixtures" / "triage-synthetic"
WORKERS = 8


def truths() -> dict[str, tuple[str, str]]:
    """query id → (injected type, the cause it should get)."""
    rows = map(json.loads, (FIXTURE / "faults.jsonl").read_text().splitlines())
    return {r["query_id"]: (r["fault"], r.get("cause", r["fault"])) for r in rows}


def triage(server: FaultServer, out: Path, cache: Path, repeats: int) -> tuple[dict, list[dict], float]:
    return run_triage(server, out, cache, "--repeats", str(repeats))


def per_type(rows: list[dict], truth: dict[str, tuple[str, str]]) -> dict[str, dict]:
    """type → triaged, correct, mean paid calls, and the primary causes it got."""
    out: dict[str, dict] = {}
    for row in rows:
        kind, cause = truth[row["id"]]
        entry = out.setdefault(kind, {"truth": cause, "queries": 0, "triaged": 0, "correct": 0, "calls": 0,
                                      "got": collections.Counter()})
        entry["queries"] += 1
        if row["triaged"]:
            entry["triaged"] += 1
            entry["correct"] += row["cause"] == cause
            entry["calls"] += row["calls"]
            entry["got"][row["cause"]] += 1
    return out


def matrix(table: dict[str, dict]) -> str:
    found = [c for c in CAUSES if any(t["got"][c] for t in table.values())]
    lines = ["| injected (truth) \\ primary | " + " | ".join(found) + " | triaged | correct | calls/query |",
             "|---|" + "---:|" * (len(found) + 3)]
    for kind in [*FIRST, *BEYOND]:
        t = table[kind]
        cells = [str(t["got"][c]) if t["got"][c] else "·" for c in found]
        share = f"{t['correct'] / t['triaged']:.0%}" if t["triaged"] else "–"
        calls = f"{t['calls'] / t['triaged']:.1f}" if t["triaged"] else "–"
        name = kind if kind == t["truth"] else f"{kind} ({t['truth']})"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {t['triaged']}/{t['queries']} | {share} | {calls} |")
    return "\n".join(lines)


def accuracy(table: dict[str, dict], kinds) -> tuple[int, int]:
    return sum(table[k]["correct"] for k in kinds), sum(table[k]["triaged"] for k in kinds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "test")
    truth = truths()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, FaultServer(load_model(FIXTURE / "model.json")) as server:
        root = Path(tmp)
        result, rows, seconds = triage(server, root / "repeats", root / "cache", args.repeats)
        once, once_rows, once_s = triage(server, root / "once", root / "cache-once", 1)
    table, table1 = per_type(rows, truth), per_type(once_rows, truth)
    worst = min(table[k]["correct"] / table[k]["triaged"] for k in BEYOND if table[k]["triaged"])
    first_ok, first_n = accuracy(table, FIRST)
    beyond_ok, beyond_n = accuracy(table, BEYOND)
    per_query = result["calls"]["paid_per_triaged_query"]
    once_query = once["calls"]["paid_per_triaged_query"]
    once_line = ", ".join(f"{k} {table1[k]['correct']}/{table1[k]['triaged']}" for k in BEYOND)
    text = f"""## ragdiag triage beyond its first fault model (`benchmarks/bench_triage_faults.py`)

{len(rows)} queries of `fixtures/triage-synthetic` (30 per injected type, 15 types, 30 controls), BM25, K = 5,
`--answers`, default interventions, `--repeats {args.repeats}`; the fault-model test server
(`tests/servers/fault_server.py`, not an LLM; per-request randomness seeded by the request and its seed)
with {WORKERS} workers. 1-minute load average {load:.1f} at the start.

Confusion matrix, injected type (the cause it should get) × primary cause, over the triaged queries
(a query whose baseline passes is not triaged: the flaky generator and judge pass on some queries):

{matrix(table)}

Primary cause = truth: first nine types **{first_ok}/{first_n} = {first_ok / first_n:.1%}** (target ≥ 95%),
six later types **{beyond_ok}/{beyond_n} = {beyond_ok / beyond_n:.1%}**, the worst of them {worst:.0%} (target ≥ 90% each).

Paid calls per triaged query: **{per_query:.2f}** with `--repeats {args.repeats}` ({result['calls']['paid']} paid,
{seconds:.1f} s), **{once_query:.2f}** with `--repeats 1` ({once['calls']['paid']} paid, {once_s:.1f} s): the
repeats cost {per_query - once_query:.2f} calls per triaged query. Without repeats the later six get: {once_line}
(correct/triaged). Worst case computed before any call: {result['cost']['worst_case_calls']} calls
(`--repeats {args.repeats}`), {once['cost']['worst_case_calls']} (`--repeats 1`).
"""
    write_section("triage-faults", text)
    print(text)


if __name__ == "__main__":
    main()
