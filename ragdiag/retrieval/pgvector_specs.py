"""pgvector index specs: ``pg-hnsw``, ``pg-ivfflat`` and ``pg-exact``, swept like the faiss specs.

``KIND[:name=value,...]``; ``a|b|c`` sweeps a search-time parameter (one operating point per
combination, same built index). Ranges are pgvector 0.8's own limits (its ``hnsw.c`` /
``ivfflat.c`` option definitions), checked before any work starts:

- ``pg-hnsw`` — build ``m`` 2..100 (16), ``ef_construction`` 4..1000 (64, and ≥ 2·m);
  search ``ef_search`` 1..1000 (40), ``iterative_scan`` off|relaxed_order|strict_order,
  ``max_scan_tuples`` ≥ 1, ``scan_mem_multiplier`` 1..1000.
- ``pg-ivfflat`` — build ``lists`` 1..32768 (100); search ``probes`` 1..lists (1),
  ``iterative_scan`` off|relaxed_order, ``max_probes`` 1..32768.
- ``pg-exact`` — no index: a sequential scan, exact.

Search parameters become session settings (``SET hnsw.ef_search = …``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ragdiag.errors import RagdiagError

PREFIX = "pg-"
INT_MAX = 2**31 - 1

# kind → {parameter: (default, low, high)}; default None = left at the server's setting
_BUILD: dict[str, dict[str, tuple[int, int, int]]] = {
    "pg-exact": {},
    "pg-hnsw": {"m": (16, 2, 100), "ef_construction": (64, 4, 1000)},
    "pg-ivfflat": {"lists": (100, 1, 32768)},
}
_SEARCH_INT: dict[str, dict[str, tuple[int | None, int, int]]] = {
    "pg-exact": {},
    "pg-hnsw": {"ef_search": (40, 1, 1000), "max_scan_tuples": (None, 1, INT_MAX), "scan_mem_multiplier": (None, 1, 1000)},
    "pg-ivfflat": {"probes": (1, 1, 32768), "max_probes": (None, 1, 32768)},
}
_ITERATIVE = {"pg-hnsw": ("off", "relaxed_order", "strict_order"), "pg-ivfflat": ("off", "relaxed_order")}
# spec parameter → PostgreSQL setting
SETTING = {
    "ef_search": "hnsw.ef_search",
    "max_scan_tuples": "hnsw.max_scan_tuples",
    "scan_mem_multiplier": "hnsw.scan_mem_multiplier",
    "probes": "ivfflat.probes",
    "max_probes": "ivfflat.max_probes",
}
INDEX_METHOD = {"pg-hnsw": "hnsw", "pg-ivfflat": "ivfflat"}


@dataclass(frozen=True)
class PgSpec:
    """A parsed pgvector spec: kind, build parameters, and the values of each search parameter."""

    kind: str
    build: dict[str, int] = field(default_factory=dict)
    search: dict[str, list] = field(default_factory=dict)
    text: str = ""

    def operating_points(self) -> list[dict]:
        """Every combination of search-parameter values (one dict per operating point)."""
        names = list(self.search)
        return [dict(zip(names, values)) for values in itertools.product(*(self.search[n] for n in names))]

    def settings(self, params: dict) -> dict[str, str]:
        """The session settings (``hnsw.ef_search`` …) for one operating point."""
        method = INDEX_METHOD.get(self.kind)
        out = {}
        for name, value in params.items():
            key = f"{method}.iterative_scan" if name == "iterative_scan" else SETTING[name]
            out[key] = str(value)
        return out


def is_pg_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def _int_value(spec: str, name: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise RagdiagError(f"index spec '{spec}': {name}={raw!r} is not an integer") from None
    if not low <= value <= high:
        raise RagdiagError(f"index spec '{spec}': {name}={value} is out of range (pgvector allows {low}..{high})")
    return value


def parse_pg_spec(spec: str) -> PgSpec:
    """Parse e.g. ``pg-hnsw:m=16,ef_construction=64,ef_search=10|20|40`` (malformed → RagdiagError)."""
    text = spec.strip()
    kind, _, rest = text.partition(":")
    if kind not in _BUILD:
        raise RagdiagError(f"index spec '{spec}': unknown pgvector kind '{kind}' (expected one of {', '.join(_BUILD)})")
    build = {name: default for name, (default, _, _) in _BUILD[kind].items()}
    search: dict[str, list] = {}
    seen: set[str] = set()
    for item in filter(None, (part.strip() for part in rest.split(","))):
        name, eq, raw = (s.strip() for s in item.partition("="))
        if not eq or not raw:
            raise RagdiagError(f"index spec '{spec}': expected name=value, got '{item}'")
        if name in seen:
            raise RagdiagError(f"index spec '{spec}': parameter '{name}' given twice")
        seen.add(name)
        values = [v.strip() for v in raw.split("|")]
        if name in build:
            if len(values) > 1:
                raise RagdiagError(f"index spec '{spec}': '{name}' is a build parameter and cannot be swept")
            _, low, high = _BUILD[kind][name]
            build[name] = _int_value(spec, name, values[0], low, high)
        elif name in _SEARCH_INT[kind]:
            _, low, high = _SEARCH_INT[kind][name]
            search[name] = list(dict.fromkeys(_int_value(spec, name, v, low, high) for v in values))
        elif name == "iterative_scan" and kind in _ITERATIVE:
            bad = [v for v in values if v not in _ITERATIVE[kind]]
            if bad:
                raise RagdiagError(f"index spec '{spec}': iterative_scan={bad[0]!r} (expected {'|'.join(_ITERATIVE[kind])})")
            search[name] = list(dict.fromkeys(values))
        else:
            allowed = [*_BUILD[kind], *_SEARCH_INT[kind], *(["iterative_scan"] if kind in _ITERATIVE else [])]
            raise RagdiagError(f"index spec '{spec}': unknown parameter '{name}' for {kind} (allowed: {', '.join(allowed) or 'none'})")
    for name, (default, _, _) in _SEARCH_INT[kind].items():
        if name not in search and default is not None:
            search[name] = [default]
    if kind == "pg-hnsw" and build["ef_construction"] < 2 * build["m"]:
        raise RagdiagError(f"index spec '{spec}': ef_construction={build['ef_construction']} must be at least 2·m = {2 * build['m']} (pgvector's rule)")
    if kind == "pg-ivfflat" and max(search["probes"]) > build["lists"]:
        raise RagdiagError(f"index spec '{spec}': probes={max(search['probes'])} exceeds lists={build['lists']}")
    ordered = {name: search[name] for name in [*_SEARCH_INT[kind], "iterative_scan"] if name in search}
    return PgSpec(kind, build, ordered, text)
