"""The metrics ``ragdiag evaluate --metrics`` accepts, each declared once: name, report label,
direction, the options it reads and a one-line help. The ``--metrics`` choices and help, the
report labels and table headers, the comparison direction and the graded/standard split all
derive from :data:`METRICS`.

Import-light (no numpy): ``ragdiag --help`` imports it through the command line.
Formulas: docs/methods.md#8-graded-utility-metrics (graded), ir_measures (standard).
"""

from __future__ import annotations

from dataclasses import dataclass

HIGHER, LOWER = "higher", "lower"  # which direction is better


@dataclass(frozen=True)
class Metric:
    name: str  # as given to --metrics and written in JSON
    label: str  # in tables, plots and reports
    kind: str  # "graded" (ragdiag.metrics.graded_utility) or "standard" (ir_measures)
    direction: str = HIGHER
    parameters: tuple[str, ...] = ()  # the options whose values change it, besides --k
    help: str = ""

    @property
    def lower_is_better(self) -> bool:
        return self.direction == LOWER


METRICS: tuple[Metric, ...] = (
    Metric("ra_nwg", "RA-nWG", "graded", parameters=("--alpha", "--cap4", "--cap3", "--fallback4", "--fallback3"),
           help="rarity-aware normalised weighted gain of the top-K, against the best top-K of the pool"),
    Metric("proc", "PROC", "graded", parameters=("--pool-depth", "--alpha", "--cap4", "--cap3", "--fallback4", "--fallback3"),
           help="pool-restricted oracle ceiling: the best RA-nWG@K the run's top pool-depth allows"),
    Metric("pct_proc", "%PROC", "graded", parameters=("--pool-depth", "--alpha", "--cap4", "--cap3", "--fallback4", "--fallback3"),
           help="RA-nWG@K as a share of PROC@K: how much of the pool's ceiling the top-K realises"),
    Metric("nrecall4", "N-Recall4+", "graded", help="share of the grade 4–5 passages (up to K) found in the top-K"),
    Metric("nrecall5", "N-Recall5", "graded", help="share of the grade-5 passages (up to K) found in the top-K"),
    Metric("hit", "Hit", "graded", parameters=("--gold",), help="1 when the top-K holds a passage of grade ≥ gold"),
    Metric("harm", "Harm", "graded", LOWER, ("--harm-max",), help="share of the top-K judged with grade ≤ harm-max"),
    Metric("unjudged", "Unjudged", "graded", LOWER, help="share of the top-K without a judgement"),
    Metric("ndcg", "nDCG", "standard", help="nDCG@K with gain = grade − 1 (ir_measures)"),
    Metric("recall", "Recall", "standard", parameters=("--gold",), help="recall@K of grade ≥ gold (ir_measures)"),
    Metric("mrr", "MRR", "standard", parameters=("--gold",), help="reciprocal rank of the first grade ≥ gold (ir_measures)"),
    Metric("map", "MAP", "standard", parameters=("--gold",), help="average precision@K of grade ≥ gold (ir_measures)"),
    Metric("precision", "P", "standard", parameters=("--gold",), help="precision@K of grade ≥ gold (ir_measures)"),
)

BY_NAME = {m.name: m for m in METRICS}
METRIC_NAMES = tuple(m.name for m in METRICS)
METRIC_LABELS = {m.name: m.label for m in METRICS}
GRADED_METRICS = tuple(m.name for m in METRICS if m.kind == "graded")
STANDARD_METRICS = tuple(m.name for m in METRICS if m.kind == "standard")
LOWER_IS_BETTER = tuple(m.name for m in METRICS if m.lower_is_better)


def label(name: str) -> str:
    """The report label of a metric name; an unknown name is shown as it is."""
    return METRIC_LABELS.get(name, name)


def label_at(name: str) -> str:
    """The report label of ``metric@K`` (``ra_nwg@10`` → ``RA-nWG@10``), or of a bare metric name."""
    metric, at, k = name.partition("@")
    return f"{label(metric)}{at}{k}"


def metrics_help() -> str:
    """The ``--metrics`` help text."""
    return f"Comma list of {', '.join(METRIC_NAMES)} (default all)."
