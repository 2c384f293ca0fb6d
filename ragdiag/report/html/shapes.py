"""The shape each result kind must have before the report renders it.

A file is recognised by its top-level keys (:func:`ragdiag.report.html.inputs.kind_of`); its fields
can still have the wrong types (hand-edited, truncated by another tool, a different program's JSON
with the same keys). Each kind's fields read by its section are checked here first, so a wrong
type is one line naming the file and the field (``results[3].n``) instead of a traceback.

Spec grammar: a type or tuple of types is an ``isinstance`` check (``NUM`` excludes booleans); a
dict is an object whose keys are required, or optional when written ``"?key"``; a one-item list is
a list whose every item has that shape. A kind whose objects are keyed by names the document itself
declares (clq's quality measures, dynamic-k's metrics) has a second spec built from those names
(:data:`KEYED`), checked after the first.
"""

from __future__ import annotations

from typing import Any

from ragdiag.errors import DataError

NONE = type(None)
NUM = "number"  # int or float, not bool
OPT_NUM = "number or null"
TEXT = (str,)
NAME = (str, int)  # a label written as text or a number

SPECS: dict[str, Any] = {
    "correlate": {
        "meta": {"measures": [TEXT], "?kinds": ([TEXT], NONE), "?compare": ([TEXT], NONE)},
        "results": [{"measure": TEXT, "segment": NAME, "n": NUM}],
        "verdicts": [{"subset": NAME, "side": NAME, "best": TEXT, "best_mean": OPT_NUM, "runner_up": (str, NONE),
                      "lead": OPT_NUM, "lead_holds": OPT_NUM}],
        "?comparisons": ([{"segment": NAME}], NONE),
    },
    "robustness": {
        "?meta": (dict, NONE),
        "points": [{"robustness": dict, "?params": (dict, NONE), "?recall_mean": OPT_NUM, "?index": (str, NONE),
                    "?zero_recall_queries": OPT_NUM, "?qps_batch": (dict, int, float, NONE),
                    "?latency_ms": (dict, int, float, NONE)}],
        "?recommendation": (dict, NONE),
        "?controls": ([dict], NONE),
    },
    "evaluate": {
        "runs": [{"run": NAME, "?metrics": ([dict], NONE), "?decision": (dict, NONE)}],
        "?comparisons": ([dict], NONE),
    },
    "probe-names": {"base": dict, "ablations": [{"name": NAME}]},
    "probe-noise": {"levels": [{"level": NAME}]},
    "probe-names-queries": {"meta": {"k": NUM}, "embedder": TEXT, "detected": [{"query_id": NAME, "names": [TEXT]}],
                            "impacts": [{"name": TEXT, "changed_queries": NUM, "difference": dict, "worst": [dict]}],
                            "notes": [TEXT]},
    "llm-run": {"summary": dict, "?run": (dict, NONE), "?failures": (list, NONE), "?unparsed": (list, NONE),
                "?meta": (dict, NONE)},
    "graded": [{"grade": OPT_NUM}],
}
SPECS["sweep"] = SPECS["robustness"]
SPECS["triage"] = {
    "meta": {"?seed": (int, NONE), "?bootstrap": (int, NONE)},
    "queries": [{"id": NAME, "cause": (str, NONE), "also": [TEXT], "grades": dict, "calls": NUM}],
    "causes": dict,
    "calls": {"?paid": OPT_NUM, "?reused": OPT_NUM, "?triaged_queries": OPT_NUM, "?paid_per_triaged_query": OPT_NUM},
    "cost": {"?worst_case_calls": OPT_NUM, "?max_calls": OPT_NUM},
    "?left_out": [{"id": NAME, "reason": TEXT}],
    "?notes": [TEXT],
    "?erag": ({"queries": NUM, "utility": dict, "relevance": dict}, NONE),
}
OPT_TEXT = (str, NONE)
SPECS["clq"] = {
    "?meta": {"command": TEXT, "configs": TEXT, "quality": [TEXT], "slo_ms": OPT_NUM, "slo_percentile": TEXT,
              "budget": OPT_NUM},
    "quality": [TEXT],
    "configs": [{"name": TEXT, "family": OPT_TEXT, "k": OPT_NUM, "cost": NUM, "latency_p50": NUM, "latency_p95": OPT_NUM,
                 "e2e_p50": OPT_NUM, "quality": dict, "efficiency_retrieval": OPT_NUM, "efficiency_e2e": OPT_NUM,
                 "pareto": bool}],
    "frontier": [TEXT],
    "dominated": dict,
    "choices": {"primary": TEXT, "?slo": {"slo_ms": NUM, "percentile": TEXT, "best": OPT_TEXT},
                "?budget": {"budget": NUM, "best": OPT_TEXT}, "?slo_and_budget": {"best": OPT_TEXT}},
    "marginal": [{"family": TEXT, "from_k": NUM, "to_k": NUM, "metric": TEXT, "latency": TEXT, "d_quality": NUM,
                  "d_latency_ms": NUM, "per_ms": OPT_NUM}],
    "?run_record": (dict, NONE),
}
ESTIMATE = {"value": OPT_NUM, "ci": ([NUM], NONE), "n_defined": NUM}
SPECS["dynamic-k"] = {
    "?meta": {"command": TEXT, "qrels": TEXT, "qrels_binary": bool, "run_low": TEXT, "run_high": TEXT},
    "params": {"k_low": NUM, "k_high": NUM, "ks": [NUM], "escalate_when": TEXT, "steps": NUM,
               "tokens_per_candidate": NUM, "price_per_mtok": NUM, "bootstrap": NUM, "seed": NUM},
    "queries": NUM,
    "signal": {"name": TEXT, "escalate_when": TEXT, "defined": NUM, "median": NUM, "min": NUM, "max": NUM},
    "policies": [{"threshold": OPT_NUM, "label": TEXT, "share_escalated": NUM, "mean_candidates": NUM,
                  "cost_per_1k": NUM, "metrics": dict, "vs_low": dict, "vs_high": dict}],
    "?run_record": (dict, NONE),
}


def _clq_keyed(doc: dict) -> dict:
    """What the fixed spec cannot say: every configuration has each quality measure, as a number;
    ``dominated`` maps names to lists of names."""
    return {"configs": [{"quality": {q: NUM for q in doc["quality"]}}], "dominated": {n: [TEXT] for n in doc["dominated"]}}


def _dynamic_k_keyed(doc: dict) -> dict:
    """Every policy has an estimate for each metric of the first policy, in its means and both differences."""
    names = list(doc["policies"][0]["metrics"]) if doc["policies"] else []
    return {"policies": [{part: {n: ESTIMATE for n in names} for part in ("metrics", "vs_low", "vs_high")}]}


SPECS["compare"] = {
    "meta": {"command": TEXT, "queries": NUM, "input_kind": TEXT, "test": TEXT, "correction": TEXT, "alpha": NUM,
             "interval_level": NUM, "max_drop": NUM, "seed": NUM, "strict": bool, "power": NUM},
    "decision": OPT_TEXT,
    "metrics": [{"metric": TEXT, "n": NUM, "mean_base": NUM, "mean_new": NUM, "delta": NUM, "ci_low": NUM,
                 "ci_high": NUM, "p": NUM, "p_adjusted": NUM, "d_z": OPT_NUM, "decision": TEXT,
                 "queries_needed": OPT_NUM, "?direction": TEXT}],
    "plan": ([{"metric": TEXT, "n": NUM, "sd_diff": NUM, "sd_source": TEXT, "mde": NUM, "power": NUM,
               "queries_needed": OPT_NUM, "mde_at_n": NUM}], NONE),
    "?judge": ([{"metric": TEXT, "k": NUM, "sigma2_judge": NUM, "sigma2_judge_ci": [NUM], "judge_share": NUM,
                 "advice": TEXT, "repeat_calls": NUM, "query_calls": NUM}], NONE),
    "?sequential": ({"sequence": TEXT, "order": TEXT, "look_every": NUM, "available": NUM, "max_queries": NUM,
                     "stopped_at": NUM, "burn_in": NUM,
                     "metrics": [{"metric": TEXT, "sequence": TEXT, "decision": TEXT, "decided_at": OPT_NUM,
                                  "e_regression": NUM, "e_no_regression": NUM, "n": [NUM], "lower": [OPT_NUM],
                                  "upper": [OPT_NUM]}]}, NONE),
    "?worst": [{"query_id": NAME, "delta": dict}],
}

def _triage_keyed(doc: dict[str, Any]) -> dict[str, Any]:
    """Each cause the file names, and each eRAG aggregation, as the triage section reads them."""
    cause = {"share": OPT_NUM, "ci_low": OPT_NUM, "ci_high": OPT_NUM, "count": NUM, "fix": TEXT}
    spec: dict[str, Any] = {"causes": {name: cause for name in doc["causes"]}}
    erag = doc.get("erag")
    if isinstance(erag, dict):
        tau = {"tau": OPT_NUM, "?p_value": OPT_NUM, "?n": OPT_NUM}
        spec["erag"] = {part: {agg: tau for agg in erag[part]} for part in ("utility", "relevance")}
    return spec


KEYED = {"clq": _clq_keyed, "dynamic-k": _dynamic_k_keyed, "triage": _triage_keyed}  # specs that depend on the keys the document names


def _describe(spec: Any) -> str:
    if spec in (NUM, OPT_NUM):
        return spec
    if isinstance(spec, dict):
        return "an object"
    if isinstance(spec, list):
        return "a list"
    kinds = spec if isinstance(spec, tuple) else (spec,)
    words = {str: "text", int: "a number", float: "a number", dict: "an object", list: "a list", NONE: "null",
             bool: "true or false"}
    return " or ".join(dict.fromkeys(words[k] if isinstance(k, type) and k in words else _describe(k) for k in kinds))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _matches(value: Any, spec: Any) -> bool:
    if spec == NUM:
        return _is_number(value)
    if spec == OPT_NUM:
        return value is None or _is_number(value)
    if isinstance(spec, dict):
        return isinstance(value, dict)
    if isinstance(spec, list):
        return isinstance(value, list)
    if isinstance(spec, tuple):
        return any(_matches(value, s) for s in spec)
    if spec in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, spec)


def _walk(value: Any, spec: Any, field: str, fail) -> None:
    if not _matches(value, spec):
        fail(field, f"expected {_describe(spec)}, got {type(value).__name__ if value is not None else 'null'}")
    if isinstance(spec, tuple):
        spec = next((s for s in spec if isinstance(s, (dict, list)) and _matches(value, s)), None)
    if isinstance(spec, dict):
        for key, sub in spec.items():
            name, optional = key.lstrip("?"), key.startswith("?")
            if name not in value:
                if not optional:
                    fail(f"{field}.{name}" if field else name, "missing")
                continue
            _walk(value[name], sub, f"{field}.{name}" if field else name, fail)
    elif isinstance(spec, list):
        for index, item in enumerate(value):
            _walk(item, spec[0], f"{field}[{index}]", fail)


def check_shape(kind: str, doc: Any, source: str) -> None:
    """Raise a one-line :class:`DataError` naming ``source`` and the first field of ``doc`` whose
    type does not fit ``kind``'s spec. Probe kinds may be one result or a list of them."""
    def fail(field: str, problem: str) -> None:
        raise DataError(f"{source}: a {kind} result whose field '{field or '(top level)'}' is wrong: {problem}")

    spec = SPECS.get(kind)
    if spec is None:
        return
    if kind.startswith("probe") and isinstance(doc, list):
        spec = [spec]
    _walk(doc, spec, "", fail)
    if kind in KEYED:
        _walk(doc, KEYED[kind](doc), "", fail)
