"""Index spec strings: ``KIND[:name=value,...]`` where ``a|b|c`` sweeps a search-time parameter.

Kinds and parameters (build-time / search-time):

- ``flat`` — exact search; no parameters.
- ``hnsw`` — ``M`` (16), ``efConstruction`` (100) / ``efSearch`` (16).
- ``ivf`` — IVF-Flat: ``nlist`` (1024, trained k-means) / ``nprobe`` (8).
- ``hnsw_sq8`` — HNSW over 8-bit scalar-quantised vectors: ``M``, ``efConstruction`` / ``efSearch``.
- ``ivfpq`` — IVF with product quantisation (faiss ``IndexIVFPQ``): ``nlist`` (1024), ``m`` (8
  sub-quantisers; must divide the dimension), ``nbits`` (8 bits per code) / ``nprobe`` (8) and, when
  given, ``refine`` = K' ≥ K: the index is wrapped in ``IndexRefineFlat``, which takes the
  IVF-PQ's top K' candidates (``k_factor`` = K'/K) and re-ranks them by exact distance.

Grids (paper 000 §5.4, e.g. M × efSearch): :func:`expand_build_grid` turns ``a|b`` in build
parameters into one spec per combination (one build each); ``robustness`` and ``sweep`` expand
their specs with it, while a single index (``index build``) takes one value.

Only search-time parameters may take several values; each combination is one operating
point of the same built index (no rebuild).

Every value is checked against what faiss accepts before faiss sees it (faiss segfaults on
HNSW ``M=1``): ``M`` 2…512, ``efConstruction``/``efSearch``/``nlist``/``nprobe`` ≥ 1 and within a C
int, ``nprobe`` ≤ ``nlist`` (the default nprobe is lowered to nlist), and ``nlist`` ≤ the number of
vectors once it is known (:func:`check_index_params`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ragdiag.errors import RagdiagError

_BUILD = {
    "flat": {},
    "hnsw": {"M": 16, "efConstruction": 100},
    "hnsw_sq8": {"M": 16, "efConstruction": 100},
    "ivf": {"nlist": 1024},
    "ivfpq": {"nlist": 1024, "m": 8, "nbits": 8},
}
_SEARCH = {"flat": {}, "hnsw": {"efSearch": 16}, "hnsw_sq8": {"efSearch": 16}, "ivf": {"nprobe": 8},
           "ivfpq": {"nprobe": 8}}
_OPTIONAL_SEARCH = {"ivfpq": ("refine",)}  # search parameters with no default: absent means not used
_C_INT_MAX = 2**31 - 1
_RANGES = {"M": (2, 512), "efConstruction": (1, _C_INT_MAX), "efSearch": (1, _C_INT_MAX),
           "nlist": (1, _C_INT_MAX), "nprobe": (1, _C_INT_MAX), "m": (1, 4096), "nbits": (1, 16),
           "refine": (1, _C_INT_MAX)}


@dataclass(frozen=True)
class IndexSpec:
    """A parsed spec: kind, build parameters, and the values of each search parameter."""

    kind: str
    build: dict[str, int] = field(default_factory=dict)
    search: dict[str, list[int]] = field(default_factory=dict)
    text: str = ""

    def operating_points(self) -> list[dict[str, int]]:
        """Every combination of search-parameter values (one dict per operating point)."""
        names = list(self.search)
        return [dict(zip(names, values)) for values in itertools.product(*(self.search[n] for n in names))]


def _positive_int(spec: str, name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise RagdiagError(f"index spec '{spec}': {name}={raw!r} is not an integer") from None
    if value <= 0:
        raise RagdiagError(f"index spec '{spec}': {name} must be positive, got {value}")
    low, high = _RANGES.get(name, (1, _C_INT_MAX))
    if not low <= value <= high:
        raise RagdiagError(f"index spec '{spec}': {name}={value} is outside what faiss accepts ({low}…{high})")
    return value


def parse_index_spec(spec: str) -> IndexSpec:
    """Parse e.g. ``hnsw:M=16,efConstruction=100,efSearch=16|32|64`` (malformed → RagdiagError)."""
    kind, _, rest = spec.strip().partition(":")
    if kind not in _BUILD:
        raise RagdiagError(f"index spec '{spec}': unknown kind '{kind}' (expected one of {', '.join(_BUILD)})")
    build = dict(_BUILD[kind])
    search = {name: [value] for name, value in _SEARCH[kind].items()}
    seen: set[str] = set()
    for item in filter(None, (part.strip() for part in rest.split(","))):
        name, eq, raw = item.partition("=")
        name = name.strip()
        if not eq or not raw.strip():
            raise RagdiagError(f"index spec '{spec}': expected name=value, got '{item}'")
        if name in seen:
            raise RagdiagError(f"index spec '{spec}': parameter '{name}' given twice")
        seen.add(name)
        values = [_positive_int(spec, name, v.strip()) for v in raw.split("|")]
        if name in build:
            if len(values) > 1:
                raise RagdiagError(f"index spec '{spec}': '{name}' is a build parameter and cannot be swept")
            build[name] = values[0]
        elif name in search or name in _OPTIONAL_SEARCH.get(kind, ()):
            search[name] = list(dict.fromkeys(values))
        else:
            allowed = ", ".join([*build, *search, *_OPTIONAL_SEARCH.get(kind, ())]) or "none"
            raise RagdiagError(f"index spec '{spec}': unknown parameter '{name}' for {kind} (allowed: {allowed})")
    if kind in ("ivf", "ivfpq"):
        if "nprobe" in seen and max(search["nprobe"]) > build["nlist"]:
            raise RagdiagError(f"index spec '{spec}': nprobe={max(search['nprobe'])} exceeds nlist={build['nlist']} (at most nlist lists can be probed)")
        search["nprobe"] = [min(v, build["nlist"]) for v in search["nprobe"]]
    return IndexSpec(kind, build, search, spec.strip())


def check_index_params(spec: IndexSpec, n_vectors: int, dim: int | None = None) -> None:
    """Checks that need the data: IVF cannot train more lists than there are vectors; PQ needs at
    least 2^nbits training vectors per codebook and ``m`` dividing the dimension."""
    nlist = spec.build.get("nlist")
    if nlist is not None and nlist > n_vectors:
        raise RagdiagError(f"index spec '{spec.text}': nlist={nlist} exceeds the {n_vectors} vectors to index")
    if spec.kind == "ivfpq":
        codes = 2 ** spec.build["nbits"]
        if codes > n_vectors:
            raise RagdiagError(f"index spec '{spec.text}': nbits={spec.build['nbits']} needs at least {codes} vectors "
                               f"to train each PQ codebook, got {n_vectors}")
        if dim is not None and dim % spec.build["m"]:
            raise RagdiagError(f"index spec '{spec.text}': m={spec.build['m']} does not divide the dimension {dim}")


def expand_build_grid(spec: str) -> list[str]:
    """``hnsw:M=8|16,efSearch=16|64`` → one spec text per build-parameter combination
    (``hnsw:M=8,efSearch=16|64``, ``hnsw:M=16,efSearch=16|64``); other specs are returned as they are."""
    kind, _, rest = spec.strip().partition(":")
    items = [part.strip() for part in rest.split(",") if part.strip()]
    build = _BUILD.get(kind, {})
    choices = []
    for item in items:
        name, eq, raw = item.partition("=")
        if eq and name.strip() in build and "|" in raw:
            choices.append([f"{name.strip()}={v.strip()}" for v in raw.split("|")])
        else:
            choices.append([item])
    if all(len(c) == 1 for c in choices):
        return [spec.strip()]
    return [f"{kind}:{','.join(combo)}" for combo in itertools.product(*choices)]


def expand_specs(specs: list[str]) -> list[str]:
    """Every spec with its build grid expanded (:func:`expand_build_grid`); ``pg-*`` specs unchanged."""
    return [text for spec in specs for text in ([spec] if spec.strip().startswith("pg-") else expand_build_grid(spec))]


def check_refine(spec: IndexSpec, k: int) -> None:
    """``refine`` = K' candidates re-ranked for k results: K' ≥ k (checked before any index is built)."""
    low = min(spec.search.get("refine", [k]))
    if low < k:
        raise RagdiagError(f"index spec '{spec.text}': refine={low} must be at least k={k} (the candidates re-ranked exactly)")
