"""Every measure ragdiag computes, declared once, grouped in the sets commands offer.

- :data:`CORRELATE` — ``correlate --measures`` (paper 003, eqs. 1–4; docs/methods.md#2-per-sample-measures):
  F, E, T, T′, nDCG, P, R of a graded sample; α maximised over the α grid, x the ``--xk`` sibling ranking.
- :data:`EVALUATE` — ``evaluate --metrics`` (docs/methods.md#8-graded-utility-metrics for the graded
  ones; trec_eval's definitions, as ir_measures names them, for the standard ones), also the
  ``METRIC@K`` of ``compare --metrics``, clq's quality columns and dynamic-k's means.
- :data:`QUERY_IMPACT` — the columns of ``probe names --queries`` (:mod:`ragdiag.probes.query_impact`).
- :data:`MATCHED_RECALL` — the ranking metrics at matched recall of ``robustness --match-recall``.

The option parsers, ``--help`` choices, legend lines under a verdict and report labels derive from
here, and every command computes a measure by calling the implementation its entry names (the
calling conventions: :mod:`ragdiag.measures.core`). Import-light (no numpy): ``ragdiag --help`` imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragdiag.errors import RagdiagError
from ragdiag.io.lists import MAX_K, parse_choices
from ragdiag.measures.core import (
    ALPHA,
    CUTOFF,
    GOLD,
    HARM_MAX,
    HIGHER,
    LOWER,
    PERCENTILE,
    POOL_DEPTH,
    XK,
    BoundMeasure,
    Measure,
    Param,
    Reading,
    parse_bound,
)


@dataclass(eq=False)
class MeasureSet:
    """The measures one option offers (``--measures``, ``--metrics``), in their help order; the commands
    read it when they run, so a measure :meth:`register`-ed later is offered and computed like the others."""

    name: str
    option: str
    what: str  # "measure" or "metric", as the option's error message says
    measures: tuple[Measure, ...]

    def register(self, measure: Measure) -> Measure:
        """Add ``measure`` (its name not yet taken) after the others; returns it."""
        if measure.name in self.by_name:
            raise RagdiagError(f"{self.option or self.name}: a {self.what} named '{measure.name}' is already registered")
        self.measures = (*self.measures, measure)
        return measure

    def unregister(self, name: str) -> None:
        """Remove the measure called ``name`` (a test undoing its :meth:`register`)."""
        self.measures = tuple(m for m in self.measures if m.name != name)

    def lower_is_better(self, name: str) -> bool:
        """Whether ``name`` (or ``name@K``) is a registered measure where lower is better."""
        found = self.by_name.get(name.partition("@")[0])
        return found is not None and found.lower_is_better

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.measures)

    @property
    def by_name(self) -> dict[str, Measure]:
        return {m.name: m for m in self.measures}

    def __getitem__(self, name: str) -> Measure:
        return self.by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def select(self, names: Sequence[str]) -> tuple[Measure, ...]:
        """The measures named, in the order given."""
        return tuple(self.by_name[n] for n in names)

    def parse(self, spec: str) -> tuple[str, ...]:
        """``"F,T"`` → ("F", "T") (order kept, duplicates dropped); an unknown name is a one-line error."""
        return tuple(parse_choices(spec, self.names, self.what, self.option))

    def label(self, name: str) -> str:
        """The report label of a name; an unknown name is shown as it is."""
        found = self.by_name.get(name)
        return found.label if found else name

    def label_at(self, name: str) -> str:
        """The label of ``name@K`` (``ra_nwg@10`` → ``RA-nWG@10``), or of a bare name."""
        measure, at, k = name.partition("@")
        return f"{self.label(measure)}{at}{k}"

    def bound(self, text: str) -> BoundMeasure:
        """``"ndcg@10"`` → the bound measure (:func:`ragdiag.measures.core.parse_bound`)."""
        return parse_bound(text, self.by_name)


_SAMPLE = "ragdiag.measures.sample"
_GRADED = "ragdiag.metrics.graded_measures"
_STANDARD = "ragdiag.measures.standard"
_N_K_NP, _N_K_S, _N_K, _N_NP = ("n", "k", "np_"), ("n", "k", "s"), ("n", "k"), ("n", "np_")
_RECALL, _PRECISION = ("recall", "recall@K"), ("precision", "precision@K")
_MIX = ("a precision–recall mix", "recall@K and precision@K together")
_T_READING = Reading(  # T′ is T without the 1/K: the same reading at both ends
    ("the count of relevant passages in the top K", "the number of relevant passages in the top K"),
    ("relevant minus irrelevant passages", "the number of relevant passages in the top K (and cutting irrelevant ones)"),
    ("a penalty on irrelevant passages", "precision@K (fewer irrelevant passages in the top K)"))

# --- correlate: per-sample measures of (n, K, Np, S, inK) ------------------------------------------------
LEGEND_SYMBOLS = ("n = relevant passages in the top K, K = passages given to the generator, "
                  "Np = all relevant passages")

CORRELATE = MeasureSet("correlate", "--measures", "measure", (
    Measure("F", "F(α)", HIGHER, "F(α) = n/(α·K + (1−α)·Np), α = 0 recall, α = 1 precision", (CUTOFF, ALPHA),
            f"{_SAMPLE}:f_measure", reads=_N_K_NP, reading=Reading(_RECALL, _MIX, _PRECISION),
            legend="F(α) = n / (α·K + (1−α)·Np), Van Rijsbergen's F: α = 0 is recall n/Np, α = 1 is precision n/K"),
    Measure("E", "E(α)", HIGHER, "E = F with Np estimated from the ranking (relevant passages in the top x·K)",
            (CUTOFF, ALPHA, XK), f"{_SAMPLE}:e_measure", reads=_N_K_S,
            reading=Reading(("recall (Np estimated from the ranking)", "recall@K"), _MIX, _PRECISION),
            legend="E(α) = F with Np estimated from the ranking (S = relevant passages in the top x·K, --xk): "
                   "needs no count of all relevant passages"),
    Measure("T", "T(α)", HIGHER, "T(α) = (1−α)·n − α·(K−n)/K", (CUTOFF, ALPHA), f"{_SAMPLE}:t_measure", reads=_N_K,
            reading=_T_READING,
            legend="T(α) = (1−α)·n − α·(K−n)/K, the TopK measure: α = 0 counts relevant passages in the top K, "
                   "α → 1 penalises irrelevant ones"),
    Measure("T'", "T′(α)", HIGHER, "T′(α) = (1−α)·n − α·(K−n)", (CUTOFF, ALPHA), f"{_SAMPLE}:t_prime_measure", reads=_N_K,
            reading=_T_READING,
            legend="T′(α) = (1−α)·n − α·(K−n), T without the 1/K on the irrelevant passages (paper 003, eq. 4)",
            choice_note=" (paper 003 eq. 4: T without the 1/K; quote it in a shell)"),
    Measure("nDCG", "nDCG@K", HIGHER, "nDCG@K", (CUTOFF,), f"{_SAMPLE}:ndcg_column", reads=("ndcg",),
            reading=Reading.always("rank order", "the rank of the relevant passages (put them first)"),
            legend="nDCG@K: relevant passages near the top count more (ideal: the n retrieved ones first)"),
    Measure("P", "P@K", HIGHER, "P = n/K (precision@K)", (CUTOFF,), f"{_SAMPLE}:precision", reads=_N_K, reading=Reading.always(*_PRECISION),
            legend="P = n/K, precision@K: the share of the K passages that are relevant"),
    Measure("R", "R@K", HIGHER, "R = n/Np (recall@K)", (CUTOFF,), f"{_SAMPLE}:recall", reads=_N_NP, reading=Reading.always(*_RECALL),
            legend="R = n/Np, recall@K: the share of all relevant passages that reach the top K"),
))
CORRELATE_DEFAULT: tuple[str, ...] = ("F", "E", "T", "nDCG")
CALIBRATE_SLOPES: tuple[str, ...] = ("P", "R", "nDCG")  # calibrate: slope of the grade on each

# --- evaluate: graded utility and standard metrics of a run against graded qrels -------------------------
RARITY_ALPHA = Param("rarity_alpha", float, "--alpha", "exponent of RA-nWG's rarity weights")
CAP4 = Param("cap4", float, "--cap4", "cap of a grade-4 passage's weight")
CAP3 = Param("cap3", float, "--cap3", "cap of a grade-3 passage's weight")
FALLBACK4 = Param("fallback4", float, "--fallback4", "weight of grade 4 when the pool has no grade 5")
FALLBACK3 = Param("fallback3", float, "--fallback3", "weight of grade 3 when the pool has no grade 4 or 5")
_WEIGHTS = (RARITY_ALPHA, CAP4, CAP3, FALLBACK4, FALLBACK3)

EVALUATE = MeasureSet("evaluate", "--metrics", "metric", (
    Measure("ra_nwg", "RA-nWG", HIGHER, "rarity-aware normalised weighted gain of the top-K, against the best top-K of the pool",
            (CUTOFF, *_WEIGHTS), f"{_GRADED}:ra_nwg", kind="graded"),
    Measure("proc", "PROC", HIGHER, "pool-restricted oracle ceiling: the best RA-nWG@K the run's top pool-depth allows",
            (CUTOFF, POOL_DEPTH, *_WEIGHTS), f"{_GRADED}:proc", kind="graded"),
    Measure("pct_proc", "%PROC", HIGHER, "RA-nWG@K as a share of PROC@K: how much of the pool's ceiling the top-K realises",
            (CUTOFF, POOL_DEPTH, *_WEIGHTS), f"{_GRADED}:pct_proc", kind="graded"),
    Measure("nrecall4", "N-Recall4+", HIGHER, "share of the grade 4–5 passages (up to K) found in the top-K", (CUTOFF,),
            f"{_GRADED}:nrecall4", kind="graded"),
    Measure("nrecall5", "N-Recall5", HIGHER, "share of the grade-5 passages (up to K) found in the top-K", (CUTOFF,),
            f"{_GRADED}:nrecall5", kind="graded"),
    Measure("hit", "Hit", HIGHER, "1 when the top-K holds a passage of grade ≥ gold", (CUTOFF, GOLD), f"{_GRADED}:hit",
            kind="graded"),
    Measure("harm", "Harm", LOWER, "share of the top-K judged with grade ≤ harm-max", (CUTOFF, HARM_MAX), f"{_GRADED}:harm",
            kind="graded"),
    Measure("unjudged", "Unjudged", LOWER, "share of the top-K without a judgement", (CUTOFF,), f"{_GRADED}:unjudged",
            kind="graded"),
    Measure("ndcg", "nDCG", HIGHER, "nDCG@K with gain = grade − 1 (ir_measures)", (CUTOFF,), f"{_STANDARD}:ndcg",
            kind="standard"),
    Measure("recall", "Recall", HIGHER, "recall@K of grade ≥ gold (ir_measures)", (CUTOFF, GOLD),
            f"{_STANDARD}:recall", kind="standard", reads=("recall.{ks}",)),
    Measure("mrr", "MRR", HIGHER, "reciprocal rank of the first grade ≥ gold (ir_measures)", (CUTOFF, GOLD),
            f"{_STANDARD}:mrr", kind="standard", reads=("recip_rank",)),
    Measure("map", "MAP", HIGHER, "average precision@K of grade ≥ gold (ir_measures)", (CUTOFF, GOLD),
            f"{_STANDARD}:average_precision", kind="standard", reads=("map_cut.{ks}",)),
    Measure("precision", "P", HIGHER, "precision@K of grade ≥ gold (ir_measures)", (CUTOFF, GOLD),
            f"{_STANDARD}:precision", kind="standard", reads=("P.{ks}",)),
))
GRADED_METRICS: tuple[str, ...] = tuple(m.name for m in EVALUATE.measures if m.kind == "graded")
STANDARD_METRICS: tuple[str, ...] = tuple(m.name for m in EVALUATE.measures if m.kind == "standard")
LOWER_IS_BETTER: tuple[str, ...] = tuple(m.name for m in EVALUATE.measures if m.lower_is_better)
HEADLINE: tuple[str, ...] = ("ra_nwg", "proc", "pct_proc", "ndcg", "recall")  # the report's runs-at-a-glance columns
DYNAMIC_K: tuple[str, ...] = ("ra_nwg", "nrecall4", "proc")  # dynamic-k: the means per policy
_ra_nwg, _nrecall4 = EVALUATE["ra_nwg"], EVALUATE["nrecall4"]
CLQ_EFFICIENCY: tuple[BoundMeasure, ...] = (_nrecall4 @ 10, _nrecall4 @ 30, _ra_nwg @ 10, _ra_nwg @ 30)
CLQ_DEFAULT_QUALITY: tuple[BoundMeasure, ...] = (_ra_nwg @ 10, _nrecall4 @ 10)
COMPARE_DEFAULT: tuple[BoundMeasure, ...] = (EVALUATE["ndcg"] @ 10, _ra_nwg @ 10, EVALUATE["recall"] @ 20)

# --- probe names --queries: changed − original per query ----------------------------------------------
QUERY_IMPACT = MeasureSet("query_impact", "", "metric", (
    _nrecall4, _ra_nwg, EVALUATE["recall"].relabelled("recall")))

# --- robustness --match-recall: against the exact top-K (binary relevance) -------------------------------
_MATCHED = "ragdiag.bench.matched_recall"
MATCHED_RECALL = MeasureSet("matched_recall", "", "metric", (
    Measure("map", "MAP", HIGHER, "AP@K = (1/K) Σ_i P@i · rel_i against the exact top-K", (CUTOFF,),
            f"{_MATCHED}:ranking_metrics"),
    Measure("ndcg", "nDCG", HIGHER, "nDCG@K against the exact top-K (all K relevant: the ideal is K ones)", (CUTOFF,),
            "ragdiag.measures.dcg:ndcg"),
    Measure("mrr", "MRR", HIGHER, "1 / rank of the exact nearest neighbour in the top-K, 0 if absent", (CUTOFF,),
            f"{_MATCHED}:ranking_metrics", long_label="MRR (1-NN)"),
    Measure("hit_rate", "hit", HIGHER, "1 when the exact nearest neighbour is in the top-K", (CUTOFF,),
            f"{_MATCHED}:ranking_metrics", long_label="hit rate (1-NN)"),
    *(Measure(f"p{q}", f"p{q}", HIGHER, f"the {q}th percentile of the per-query recalls (numpy.percentile, linear)",
              (PERCENTILE,), "numpy:percentile", long_label=f"p{q} recall") for q in (5, 10, 50)),
))
MATCHED_RANKING: tuple[str, ...] = ("map", "ndcg", "mrr", "hit_rate")
MATCHED_PERCENTILES: tuple[int, ...] = (5, 10, 50)

SETS: tuple[MeasureSet, ...] = (CORRELATE, EVALUATE, QUERY_IMPACT, MATCHED_RECALL)


# --- what the options, help and legends read --------------------------------------------------------------
MEASURES_DEFINED = f"Measures ({LEGEND_SYMBOLS}): " + "; ".join(m.description for m in CORRELATE.measures) + "."
MEASURES_HELP = ("Comma list of " + ", ".join(m.name + m.choice_note for m in CORRELATE.measures)
                 + " (defined in the command's help above).")
DEFAULT_MEASURES_TEXT = ",".join(CORRELATE_DEFAULT)


def parse_measures(spec: str) -> tuple[str, ...]:
    """``correlate --measures``: ``"F,T"`` → ("F", "T"); every name must be registered."""
    return CORRELATE.parse(spec)


def parse_metrics(spec: str) -> tuple[str, ...]:
    """``evaluate --metrics``: ``"ra_nwg,ndcg"`` → ("ra_nwg", "ndcg"); every name must be registered."""
    return EVALUATE.parse(spec)


def metrics_help() -> str:
    """The ``evaluate --metrics`` help text."""
    return f"Comma list of {', '.join(EVALUATE.names)} (default all)."


def parse_metrics_at(text: str) -> list[tuple[str, int]]:
    """``compare --metrics``: ``ndcg@10,ra_nwg@10`` → [(ndcg, 10), (ra_nwg, 10)]: evaluate metrics, each with its K."""
    found: list[tuple[str, int]] = []
    for part in (p.strip() for p in text.split(",")):
        name, at, k = part.partition("@")
        if not part or not at or not (k.isascii() and k.isdigit()):
            raise RagdiagError(f"--metrics: {part!r} is not METRIC@K (e.g. ndcg@10)")
        if not 1 <= int(k) <= MAX_K:
            raise RagdiagError(f"--metrics: {part!r}: K must be an integer in [1, {MAX_K:,}]")
        if name not in EVALUATE:
            raise RagdiagError(f"--metrics: unknown metric '{name}' in '{part}'; choose from {', '.join(EVALUATE.names)}")
        if (name, int(k)) not in found:
            found.append((name, int(k)))
    return found


def needs_sibling(name: str) -> bool:
    """Whether the correlate measure ``name`` reads S, the positives of the x·K sibling ranking (E does)."""
    found = CORRELATE.by_name.get(name)
    return found is not None and "s" in found.reads


def is_standard(name: str) -> bool:
    """Whether the evaluate metric ``name`` is a standard (trec_eval / ir_measures) one."""
    found = EVALUATE.by_name.get(name)
    return found is not None and found.kind == "standard"


def legend(names: Sequence[str]) -> list[tuple[str, str]]:
    """(name, legend line) for each correlate measure of ``names``, in that order (others skipped)."""
    return [(name, CORRELATE[name].legend) for name in names if name in CORRELATE]


def label(name: str) -> str:
    """The report label of an evaluate metric name; an unknown name is shown as it is."""
    return EVALUATE.label(name)


def label_at(name: str) -> str:
    """The report label of ``metric@K`` (``ra_nwg@10`` → ``RA-nWG@10``), or of a bare metric name."""
    return EVALUATE.label_at(name)


# --- names the correlate and evaluate code reads -------------------------------------------------------
ALPHA_MEASURES: tuple[str, ...] = tuple(m.name for m in CORRELATE.measures if m.over_alpha)
PLAIN_MEASURES: tuple[str, ...] = tuple(m.name for m in CORRELATE.measures if not m.over_alpha)
DEFAULT_MEASURES: tuple[str, ...] = CORRELATE_DEFAULT
METRIC_NAMES: tuple[str, ...] = EVALUATE.names
