"""Build the bundled example sets ``fixtures/en-sample/`` and ``fixtures/fr-sample/`` (BEIR layout
plus ``answers.jsonl``, the reference answers ``sweep --answers`` reads).

- en-sample: from the bundled retrieval-response sample (``fixtures/retrieval-response-sample``,
  MIT, written for ragdiag): two queries per topic (entities 0 and 1 of each of the 20 topics), the
  distinct texts of their 5 positives and of their first ``EN_NEGATIVES`` negatives (the sample's
  shuffled order: near misses, same-topic and other-topic passages) as the corpus, a query's 5
  positives as its qrels, and the first answer template of its topic filled with the entity's facts as its answer.
- fr-sample: a subset of SPF-QR-fr (Service-Public.fr pages, Licence Ouverte 2.0): the questions
  whose SQuAD answer span (``original/spf_qr_test.json``) was written for the same wording as
  ``queries.jsonl``, their pages, and ``N_FR_DISTRACTORS`` other pages of at most
  ``FR_MAX_CHARS`` characters drawn with ``numpy.random.default_rng(SEED)``; answers = the spans.

Run by a developer who has the SPF-QR-fr folder::

    python -m tools.build_example_fixtures --spf-qr-fr DIR [--out fixtures]

The output is deterministic (same inputs → byte-identical files).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from tools.sample_passages import load_topics

SEED = 0
EN_ENTITIES_PER_TOPIC = 2
EN_NEGATIVES = 5
N_FR_DISTRACTORS = 60
FR_MAX_CHARS = 6000
ROOT = Path(__file__).resolve().parent.parent


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _qrels(pairs: list[tuple[str, str]]) -> str:
    return "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in pairs)


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_en(sample_dir: Path) -> dict[str, str]:
    """corpus, queries, qrels and answers of en-sample from the retrieval-response sample."""
    texts = json.loads((sample_dir / "samples_texts.json").read_text(encoding="utf-8"))
    topics = load_topics(sample_dir / "source" / "topics.json")
    per_topic = len(topics[0]["entities"])
    doc_id: dict[str, str] = {}
    queries, qrels, answers = [], [], []
    for index, sample in enumerate(texts):
        topic, entity = divmod(index, per_topic)
        if entity >= EN_ENTITIES_PER_TOPIC:
            continue
        for passage in sample["p"] + sample["n"][:EN_NEGATIVES]:
            doc_id.setdefault(passage, f"d{len(doc_id):04d}")
        queries.append({"_id": sample["id"], "text": sample["q"]})
        qrels += [(sample["id"], doc_id[p]) for p in sample["p"]]
        facts = topics[topic]["entities"][entity]
        if facts["q"] != sample["q"]:
            raise SystemExit(f"query {sample['id']}: topics.json order does not match samples_texts.json")
        answers.append({"query_id": sample["id"], "answer": topics[topic]["answers"][0].format(**facts)})
    corpus = [{"_id": i, "title": "", "text": t} for t, i in doc_id.items()]
    return {"corpus.jsonl": _jsonl(corpus), "queries.jsonl": _jsonl(queries),
            "qrels/test.tsv": _qrels(qrels), "answers.jsonl": _jsonl(answers)}


def build_fr(spf: Path) -> dict[str, str]:
    """corpus, queries, qrels and answers of fr-sample from an SPF-QR-fr folder."""
    corpus = [json.loads(line) for line in (spf / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(line) for line in (spf / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    pairs = [line.split("\t")[:2] for line in (spf / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    query_of = {doc: query for query, doc in pairs}
    text_of = {q["_id"]: q["text"] for q in queries}
    squad = json.loads((spf / "original" / "spf_qr_test.json").read_text(encoding="utf-8"))
    answers: dict[str, list[str]] = {}
    for page in squad["data"]:
        for qa in (qa for paragraph in page["paragraphs"] for qa in paragraph["qas"]):
            query = query_of[page["title"]]
            if text_of[query].strip() == qa["question"].strip():
                answers[query] = list(dict.fromkeys(a["text"] for a in qa["answers"]))
    kept_queries = [q for q in queries if q["_id"] in answers]
    relevant = {doc for query, doc in pairs if query in answers}
    others = [d["_id"] for d in corpus if d["_id"] not in relevant and len(d["text"]) <= FR_MAX_CHARS]
    rng = np.random.default_rng(SEED)
    distractors = {others[i] for i in rng.choice(len(others), size=N_FR_DISTRACTORS, replace=False)}
    kept_docs = [d for d in corpus if d["_id"] in relevant or d["_id"] in distractors]
    return {"corpus.jsonl": _jsonl(kept_docs), "queries.jsonl": _jsonl(kept_queries),
            "qrels/test.tsv": _qrels([(q, d) for q, d in pairs if q in answers]),
            "answers.jsonl": _jsonl([{"query_id": q["_id"], "answers": answers[q["_id"]]} for q in kept_queries])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spf-qr-fr", type=Path, required=True, help="the SPF-QR-fr folder (BEIR layout + original/)")
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures")
    args = parser.parse_args(argv)
    _write(args.out / "en-sample", build_en(ROOT / "fixtures" / "retrieval-response-sample"))
    _write(args.out / "fr-sample", build_fr(args.spf_qr_fr))


if __name__ == "__main__":
    main()
