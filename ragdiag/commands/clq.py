"""``ragdiag clq``: check the paths, read configurations, check them, analyse cost–latency–quality,
write the result (``--out``) and the plot, stamp.

A configurations file (CSV, TSV, JSONL or JSON list) has one row per configuration:

- ``name`` (unique); optional ``family`` and ``k`` (configurations of one family differing in K
  give the marginal-gain rows);
- quality: columns named ``METRIC@K`` (e.g. ``ra_nwg@10``, ``nrecall4@10``), and/or ``evaluate``
  (the JSON written by ``ragdiag evaluate``, a path relative to the file) with ``run`` (the run's
  name in it), whose every metric at every K is read;
- latency in ms: ``latency_p50_ms`` (required unless ``sweep``), ``latency_p95_ms``, ``e2e_p50_ms``
  (end to end, for the end-to-end efficiency); or ``sweep`` (the ``sweep.json`` written by
  ``ragdiag sweep``, a path relative to the file) with ``point`` (a point's label, or ``exact``): the
  single-query latency p50 and p95 measured there;
- cost per 1,000 queries: ``cost_per_1k``, or the cost model's columns ``candidates``,
  ``tokens_per_candidate``, ``rerank_price``, ``generation_passages``, ``generation_price``,
  ``query_tokens``, ``embed_price`` (prices per million tokens; missing ones count 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import orjson

from ragdiag.errors import DataError, RagdiagError
from ragdiag.evaluate.clq import DEFAULT_QUALITY, Config, CostModel, analyse
from ragdiag.io.out_format import write_result
from ragdiag.io.paths import check_paths
from ragdiag.io.run_record import start_run
from ragdiag.report import clq_report as report
from ragdiag.results.clq import ClqMeta, ClqResult
from ragdiag.results.sweep import SweepControl, SweepPoint, SweepResult

COST_COLUMNS = tuple(f.name for f in fields(CostModel))
LATENCY_COLUMNS = ("latency_p50_ms", "latency_p95_ms", "e2e_p50_ms")


@dataclass
class ClqRequest:
    configs: Path
    quality: tuple[str, ...] = DEFAULT_QUALITY
    slo_ms: float | None = None
    slo_percentile: str = "p50"
    budget: float | None = None
    out: Path | None = None
    fmt: str | None = None  # --format; None: the suffix of --out decides
    plot: Path | None = None


def _required(row: dict[str, Any], column: str, source: str, index: int) -> float:
    """:func:`_number` of a column every configuration must give."""
    number = _number(row, column, source, index)
    if number is None:
        raise DataError.at(source, index, column, "missing")
    return number


def _number(row: dict[str, Any], column: str, source: str, index: int) -> float | None:
    """A finite number ≥ 0 in ``column`` of record ``index``; None when the cell is empty or absent."""
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError.at(source, index, column, f"not a number: {str(value)[:40]!r}") from None
    if not math.isfinite(number) or number < 0:
        raise DataError.at(source, index, column, f"must be a finite number ≥ 0, got {value!r}")
    return number


def _records(items: list[Any]) -> list[dict[str, Any]]:
    return [item for item in items if isinstance(item, dict)]


def _result_doc(path: Path, field: str, kind: str, key: str, source: str, index: int) -> tuple[Any, list[dict[str, Any]]]:
    """A ragdiag ``kind`` result JSON named in ``field`` of record ``index``, and the records of its
    ``key``, which must be a list (anything else in it is dropped)."""
    try:
        result = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise DataError.at(source, index, field, f"{path}: no such file") from None
    except (OSError, orjson.JSONDecodeError) as err:
        raise DataError.at(source, index, field, f"{path}: not a ragdiag {kind} result ({err})") from None
    items = result.get(key) if isinstance(result, dict) else None
    if not isinstance(items, list):
        raise DataError.at(source, index, field, f"{path}: not a ragdiag {kind} result (no '{key}')")
    return result, _records(items)


def _evaluate_metrics(path: Path, run: str, source: str, index: int) -> dict[str, float]:
    """Every ``metric@k`` of ``run`` in an evaluate result JSON."""
    _, runs = _result_doc(path, "evaluate", "evaluate", "runs", source, index)
    block = next((r for r in runs if r.get("run") == run), None)
    if block is None:
        raise DataError.at(source, index, "run", f"no run '{run}' in {path} (runs: {', '.join(str(r.get('run')) for r in runs)})")
    return _metric_values(block.get("metrics"), f"{path}: run '{run}'", source, index)


def _metric_values(metrics: object, where: str, source: str, index: int) -> dict[str, float]:
    """``metric@k`` → value of an evaluate run's ``metrics`` list, each entry checked (a null value,
    a metric with no value at that K, is left out)."""
    if not isinstance(metrics, list):
        raise DataError.at(source, index, "evaluate", f"{where}: 'metrics' is not a list")
    values: dict[str, float] = {}
    for position, m in enumerate(metrics, start=1):
        at = f"{where}: metrics[{position}]"
        if not isinstance(m, dict):
            raise DataError.at(source, index, "evaluate", f"{at}: not an object")
        name, k, value = m.get("metric"), m.get("k"), m.get("value")
        if not isinstance(name, str) or not name:
            raise DataError.at(source, index, "evaluate", f"{at}: 'metric' missing or not a name")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise DataError.at(source, index, "evaluate", f"{at} ({name}): 'k' missing or not an integer ≥ 1")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise DataError.at(source, index, "evaluate", f"{at} ({name}@{k}): 'value' {str(value)[:40]!r} "
                               "is not a finite number")
        values[f"{name}@{k}"] = float(value)
    return values


def _sweep_result(path: Path, source: str, index: int) -> SweepResult:
    """The ``sweep.json`` named in record ``index`` as a :class:`SweepResult` (a ``controls`` that is
    not a list is left out, as if absent)."""
    result, points = _result_doc(path, "sweep", "sweep", "points", source, index)
    doc = {**result, "points": points}
    controls = doc.pop("controls", None)
    if isinstance(controls, list):
        doc["controls"] = _records(controls)
    try:
        return SweepResult.from_json(doc)
    except (AttributeError, TypeError) as err:
        raise DataError.at(source, index, "sweep", f"{path}: not a ragdiag sweep result ({err})") from None


def _sweep_latency(path: Path, point: str, source: str, index: int) -> tuple[float, float | None]:
    """p50 and p95 (None when not measured) single-query latency (ms) of one point (or the exact
    control) of a sweep.json."""
    sweep = _sweep_result(path, source, index)
    found: SweepPoint | SweepControl | None = next((p for p in sweep.points if p.label == point), None)
    if found is None and point == "exact":
        if not sweep.has("controls"):
            raise DataError.at(source, index, "sweep", f"{path}: not a ragdiag sweep result (no 'controls')")
        found = next((c for c in sweep.controls if "exact" in (c.name, c.get("control"))), None)
    if found is None:
        labels = ", ".join(str(p.label) for p in sweep.points)
        raise DataError.at(source, index, "point", f"no point '{point}' in {path} (points: {labels[:300]})")
    latency = found.latency_ms if isinstance(found.latency_ms, dict) else {}
    if not isinstance(latency.get("p50"), (int, float)):
        raise DataError.at(source, index, "point", f"point '{point}' of {path} has no measured latency")
    return float(latency["p50"]), float(latency["p95"]) if isinstance(latency.get("p95"), (int, float)) else None


def read_configs(path: Path, quality: tuple[str, ...]) -> list[Config]:
    """Validated configurations; every quality measure named must be present for every one."""
    from ragdiag.data.metric_table import table_rows

    source = str(path)
    configs: list[Config] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(table_rows(path), start=1):  # records counted from 1
        if not isinstance(row, dict):
            raise DataError.at(source, index, None, "expected an object with named columns")
        name = str(row.get("name") or "").strip()
        if not name:
            raise DataError.at(source, index, "name", "missing")
        if name in seen:
            raise DataError.at(source, index, "name", f"'{name}' is also record {seen[name]}'s name")
        seen[name] = index
        metrics: dict[str, float] = {}
        if row.get("evaluate"):
            target = Path(str(row["evaluate"]))
            target = target if target.is_absolute() else path.parent / target
            metrics.update(_evaluate_metrics(target, str(row.get("run") or ""), source, index))
        for column in row:
            if "@" in str(column):
                value = _number(row, column, source, index)
                if value is not None:
                    metrics[str(column)] = value
        missing = [q for q in quality if q not in metrics]
        if missing:
            raise DataError.at(source, index, missing[0], f"configuration '{name}' has no {missing[0]} "
                               f"(give a column {missing[0]}, or 'evaluate' + 'run')")
        if row.get("sweep"):
            target = Path(str(row["sweep"]))
            target = target if target.is_absolute() else path.parent / target
            p50, p95 = _sweep_latency(target, str(row.get("point") or ""), source, index)
            measured = {"latency_p50_ms": p50, **({"latency_p95_ms": p95} if p95 is not None else {})}
            row = {**row, **{k: v for k, v in measured.items() if row.get(k) in (None, "")}}
        direct = _number(row, "cost_per_1k", source, index)
        model = CostModel(**{c: _number(row, c, source, index) or 0.0 for c in COST_COLUMNS})
        k = _number(row, "k", source, index)
        configs.append(Config(
            name=name, quality=metrics, cost=direct if direct is not None else model.per_1k_queries(),
            latency_p50=_required(row, "latency_p50_ms", source, index),
            latency_p95=_number(row, "latency_p95_ms", source, index),
            e2e_p50=_number(row, "e2e_p50_ms", source, index),
            family=str(row["family"]) if row.get("family") not in (None, "") else None, k=k))
    if not configs:
        raise RagdiagError(f"{source}: no configuration in the file")
    return configs


def parse_quality(text: str) -> tuple[str, ...]:
    """``--quality``: METRIC@K names, comma-separated, duplicates dropped."""
    names = tuple(dict.fromkeys(q.strip() for q in text.split(",") if q.strip()))
    if not names or any("@" not in q for q in names):
        raise RagdiagError(f"--quality '{text}': expected METRIC@K names, e.g. ra_nwg@10,nrecall4@10")
    return names


def run(request: ClqRequest) -> ClqResult:
    """Check, analyse, write ``--out`` and ``--plot``; the result carries ``meta`` and its run record."""
    check_paths(inputs={"--configs": request.configs}, outputs={"--out": request.out}, plots={"--plot": request.plot})
    if not request.configs.is_file():
        raise RagdiagError(f"--configs {request.configs}: no such file")
    parse_quality(",".join(request.quality))
    if request.slo_percentile not in ("p50", "p95"):
        raise RagdiagError(f"--slo-percentile '{request.slo_percentile}': choose p50 or p95")
    record = start_run("ragdiag clq", inputs=[request.configs])
    configs = read_configs(request.configs, request.quality)
    if request.slo_percentile == "p95" and request.slo_ms is not None:
        lacking = [c.name for c in configs if c.latency_p95 is None]
        if lacking:
            raise RagdiagError(f"--slo-percentile p95: configuration '{lacking[0]}' has no latency_p95_ms")
    result = analyse(configs, request.quality, request.slo_ms, request.budget, request.slo_percentile)
    result.meta = ClqMeta("ragdiag clq", str(request.configs), list(request.quality), request.slo_ms,
                          request.slo_percentile, request.budget)
    result.run_record = record.to_json()
    if request.out is not None:
        write_result(request.out, request.fmt, {"json": lambda: report.json_text(result),
                                                "csv": lambda: report.csv_text(result),
                                                "table": lambda: report.table_text(result)}, [request.configs])
    if request.plot is not None:
        from ragdiag.io.writer import write_figure

        write_figure(request.plot, report.plot(result), inputs=[request.configs])
    return result
