"""Cost–latency–quality analysis of retrieval configurations (paper 001, §3.2–3.3, §5.4–5.5, A.1).

- Cost per 1,000 queries (the paper's model, tokens × candidates × price):
  1000 · (K · t · p_rerank + n_gen · t · p_gen + q · p_embed) / 10⁶, with K candidates reranked,
  t tokens per candidate, n_gen passages sent to the generator, q embedding tokens per query and
  prices p in currency per million tokens. (K = 50, t = 500, p_rerank = 0.05 gives 1.25, the paper's
  §5.5 baseline.) A configuration may give its cost directly instead.
- Pareto frontier over cost (lower), latency (lower) and each quality measure (higher): a
  configuration is dominated when another is at least as good on every objective and strictly
  better on one (Miettinen 1999); dominated ones are listed with what dominates them.
- Operator rules (§3.3): under an SLO keep latency ≤ SLO and maximise quality; under a budget keep
  cost ≤ budget and maximise quality; ties go to the lower cost, then latency.
- Efficiency screening score (§3.3, Table A.1): 1000 · mean(N-Recall4+@10, N-Recall4+@30, RA-nWG@10,
  RA-nWG@30) / latency in ms, the four-metric mean that reproduces Table A.1 (rank 1: 0.835, 0.819,
  0.804, 0.810 at 332.9 ms → 2.454; rank 5: 0.799, 0.817, 0.769, 0.811 at 339.5 ms → 2.353);
  retrieval-local with the retrieval latency, end-to-end with the total latency (§5.4). A
  configuration lacking any of the four columns has no score (null): a mean of fewer metrics is not
  the table's score and would rank configurations on different scales.
- Marginal quality per ms (§5.4): within a family of configurations that differ only in K, the
  change in quality over the change in latency between consecutive K.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragdiag.measures.registry import CLQ_DEFAULT_QUALITY, CLQ_EFFICIENCY
from ragdiag.results.clq import BothChoice, BudgetChoice, Choices, ClqResult, ConfigRow, Marginal, SloChoice

EFFICIENCY_METRICS = tuple(map(str, CLQ_EFFICIENCY))  # nrecall4@10, nrecall4@30, ra_nwg@10, ra_nwg@30
DEFAULT_QUALITY = tuple(map(str, CLQ_DEFAULT_QUALITY))  # ra_nwg@10, nrecall4@10


@dataclass
class CostModel:
    """Per-query token counts and prices per million tokens (currency of the user's choosing)."""

    candidates: float = 0.0
    tokens_per_candidate: float = 0.0
    rerank_price: float = 0.0
    generation_passages: float = 0.0
    generation_price: float = 0.0
    query_tokens: float = 0.0
    embed_price: float = 0.0

    def per_1k_queries(self) -> float:
        """1000 · (K·t·p_rerank + n_gen·t·p_gen + q·p_embed) / 1e6."""
        per_query = (self.candidates * self.tokens_per_candidate * self.rerank_price
                     + self.generation_passages * self.tokens_per_candidate * self.generation_price
                     + self.query_tokens * self.embed_price)
        return 1000.0 * per_query / 1e6


@dataclass
class Config:
    """One configuration: its measured quality, latency (ms) and cost per 1,000 queries."""

    name: str
    quality: dict[str, float]
    latency_p50: float
    cost: float
    latency_p95: float | None = None
    e2e_p50: float | None = None
    family: str | None = None
    k: float | None = None


def efficiency_missing(quality: dict[str, float]) -> list[str]:
    """The columns of :data:`EFFICIENCY_METRICS` a configuration lacks (then it has no efficiency)."""
    return [m for m in EFFICIENCY_METRICS if m not in quality]


def efficiency(quality: dict[str, float], latency_ms: float) -> float | None:
    """1000 · mean(N-Recall4+@10, N-Recall4+@30, RA-nWG@10, RA-nWG@30) / latency ms (paper 001, Table A.1);
    None when one of the four is missing or the latency is not positive."""
    if latency_ms <= 0 or efficiency_missing(quality):
        return None
    return 1000.0 * (sum(quality[m] for m in EFFICIENCY_METRICS) / len(EFFICIENCY_METRICS)) / latency_ms


def _objectives(c: Config, quality: tuple[str, ...]) -> tuple[float, ...]:
    """All 'higher is better': −cost, −latency, then each quality measure."""
    return (-c.cost, -c.latency_p50, *(c.quality[q] for q in quality))


def dominates(a: Config, b: Config, quality: tuple[str, ...]) -> bool:
    """a is at least as good as b on every objective and strictly better on one."""
    oa, ob = _objectives(a, quality), _objectives(b, quality)
    return all(x >= y for x, y in zip(oa, ob)) and any(x > y for x, y in zip(oa, ob))


def _best(configs: list[Config], primary: str) -> Config | None:
    if not configs:
        return None
    return min(configs, key=lambda c: (-c.quality[primary], c.cost, c.latency_p50, c.name))


def analyse(configs: list[Config], quality: tuple[str, ...] = DEFAULT_QUALITY, slo_ms: float | None = None,
            budget: float | None = None, slo_percentile: str = "p50") -> ClqResult:
    """Frontier, dominated points, SLO/budget choices, efficiency scores and marginal gains."""
    dominated = {c.name: [o.name for o in configs if o is not c and dominates(o, c, quality)] for c in configs}
    frontier = [c.name for c in configs if not dominated[c.name]]
    primary = quality[0]

    def latency(c: Config) -> float:
        return c.latency_p95 if slo_percentile == "p95" and c.latency_p95 is not None else c.latency_p50

    def name(best: Config | None) -> str | None:
        return best.name if best else None

    choices = Choices(primary)
    if slo_ms is not None:
        choices.slo = SloChoice(slo_ms, slo_percentile, name(_best([c for c in configs if latency(c) <= slo_ms], primary)))
    if budget is not None:
        choices.budget = BudgetChoice(budget, name(_best([c for c in configs if c.cost <= budget], primary)))
    if slo_ms is not None and budget is not None:
        choices.slo_and_budget = BothChoice(name(_best([c for c in configs if latency(c) <= slo_ms and c.cost <= budget],
                                                       primary)))
    rows = [ConfigRow(c.name, c.family, c.k, c.cost, c.latency_p50, c.latency_p95, c.e2e_p50, c.quality,
                      efficiency(c.quality, c.latency_p50), efficiency(c.quality, c.e2e_p50) if c.e2e_p50 else None,
                      not dominated[c.name]) for c in configs]
    return ClqResult(list(quality), rows, frontier, {k: v for k, v in dominated.items() if v}, choices,
                     marginal_gains(configs, primary))


def marginal_gains(configs: list[Config], metric: str) -> list[Marginal]:
    """Per family, consecutive K: Δquality / Δlatency (per ms; end-to-end latency when every step has it)."""
    out = []
    families: dict[str, list[tuple[float, Config]]] = {}  # family → (K, configuration)
    for c in configs:
        if c.family and c.k is not None:
            families.setdefault(c.family, []).append((c.k, c))
    for family, members in sorted(families.items()):
        members.sort(key=lambda kc: kc[0])
        e2e = [c.e2e_p50 for _, c in members if c.e2e_p50 is not None]
        use_e2e = len(e2e) == len(members)
        latency = e2e if use_e2e else [c.latency_p50 for _, c in members]
        for i in range(len(members) - 1):
            (k_lo, lo), (k_hi, hi) = members[i], members[i + 1]
            d_latency = latency[i + 1] - latency[i]
            d_quality = hi.quality[metric] - lo.quality[metric]
            out.append(Marginal(family, k_lo, k_hi, metric, "e2e" if use_e2e else "retrieval", d_quality, d_latency,
                                d_quality / d_latency if d_latency else None))
    return out
