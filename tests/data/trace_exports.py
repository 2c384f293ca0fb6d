"""Span files written by the real exporter libraries: a tiny RAG application instrumented with the
OpenTelemetry SDK (``opentelemetry-sdk``), its attribute names taken from the conventions' own
packages (``openinference-semantic-conventions``; ``opentelemetry-semantic-conventions`` for GenAI),
exported by the SDK's ``ConsoleSpanExporter`` (span JSON objects one after another), its
``InMemorySpanExporter`` turned into OTLP JSON by ``opentelemetry-exporter-otlp-proto-common`` and
protobuf's JSON mapping, or into Phoenix's spans table (Parquet)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the traces extra (opentelemetry-sdk) is not installed")
pytest.importorskip("openinference.semconv.trace", reason="openinference-semantic-conventions is not installed")

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass(frozen=True)
class Turn:
    question: str
    documents: list[tuple[str, str, float]]  # (id, content, score), best first
    answer: str | None  # None: the application failed before its LLM call (no LLM span)


TURNS = [
    Turn("Where is the Eiffel tower?", [("d1", "The Eiffel tower is in Paris.", 0.9),
                                        ("d2", "Lyon is a city in France.", 0.4)], "It is in Paris."),
    Turn("When was the Eiffel tower built?", [("d3", "Lyon has two rivers.", 0.7),
                                              ("d4", "The tower was built in 1889.", 0.6)], "In 1889."),
    Turn("Who designed it?", [("d5", "Gustave Eiffel's company designed the tower.", 0.8)], None),
]


def _openinference_app(provider: TracerProvider, turns: list[Turn]) -> None:
    """A RAG app traced as OpenInference instrumentations trace one: CHAIN → RETRIEVER, LLM."""
    tracer = provider.get_tracer("rag-app")
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    for turn in turns:
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute(kind, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, turn.question)
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attribute(kind, OpenInferenceSpanKindValues.RETRIEVER.value)
                span.set_attribute(SpanAttributes.INPUT_VALUE, turn.question)
                for n, (doc_id, content, score) in enumerate(turn.documents):
                    base = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{n}."
                    span.set_attribute(base + DocumentAttributes.DOCUMENT_ID, doc_id)
                    span.set_attribute(base + DocumentAttributes.DOCUMENT_CONTENT, content)
                    span.set_attribute(base + DocumentAttributes.DOCUMENT_SCORE, score)
            if turn.answer is None:
                continue
            with tracer.start_as_current_span("llm") as span:
                span.set_attribute(kind, OpenInferenceSpanKindValues.LLM.value)
                span.set_attribute(f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_ROLE}", "assistant")
                span.set_attribute(f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_CONTENT}",
                                   turn.answer)
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, turn.answer)


def _genai_app(provider: TracerProvider, turns: list[Turn]) -> None:
    """The same app traced with the OpenTelemetry GenAI conventions (retrieval and chat operations)."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as g

    tracer = provider.get_tracer("rag-app")
    for turn in turns:
        with tracer.start_as_current_span("rag"):
            with tracer.start_as_current_span("retrieval store") as span:
                span.set_attribute(g.GEN_AI_OPERATION_NAME, g.GenAiOperationNameValues.RETRIEVAL.value)
                span.set_attribute(g.GEN_AI_RETRIEVAL_QUERY_TEXT, turn.question)
                span.set_attribute(g.GEN_AI_RETRIEVAL_DOCUMENTS, json.dumps(
                    [{"id": i, "score": s, "content": c} for i, c, s in turn.documents]))
            if turn.answer is None:
                continue
            with tracer.start_as_current_span("chat gpt-4o-mini") as span:
                span.set_attribute(g.GEN_AI_OPERATION_NAME, g.GenAiOperationNameValues.CHAT.value)
                span.set_attribute(g.GEN_AI_OUTPUT_MESSAGES, json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": turn.answer}], "finish_reason": "stop"}]))


def console_export(path: Path, turns: list[Turn] = TURNS) -> Path:
    """OpenInference spans as the SDK's ConsoleSpanExporter writes them (pretty JSON objects one after another)."""
    with path.open("w", encoding="utf-8") as sink:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sink)))
        _openinference_app(provider, turns)
        provider.shutdown()
    return path


def _in_memory(app, turns: list[Turn]):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app(provider, turns)
    provider.shutdown()
    return exporter.get_finished_spans()


def otlp_json_export(path: Path, turns: list[Turn] = TURNS, genai: bool = True) -> Path:
    """The spans as OTLP JSON: the OTLP exporter's protobuf encoding, in protobuf's JSON mapping."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="opentelemetry-exporter-otlp-proto-common")
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = _in_memory(_genai_app if genai else _openinference_app, turns)
    path.write_text(json.dumps(MessageToDict(encode_spans(spans))), encoding="utf-8")
    return path


def phoenix_parquet_export(path: Path, turns: list[Turn] = TURNS) -> Path:
    """The OpenInference spans in the columns of Phoenix's spans dataframe (``context.trace_id``,
    ``span_kind``, ``attributes.*`` with documents as a list of objects), saved as Parquet."""
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = []
    for span in _in_memory(_openinference_app, turns):
        attrs = dict(span.attributes or {})
        docs: dict[int, dict] = {}
        for key in [k for k in attrs if k.startswith("retrieval.documents.")]:
            _, _, n, rest = key.split(".", 3)
            docs.setdefault(int(n), {})[rest] = attrs.pop(key)
        row = {"name": span.name, "span_kind": attrs.get("openinference.span.kind"),
               "context.trace_id": f"{span.context.trace_id:032x}", "context.span_id": f"{span.context.span_id:016x}",
               "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
               "start_time": str(span.start_time), "attributes.input.value": attrs.get("input.value"),
               "attributes.output.value": attrs.get("output.value"),
               "attributes.llm.output_messages": json.dumps([{"message.role": "assistant", "message.content":
                                                              attrs[k]} for k in attrs if k.endswith(".message.content")]),
               "attributes.retrieval.documents": [docs[n] for n in sorted(docs)] or None}
        rows.append(row)
    for row in rows:  # Phoenix keeps output messages as a list of objects too
        row["attributes.llm.output_messages"] = json.loads(row["attributes.llm.output_messages"]) or None
    pq.write_table(pyarrow.Table.from_pylist(rows), path)
    return path
