"""The question-language detector on real queries: French Service-Public questions, English SciFact
claims and MS MARCO queries (skipped when /work/shared/data is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdiag.llm.language import choose_lang, detect

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
SETS = {"spf-qr-fr": "fr", "scifact": "en", "msmarco-passage-sample": "en"}


def _queries(name: str) -> list[str]:
    path = DATA / name / "queries.jsonl"
    if not path.is_file():
        pytest.skip(f"real queries absent: {path}")
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize(("name", "minimum"), [("spf-qr-fr", 1.0), ("scifact", 1.0), ("msmarco-passage-sample", 0.995)])
def test_accuracy_on_real_queries(name, minimum):
    queries = _queries(name)
    right = sum(detect(q).lang == SETS[name] for q in queries)
    # measured: spf-qr-fr 535/535, scifact 1109/1109, msmarco 539/540 ("who sings c'est la vie music" → fr)
    assert right / len(queries) >= minimum, (name, right, len(queries))


def test_reasons_and_settings():
    assert detect("Un hôtel doit-il remettre une facture à ses clients ?").lang == "fr"
    assert detect("Does a hotel have to give its clients an invoice?").lang == "en"
    empty = detect("COVID-19 2020")
    assert empty.lang == "en" and "English by default" in empty.reason
    assert "French score" in detect("Qu'est-ce que la médiation ?").reason
    assert choose_lang("fr", "What is it?") == "fr" and choose_lang("en", "Qu'est-ce ?") == "en"
