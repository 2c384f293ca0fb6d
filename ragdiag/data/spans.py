"""Read exported trace spans into one flat shape: :class:`Span` (trace id, span id, parent, name,
start time, attributes with dotted keys).

Formats, chosen by content (the suffix only tells Parquet apart):

- **OTLP JSON** (``{"resourceSpans": [...]}``, one document or one per line, as the OpenTelemetry
  Collector's file exporter writes; ids in hex or, as protobuf's JSON mapping writes them, base64);
  attribute values ``{"stringValue"|"intValue"|"doubleValue"|"boolValue"|"arrayValue"|"kvlistValue": …}``;
- **span objects** (``{"context": {"trace_id", "span_id"}, "attributes": {...}}``, the shape of the
  OpenTelemetry SDK's ``ReadableSpan.to_json()`` — what ``ConsoleSpanExporter`` writes, objects one
  after another — and of Arize Phoenix's span JSON, whose attributes may be nested objects): a JSON
  list, JSON lines, or concatenated objects;
- **span tables** (Phoenix's spans dataframe saved as Parquet, CSV or JSON records): columns
  ``context.trace_id``, ``context.span_id``, ``parent_id``, ``name``, ``start_time`` and
  ``attributes.*`` (a nested value is flattened as above).

Nested attribute objects and lists of objects are flattened to dotted keys with list positions
(``{"retrieval": {"documents": [{"document": {"id": "d1"}}]}}`` → ``retrieval.documents.0.document.id``),
the layout of OpenInference's flat span attributes.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ragdiag.errors import DataError
from ragdiag.io.text_input import check_utf8


@dataclass(frozen=True)
class Span:
    """One span: ``attributes`` keyed by dotted names, ``start`` in the file's unit (ordering only)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: str
    attributes: dict[str, Any]


def flatten(value: Any, prefix: str = "", into: dict[str, Any] | None = None) -> dict[str, Any]:
    """Dotted keys for nested objects and lists of objects (a list of scalars stays one value)."""
    out: dict[str, Any] = {} if into is None else into
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for index, item in enumerate(value):
            flatten(item, f"{prefix}.{index}", out)
    elif prefix:
        out[prefix] = value
    return out


def _hex_id(value: Any) -> str:
    """A trace or span id as lower-case hex: hex as given (``0x`` stripped), else base64 (protobuf's JSON)."""
    text = str(value or "").strip()
    text = text[2:] if text.lower().startswith("0x") else text
    if text and all(c in "0123456789abcdefABCDEF" for c in text) and len(text) in (16, 32):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex() if text else ""
    except (binascii.Error, ValueError):
        return text


def _otlp_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_otlp_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv.get("key"): _otlp_value(kv.get("value")) for kv in (value["kvlistValue"] or {}).get("values", [])}
    return None


def _otlp_spans(document: dict[str, Any], where: str) -> list[Span]:
    spans = []
    for resource in document.get("resourceSpans") or []:
        for scope in (resource or {}).get("scopeSpans") or (resource or {}).get("instrumentationLibrarySpans") or []:
            for raw in (scope or {}).get("spans") or []:
                if not isinstance(raw, dict) or not raw.get("traceId"):
                    raise DataError(f"{where}: an OTLP span without traceId")
                attributes = {a.get("key"): _otlp_value(a.get("value")) for a in raw.get("attributes") or []}
                for event in raw.get("events") or []:  # GenAI content events (gen_ai.user.message, gen_ai.choice …)
                    body = {a.get("key"): _otlp_value(a.get("value")) for a in event.get("attributes") or []}
                    attributes.setdefault(f"event:{event.get('name')}", body)
                parent = _hex_id(raw.get("parentSpanId")) or None
                spans.append(Span(_hex_id(raw["traceId"]), _hex_id(raw.get("spanId")), parent, str(raw.get("name", "")),
                                  str(raw.get("startTimeUnixNano", "")), flatten(attributes)))
    return spans


def _object_span(raw: dict[str, Any], where: str) -> Span:
    """A span object (SDK ``to_json``, Phoenix JSON) or a span table row (Phoenix dataframe columns)."""
    flat = flatten(raw)
    trace = flat.get("context.trace_id") or flat.get("trace_id")
    if not trace:
        raise DataError(f"{where}: not a span: no context.trace_id (expected OTLP JSON with resourceSpans, "
                        "span objects with context.trace_id and attributes, or a Phoenix spans table)")
    attributes = {key[len("attributes."):]: value for key, value in flat.items() if key.startswith("attributes.")}
    if isinstance(raw.get("attributes"), str):  # a table cell holding the attributes as JSON text
        try:
            attributes = flatten(orjson.loads(raw["attributes"]))
        except orjson.JSONDecodeError:
            raise DataError(f"{where}: field 'attributes': not a JSON object") from None
    kind = flat.get("span_kind")
    if kind and "openinference.span.kind" not in attributes:
        attributes["openinference.span.kind"] = kind
    parent = flat.get("parent_id") or flat.get("context.parent_id")
    return Span(_hex_id(trace), _hex_id(flat.get("context.span_id") or flat.get("span_id")),
                _hex_id(parent) or None, str(flat.get("name") or ""), str(flat.get("start_time") or ""), attributes)


def _json_values(raw: bytes, where: str) -> list[Any]:
    """One JSON document, JSON lines, or JSON objects one after another (ConsoleSpanExporter's output)."""
    try:
        return [orjson.loads(raw)]
    except orjson.JSONDecodeError:
        pass
    import json

    decoder, text, at = json.JSONDecoder(), raw.decode("utf-8"), 0
    values: list[Any] = []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return values
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as err:
            line = text.count("\n", 0, at) + 1
            raise DataError(f"{where}: line {line}: not valid JSON ({err.msg}); expected OTLP JSON, span objects "
                            "(JSON list, JSON lines or one after another) or a Parquet spans table") from None
        values.append(value)


def read_spans(path: Path) -> list[Span]:
    """Every span of an exported trace file (formats in the module docstring); an error naming the
    file and the record for anything else."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix.lower() in (".parquet", ".csv", ".tsv"):
        from ragdiag.data.metric_table import _rows

        return [_object_span(row, f"{path}: {where}") for where, row in _rows(path)]
    raw = path.read_bytes()
    check_utf8(path, raw)
    spans: list[Span] = []
    for number, value in enumerate(_json_values(raw, str(path)), start=1):
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items, start=1):
            where = f"{path}: record {number if len(items) == 1 else index}"
            if not isinstance(item, dict):
                raise DataError(f"{where}: expected a span object, got {type(item).__name__}")
            spans.extend(_otlp_spans(item, where) if "resourceSpans" in item else [_object_span(item, where)])
    if not spans:
        raise DataError(f"{path}: no spans (an empty export)")
    return spans
