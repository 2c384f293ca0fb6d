"""Build ``fixtures/ragchecker-meta/`` from the RAGChecker meta-evaluation (amazon-science/RAGChecker,
Apache-2.0, ``data/meta_evaluation/`` at commit 6091f08c00e676e87a970f2aeb4a23a484746348).

Usage: ``python -m tools.build_ragchecker_meta --source DIR [--out fixtures/ragchecker-meta]`` where DIR
holds ``human_labeled_data.json`` (280 pairs of RAG answers to one question, each pair labelled by two
annotators: 560 records) and ``baseline_ragchecker.json`` (RAGChecker's automatic scores of each answer).

One CSV row per pair, in ``instance_id`` order: the question's dataset and id, the two RAG systems,
each annotator's preference of answer 2 over answer 1 (``correctness``, ``completeness``, ``overall``,
each −2 … 2, in the order the annotators' records appear) and RAGChecker's scores of both answers
(``correctness_label`` = claim precision, ``completeness_label`` = claim recall, ``overall_label`` = F1,
each in [0, 1]). No text of the questions or answers is copied. Deterministic: same input, same bytes.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

LABELS = ("correctness", "completeness", "overall")
COLUMNS = ("instance_id", "dataset", "query_id", "system1", "system2",
           *(f"human{a}_{label}" for a in (1, 2) for label in LABELS),
           *(f"ragchecker{s}_{label}" for s in (1, 2) for label in LABELS))


def build_rows(human: list[dict], scores: list[dict]) -> list[list[object]]:
    """The fixture's rows: two annotator records and one score record per ``instance_id``."""
    annotators: dict[int, list[dict]] = {}
    for record in human:
        annotators.setdefault(int(record["instance_id"]), []).append(record)
    by_id = {int(record["instance_id"]): record for record in scores}
    if set(annotators) != set(by_id) or any(len(v) != 2 for v in annotators.values()):
        raise SystemExit("expected two human records and one RAGChecker record per instance_id")
    rows = []
    for instance in sorted(by_id):
        first, second = annotators[instance]
        score = by_id[instance]
        rows.append([instance, score["dataset"], score["query_id"], score["model1"]["model_name"],
                     score["model2"]["model_name"],
                     *(int(a[f"{label}_label"]) for a in (first, second) for label in LABELS),
                     *(_score(score[side]["ragchecker"][f"{label}_label"]) for side in ("model1", "model2")
                       for label in LABELS)])
    return rows


def _score(value: object) -> str:
    """A score in [0, 1] to 6 decimals, or empty when RAGChecker gave none (NaN)."""
    number = float(value)  # type: ignore[arg-type]
    return "" if number != number else f"{number:.6f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="folder with the two JSON files")
    parser.add_argument("--out", type=Path, default=Path("fixtures/ragchecker-meta"))
    args = parser.parse_args(argv)
    human = json.loads((args.source / "human_labeled_data.json").read_text(encoding="utf-8"))
    scores = json.loads((args.source / "baseline_ragchecker.json").read_text(encoding="utf-8"))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(build_rows(human, scores))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pairs.csv").write_text(text.getvalue(), encoding="utf-8")
    print(f"wrote {args.out / 'pairs.csv'} ({len(scores)} pairs)")


if __name__ == "__main__":
    main()
