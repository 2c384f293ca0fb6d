"""Write ``fixtures/triage-synthetic/``: a BEIR set with one injected fault of known type per query, for
``ragdiag triage`` against the fault model of ``tests/servers/fault_server.FaultServer``.

Deterministic (no randomness): query i asks "What is the code of tNNN?"; its passages carry the topic
token tNNN a number of times that fixes their BM25 order (all passages have the same length, so the
score grows with the token's frequency), and the answer "Its key is <code>" where they hold it. The
model file (``model.json``) tells the fault server, per question, the code, a trap code, whether the
model knows the answer closed-book, whether it fails with any references, the last position at which
it still uses the answer, and how many references it can take; the six later types (:data:`BEYOND`,
after the controls) add: reads only the last passage, fails over 2,000 characters, needs two passages
(ranks 1 and 7), a relevant passage that contradicts the other, a generator right half the time, a judge
that misgrades 40% of right answers (the last two per request, seeded: repeats expose them).
``faults.jsonl`` names the fault (and, for the later types, the cause it should get).

Run: ``python -m tools.make_triage_synthetic [--per-cause 30] [--out fixtures/triage-synthetic]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CAUSES = ("reference", "qrels-gap", "parametric", "generator", "retrieval-miss", "ranking", "position",
          "distractors", "context-size")
# The six types beyond the tree's first fault model (issue 41), after the controls (the first ids stay), and
# the cause each should get: the truth the triage is checked against.
BEYOND = {"last-passage": "position", "long-context": "context-size", "split-answer": "ranking",
          "conflict": "distractors", "flaky-generator": "generator", "flaky-judge": "judge"}
LONG = 100  # words per passage of the long-context queries: five passages hold > 2,000 characters, three fewer
MAX_CHARS = 2000
FILLER = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heath", "iris", "jade", "kelp", "loam", "marsh", "nectar", "opal", "pine", "quartz", "reed", "slate", "thyme", "umber", "vale", "willow", "yarrow", "zinc"]
LENGTH = 24  # words per passage (bm25 tokens: the topic token repeats + 'key' + the code or 'unknown' + filler)
PASSAGES = 10  # passages retrieved per query, BM25 ranks 1..10


def _passage(topic: str, tf: int, tail: str, salt: int, length: int = LENGTH) -> str:
    filler = [FILLER[(salt + j) % len(FILLER)] for j in range(length - tf - 2)]
    return " ".join([topic] * tf) + f" Its key is {tail}. " + " ".join(filler) + "."


def _layout(cause: str) -> dict:
    """Ranks (1-based) of the judged relevant passage (R), an unjudged answer-bearing one (A), a trap (T)."""
    return {"ok": {"R": 1}, "reference": {"R": 1}, "qrels-gap": {"A": 8, "unjudged": True}, "parametric": {"R": 1},
            "generator": {"R": 1}, "retrieval-miss": {"R": None}, "ranking": {"R": 7}, "position": {"R": 4},
            "distractors": {"R": 1, "T": 3}, "context-size": {"A": 1, "R": 8},
            "last-passage": {"R": 1}, "long-context": {"R": 1}, "split-answer": {"R": 1, "S": 7},
            "conflict": {"R": 1, "C": 2}, "flaky-generator": {"R": 1}, "flaky-judge": {"R": 1}}[cause]


def _tail(layout: dict, rank: int, code: str, trap: str) -> str:
    """What the passage at ``rank`` says the key is (split answers: each half names one part)."""
    if "S" in layout and rank in (layout["R"], layout["S"]):
        return f"{code[:-1]} and more" if rank == layout["R"] else f"finished by {code[-1]}"
    if rank in (layout.get("R"), layout.get("A")):
        return code
    return trap if rank in (layout.get("T"), layout.get("C")) else "unknown"


def _knobs(cause: str, code: str, trap: str) -> dict:
    """The fault model's knobs for one question (the six later types add theirs only where they apply)."""
    knobs = {"code": code, "trap": trap, "known": cause == "parametric", "cannot": cause in ("parametric", "generator"),
             "first": 2 if cause == "position" else None, "max_refs": 3 if cause == "context-size" else None}
    extra = {"last-passage": {"reads_last": True}, "long-context": {"max_chars": MAX_CHARS},
             "split-answer": {"parts": [f"Its key is {code[:-1]} and more", f"Its key is finished by {code[-1]}"]},
             "flaky-generator": {"flaky": 0.5}, "flaky-judge": {"misgrade": 0.4}}
    return {**knobs, **extra.get(cause, {})}


def build(per_cause: int, controls: int) -> dict[str, list]:
    corpus, queries, qrels, answers, faults, model = [], [], [], [], [], {}
    plan = [(c, j) for c in CAUSES for j in range(per_cause)] + [("ok", j) for j in range(controls)]
    plan += [(c, j) for c in BEYOND for j in range(per_cause)]
    for i, (cause, _) in enumerate(plan, 1):
        qid, topic = f"q{i:03d}", f"t{i:03d}"
        code, trap = f"ZX{i:03d}Q", f"ZX{i:03d}T"
        question = f"What is the code of {topic}?"
        layout = _layout(cause)
        length = LONG if cause == "long-context" else LENGTH
        for rank in range(1, PASSAGES + 1):
            tail = _tail(layout, rank, code, trap)
            doc = f"{qid}-d{rank:02d}"
            corpus.append({"_id": doc, "title": "", "text": _passage(topic, PASSAGES + 1 - rank, tail, i + rank, length)})
            if rank in (layout.get("R"), layout.get("S"), layout.get("C")):
                qrels.append((qid, doc, 1))
        if cause == "retrieval-miss":  # the relevant passage never names the topic: BM25 cannot find it
            doc = f"{qid}-gold"
            corpus.append({"_id": doc, "title": "", "text": _passage("", 0, code, i).strip()})
            qrels.append((qid, doc, 1))
        queries.append({"_id": qid, "text": question})
        reference = "I don't know." if cause == "reference" else f"The key of {topic} is {code}."
        answers.append({"query_id": qid, "answer": reference})
        faults.append({"query_id": qid, "fault": cause, **({"cause": BEYOND[cause]} if cause in BEYOND else {})})
        model[question] = _knobs(cause, code, trap)
    return {"corpus": corpus, "queries": queries, "qrels": qrels, "answers": answers, "faults": faults, "model": model}


def write(out: Path, per_cause: int, controls: int) -> None:
    data = build(per_cause, controls)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    for name in ("corpus", "queries", "answers", "faults"):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data[name]))
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                            + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in data["qrels"]))
    (out / "model.json").write_text(json.dumps({"about": "fault model of tests/servers/fault_server.py, per question",
                                                "questions": data["model"]}, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cause", type=int, default=30)
    parser.add_argument("--controls", type=int, default=30, help="queries without a fault (the baseline passes)")
    parser.add_argument("--out", type=Path, default=Path("fixtures/triage-synthetic"))
    args = parser.parse_args()
    write(args.out, args.per_cause, args.controls)


if __name__ == "__main__":
    main()
