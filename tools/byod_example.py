"""Write ``fixtures/byod/ragas_example.jsonl``: the four queries of ``fixtures/llm-cache/`` as a
Ragas-style dataset (the README's ``ragdiag import ragas`` example).

question = the query; contexts = the top 5 of its L6 ranking (Nc 30, Np 5); reference_contexts =
its 5 positives; response / reference = the top-5 and ideal answers recorded in
``fixtures/llm-cache/graded.json`` — test-server output, not an LLM's (see that folder's README).
Run: ``.venv/bin/python tools/byod_example.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "fixtures" / "llm-cache"


def main() -> None:
    texts = {t["id"]: t for t in json.loads((CACHE / "samples_texts.json").read_text())}
    ranked = [r for r in json.loads((CACHE / "samples_ranked.json").read_text()) if (r["Nc"], r["Np"]) == (30, 5)]
    graded = {(g["id"], g["Nc"], g["Np"], g["K"]): g for g in json.loads((CACHE / "graded.json").read_text())}
    rows = []
    for r in ranked:
        sample = texts[r["id"]]
        top = [sample["p"][i] if i < r["Np"] else sample["n"][i - r["Np"]] for i in r["rank"][:5]]
        answers = graded[(r["id"], 30, 5, 5)]
        rows.append({"id": r["id"], "user_input": sample["q"], "retrieved_contexts": top,
                     "response": answers["answer_topK"], "reference": answers["answer_ideal"],
                     "reference_contexts": sample["p"][: r["Np"]]})
    out = ROOT / "fixtures" / "byod" / "ragas_example.jsonl"
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {out} ({len(rows)} records)")


if __name__ == "__main__":
    main()
