"""``ragdiag triage`` with neither qrels nor reference answers (the reference-free path: grading without a
reference, the sufficient-context rater) on the bundled synthetic set against the fault-model test server
(tests/servers/fault_server.py; its generator, rater and judge replies are test-server output, not an LLM's).

Measures: the confusion matrix of injected fault × primary cause against the reference-free truth
(:data:`TRUTH`, see tests/triage/test_triage_reference_free.py: target ≥ 90% of the faulty queries, every
control passes), the mean paid calls per triaged query (target ≤ 10), and the rater's agreement with the fault
model's truth (a passage of the rated context holds the code) per injected fault, on the top K and on the pool.

Run: ``.venv/bin/python benchmarks/bench_triage_reference_free.py`` (rewrites the ``triage-reference-free``
section of BENCHMARKS.md).
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
from tests.triage.test_triage_reference_free import TRUTH  # noqa: E402

FIXTURE = ROOT / "fixtures" / "triage-synthetic"
FAULTS = ("reference", "qrels-gap", "parametric", "generator", "retrieval-miss", "ranking", "position",
          "distractors", "context-size", "ok")
FOUND = ("passed", "retrieval-miss", "ranking", "position", "distractors", "context-size", "generator",
         "unsupported", "over-abstains", "unexplained")
WORKERS = 8


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def agreement(rows: list[dict], faults: dict[str, str]) -> dict[str, tuple[int, int, int, int]]:
    """Per fault: (top-K ratings agreeing, top-K rated, pool ratings agreeing, pool rated)."""
    texts = {r["_id"]: r["text"] for r in _jsonl(FIXTURE / "corpus.jsonl")}
    questions = {r["_id"]: r["text"] for r in _jsonl(FIXTURE / "queries.jsonl")}
    model = load_model(FIXTURE / "model.json")
    out: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    for row in rows:
        rating = row.get("sufficient_context")
        if rating is None:
            continue
        code, tally = model[questions[row["id"]]]["code"], out[faults[row["id"]]]
        holds = any(code in texts[d] for d in row["contexts"]["baseline"])
        tally[0] += rating["top_k"]["sufficient"] == holds
        tally[1] += 1
        if rating["pool"] is not None:
            in_pool = any(code in t for d, t in texts.items() if d.startswith(f"{row['id']}-d"))
            tally[2] += rating["pool"]["sufficient"] == in_pool
            tally[3] += 1
    return {f: (a, b, c, d) for f, (a, b, c, d) in out.items()}


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "test")
    faults = {r["query_id"]: r["fault"] for r in _jsonl(FIXTURE / "faults.jsonl")}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, FaultServer(load_model(FIXTURE / "model.json")) as server:
        root = Path(tmp)
        corpus = root / "unjudged"  # corpus and queries only: no qrels, no reference answers
        corpus.mkdir()
        for name in ("corpus.jsonl", "queries.jsonl"):
            (corpus / name).write_text((FIXTURE / name).read_text())
        start = time.perf_counter()
        res = CliRunner().invoke(app, ["triage", "--corpus", str(corpus), "--model", "test-model", "--base-url",
                                       server.base_url, "--out-dir", str(root / "out"), "--cache-dir",
                                       str(root / "cache"), "--workers", str(WORKERS), "--no-progress",
                                       "--max-queries", "300"])  # the nine original faults and the controls
        seconds = time.perf_counter() - start
        if res.exit_code != 0:
            raise SystemExit(f"triage failed: {res.output}")
        result = json.loads((root / "out" / "triage.json").read_text())
        rows = _jsonl(root / "out" / "per_query.jsonl")
    counts = collections.Counter((faults[r["id"]], r["cause"] if r["triaged"] else "passed") for r in rows)
    lines = ["| injected \\ primary | " + " | ".join(FOUND) + " | truth | correct |", "|---|" + "---:|" * len(FOUND) + "---|---:|"]
    for fault in FAULTS:
        n = sum(v for (f, _), v in counts.items() if f == fault)
        cells = [str(counts[(fault, c)]) if counts[(fault, c)] else "·" for c in FOUND]
        lines.append(f"| {fault} | " + " | ".join(cells) + f" | {TRUTH[fault]} | {counts[(fault, TRUTH[fault])] / n:.0%} |")
    faulty = [r for r in rows if TRUTH[faults[r["id"]]] != "passed"]
    correct = sum(r["cause"] == TRUTH[faults[r["id"]]] for r in faulty)
    agree = agreement(rows, faults)
    agree_lines = ["| injected fault | top K: agree / rated | pool: agree / rated |", "|---|---:|---:|"]
    for fault in FAULTS:
        if fault in agree:
            a, b, c, d = agree[fault]
            agree_lines.append(f"| {fault} | {a}/{b} | {c}/{d} |" if d else f"| {fault} | {a}/{b} | · |")
    calls = result["calls"]
    text = f"""## ragdiag triage without qrels or references (`benchmarks/bench_triage_reference_free.py`)

{len(rows)} queries of `fixtures/triage-synthetic` with its qrels and reference answers left out (corpus and
queries only), BM25, K = 5, default interventions: answers graded without a reference, causes from the
sufficient-context rater (top K, then the pool of {result['meta']['depth']} passages). The fault-model test server
(`tests/servers/fault_server.py`, not an LLM: its rater and judge follow its fault model) with {WORKERS} workers;
1-minute load average {load:.1f} at the start; {seconds:.1f} s.

The truth without references: a degenerate reference is no fault (those queries pass), the unjudged answer at rank 8
(`qrels-gap`) is `ranking`, and the `generator` and `parametric` models decline with the answer in the top K
(`over-abstains`).

{chr(10).join(lines)}

Primary cause = truth for **{correct}/{len(faulty)} = {correct / len(faulty):.1%}** of the faulty queries (target ≥ 90%).
Paid calls per triaged query: **{calls['paid_per_triaged_query']:.2f}** (target ≤ 10; {calls['paid']} paid for
{calls['triaged_queries']} triaged queries; worst case computed before any call: {result['cost']['worst_case_calls']}).

The rater's agreement with the fault model's truth (the rated passages hold the code), per injected fault. The
test server's rater reads the same truth, so this checks the plumbing (passage numbering, the pool, the needed
passages), not a model's rating:

{chr(10).join(agree_lines)}
"""
    write_section("triage-reference-free", text)
    print(text)


if __name__ == "__main__":
    main()
