"""Write ``fixtures/testset-certify/``: simulated qrels and runs for ``testset certify``'s tests and
documentation (the numbers are simulated, not from any retriever or judge).

40 queries over 80 passages p0…p79. ``human.tsv``: 2 relevant passages per query (grade 1).
``llm.tsv``: the human labels with 40% of the relevant pairs dropped and one extra passage judged
relevant per query (a noisy cheap label set). ``run-1`` … ``run-6``: each places every relevant
passage at a rank drawn from an exponential law whose scale grows with the run number (``SCALES``:
run-1 is the best, run-3 and run-4 nearly tie), other passages in seeded random order, 20 per query. Seed 0; rerunning gives the same bytes.

Run from the clone: ``python -m tests.testset.make_certify_fixture``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "testset-certify"
QUERIES, PASSAGES, DEPTH = 40, 80, 20
SCALES = (1.0, 2.0, 3.0, 3.3, 5.0, 7.0)  # run-3 and run-4 nearly tie


def main() -> None:
    rng = np.random.default_rng(0)
    OUT.mkdir(parents=True, exist_ok=True)
    relevant = {f"q{q}": [f"p{p}" for p in rng.choice(PASSAGES, size=2, replace=False)] for q in range(QUERIES)}
    human = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, docs in relevant.items() for d in docs]
    llm = ["query-id\tcorpus-id\tscore"]
    for q, docs in relevant.items():
        llm += [f"{q}\t{d}\t{0 if rng.random() < 0.4 else 1}" for d in docs]
        extra = next(f"p{p}" for p in rng.permutation(PASSAGES) if f"p{p}" not in docs)
        llm.append(f"{q}\t{extra}\t1")
    (OUT / "human.tsv").write_text("\n".join(human) + "\n", encoding="utf-8")
    (OUT / "llm.tsv").write_text("\n".join(llm) + "\n", encoding="utf-8")
    for run, scale in enumerate(SCALES, start=1):
        lines = []
        for q, docs in relevant.items():
            others = [f"p{p}" for p in rng.permutation(PASSAGES) if f"p{p}" not in docs][:DEPTH]
            for d in docs:
                others.insert(min(int(rng.exponential(scale)), len(others)), d)
            lines += [f"{q} Q0 {d} {r + 1} {DEPTH + 2 - r} run-{run}" for r, d in enumerate(others[:DEPTH])]
        (OUT / f"run-{run}.trec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
