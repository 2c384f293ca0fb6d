"""Production traces → one record per trace: the question, the ranked documents retrieved, the answer.

Two conventions are read from the spans' attributes (:mod:`ragdiag.data.spans` reads the files):

- **OpenInference** (Arize Phoenix and the ``openinference-instrumentation-*`` packages): a retrieval
  span (``openinference.span.kind = RETRIEVER``, or any ``retrieval.documents.N.document.*``) gives the
  question (``input.value``) and the documents in rank order N (``document.id``, ``document.content``,
  ``document.score``); an LLM span (kind ``LLM``) gives the answer: the last
  ``llm.output_messages.N.message.content``, else ``output.value``; without an LLM span, the root
  span's ``output.value`` (a ``CHAIN`` span wrapping the application).
- **OpenTelemetry GenAI** (``gen_ai.*``): a retrieval span (``gen_ai.operation.name = retrieval`` or
  ``gen_ai.retrieval.documents``) gives the question (``gen_ai.retrieval.query.text``) and the documents
  (``gen_ai.retrieval.documents``: a JSON list of ``{id, score, content}``); a chat span
  (``gen_ai.operation.name`` chat / text_completion / generate_content) gives the answer: the assistant
  text of ``gen_ai.output.messages`` (``parts`` of type text), else ``gen_ai.completion``, else a
  ``gen_ai.choice`` event's ``message.content`` / ``content``.

A trace is kept when it has exactly one retrieval span with at least one document holding text, a
question and an answer; otherwise it is skipped and counted under its reason. A document without an
id is named by its content: ``sha256(text)[:16]``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from ragdiag.data.spans import Span

CHAT_OPERATIONS = ("chat", "text_completion", "generate_content")


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    score: float | None


@dataclass(frozen=True)
class Trace:
    """One kept trace: its id, the question, the documents in retrieval order, the answer."""

    trace_id: str
    question: str
    documents: list[Document]
    answer: str


@dataclass
class Joined:
    """The kept traces (in the file's order) and the skipped ones counted by reason."""

    kept: list[Trace] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    convention: Counter[str] = field(default_factory=Counter)


def _kind(span: Span) -> str:
    return str(span.attributes.get("openinference.span.kind") or "").upper()


def _is_retrieval(span: Span) -> bool:
    attrs = span.attributes
    return (_kind(span) == "RETRIEVER" or attrs.get("gen_ai.operation.name") == "retrieval"
            or "gen_ai.retrieval.documents" in attrs or any(k.startswith("retrieval.documents.") for k in attrs))


def _is_llm(span: Span) -> bool:
    return _kind(span) == "LLM" or span.attributes.get("gen_ai.operation.name") in CHAT_OPERATIONS


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _score(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def _document(doc_id: Any, text: Any, score: Any) -> Document | None:
    if not isinstance(text, str) or not text.strip():
        return None
    name = str(doc_id) if doc_id not in (None, "") else hashlib.sha256(text.encode()).hexdigest()[:16]
    return Document(name, text, _score(score))


def documents(span: Span) -> tuple[list[Document], int]:
    """The span's documents in rank order, and how many had no text (left out)."""
    attrs, found = span.attributes, []
    positions = sorted({int(k.split(".")[2]) for k in attrs
                        if k.startswith("retrieval.documents.") and k.split(".")[2].isdigit()})
    if positions:
        for n in positions:
            base = f"retrieval.documents.{n}.document."
            found.append(_document(attrs.get(base + "id"), attrs.get(base + "content"), attrs.get(base + "score")))
    else:
        listed = _json(attrs.get("gen_ai.retrieval.documents"))
        for item in listed if isinstance(listed, list) else []:
            item = item if isinstance(item, dict) else {}
            found.append(_document(item.get("id"), item.get("content") or item.get("text"), item.get("score")))
    kept = [d for d in found if d is not None]
    return kept, len(found) - len(kept)


def _text_parts(message: Any) -> str | None:
    """The text of one GenAI message (``parts`` of type text, or ``content``)."""
    if not isinstance(message, dict):
        return None
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [str(p["content"]) for p in parts
                 if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)]
        return "".join(texts) if texts else None
    content = message.get("content")
    return content if isinstance(content, str) else None


def answer_of(span: Span) -> str | None:
    """The answer an LLM span holds (conventions in the module docstring)."""
    attrs = span.attributes
    outputs = sorted({int(k.split(".")[2]) for k in attrs if k.startswith("llm.output_messages.")
                      and k.endswith(".message.content") and k.split(".")[2].isdigit()})
    if outputs:
        return str(attrs[f"llm.output_messages.{outputs[-1]}.message.content"])
    messages = _json(attrs.get("gen_ai.output.messages"))
    if isinstance(messages, list):
        texts = [_text_parts(m) for m in messages if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
        texts = [t for t in texts if t]
        if texts:
            return texts[-1]
    for key in ("gen_ai.completion", "output.value"):
        if isinstance(attrs.get(key), str) and attrs[key].strip():
            if key == "output.value" and str(attrs.get("output.mime_type", "")).endswith("json"):
                parsed = _json(attrs[key])  # an OpenAI response object: its first choice's message
                choices = parsed.get("choices") if isinstance(parsed, dict) else None
                if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                    return _text_parts(choices[0].get("message"))
                continue
            return str(attrs[key])
    for key in ("event:gen_ai.choice.message.content", "event:gen_ai.choice.content"):
        if isinstance(attrs.get(key), str):
            return str(attrs[key])
    return None


def _question(span: Span) -> str | None:
    for key in ("input.value", "gen_ai.retrieval.query.text"):
        value = span.attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def join(spans: list[Span]) -> Joined:
    """One record per trace (the rules of the module docstring), in the order traces first appear."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    joined = Joined()
    for trace_id, members in by_trace.items():
        members = sorted(members, key=lambda s: s.start)
        retrievals = [s for s in members if _is_retrieval(s)]
        if not retrievals:
            joined.skipped["no retrieval span"] += 1
            continue
        if len(retrievals) > 1:
            joined.skipped["several retrieval spans (one expected)"] += 1
            continue
        retrieval = retrievals[0]
        docs, _ = documents(retrieval)
        if not docs:
            joined.skipped["no retrieved document with text (export document content)"] += 1
            continue
        question = _question(retrieval)
        if question is None:
            joined.skipped["no question (input.value / gen_ai.retrieval.query.text)"] += 1
            continue
        llms = [s for s in members if _is_llm(s)]
        answers = [a for a in (answer_of(s) for s in llms) if a]
        if not answers:
            roots = [s for s in members if s.parent_id is None and s is not retrieval]
            root = answer_of(roots[0]) if roots and not llms else None
            if root is None:
                joined.skipped["no answer (no LLM span with output)" if not llms else "LLM span without output text"] += 1
                continue
            answers = [root]
        ids = [d.id for d in docs]
        if len(set(ids)) != len(ids):
            joined.skipped["a document retrieved twice in one ranking"] += 1
            continue
        joined.convention["gen_ai" if any(k.startswith("gen_ai.") for k in retrieval.attributes) else "openinference"] += 1
        joined.kept.append(Trace(trace_id, question, docs, answers[-1]))
    return joined


@dataclass
class TraceFiles:
    """What ``import traces`` writes: questions (BEIR queries), the documents seen (BEIR corpus), the
    production run, and — for the traces with a relevant document in the qrels — texts, ranked and
    answers rows (ideal rows where a reference answer is known). ``unlabelled`` counts the kept traces
    left out of texts/ranked/answers for want of a relevant document."""

    queries: list[dict[str, Any]]
    corpus: list[dict[str, Any]]
    run: dict[str, list[tuple[str, float]]]
    texts: list[dict[str, Any]] = field(default_factory=list)
    ranked: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    unlabelled: int = 0
    references: int = 0


def question_id(subset: str, trace: Trace) -> str:
    """``SUBSET-TRACEID``: ragdiag reads the subset from the id's prefix."""
    return f"{subset}-{trace.trace_id}"


def to_files(traces: list[Trace], subset: str, system: str, qrels: dict[str, dict[str, int]] | None = None,
             references: dict[str, str] | None = None) -> TraceFiles:
    """Kept traces → ragdiag's files. With ``qrels`` (question id → {document id: relevance}), a trace
    with at least one relevant document whose text is known (retrieved by any trace) gets a texts row
    ``{id, q, p, n}`` (p: the relevant documents, n: the others it retrieved), a ranked row and a top-K
    answers row (K = the number retrieved, rank = the retrieval order); ``references`` (question id →
    reference answer) gives its ``ideal`` row, what ``grade`` compares the answer with."""
    corpus: dict[str, str] = {}
    for trace in traces:
        for doc in trace.documents:
            corpus.setdefault(doc.id, doc.text)
    files = TraceFiles(
        queries=[{"_id": question_id(subset, t), "text": t.question} for t in traces],
        corpus=[{"_id": doc_id, "text": text} for doc_id, text in corpus.items()],
        run={question_id(subset, t): [(d.id, d.score if d.score is not None else 1 / rank)
                                      for rank, d in enumerate(t.documents, start=1)] for t in traces})
    if qrels is None:
        return files
    ideal, topk = [], []
    for trace in traces:
        qid = question_id(subset, trace)
        relevant = [doc_id for doc_id, grade in (qrels.get(qid) or qrels.get(trace.trace_id) or {}).items()
                    if grade > 0 and doc_id in corpus]
        if not relevant:
            files.unlabelled += 1
            continue
        retrieved = [d.id for d in trace.documents]
        negatives = [d for d in retrieved if d not in relevant]
        candidates = relevant + negatives
        order = [candidates.index(d) for d in retrieved]
        nc, np_, k = len(candidates), len(relevant), len(order)
        in_k = [1 if i < np_ else 0 for i in order]
        hits = sum(in_k)
        files.texts.append({"id": qid, "q": trace.question, "p": [corpus[d] for d in relevant],
                            "n": [corpus[d] for d in negatives]})
        files.ranked.append({"id": qid, "E": system, "Nc": nc, "Np": np_, "K": [k], "P": [hits / k],
                             "R": [hits / np_], "rank": order + [i for i in range(nc) if i not in order]})
        reference = (references or {}).get(qid) or (references or {}).get(trace.trace_id)
        if reference is not None:
            ideal.append({"kind": "ideal", "id": qid, "q": trace.question, "answer": reference})
            files.references += 1
        topk.append({"kind": "topK", "id": qid, "E": system, "Nc": nc, "Np": np_, "K": k, "rank": order,
                     "inK": in_k, "P": hits / k, "R": hits / np_, "q": trace.question, "answer": trace.answer})
    files.answers = ideal + topk
    return files
