"""Rendering of ``compare --sequential``: each metric's decision with the look it was reached at,
the replay in one line, and the confidence sequences drawn against the number of queries read."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ragdiag.measures.registry import label_at
from ragdiag.report.plot_text import at_dpi, plain_text_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from ragdiag.results.compare import CompareResult, MetricComparison, MetricSequence, SequentialRun


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "−")


def _of(result: CompareResult, metric: str) -> MetricSequence:
    assert result.sequential is not None
    return next(s for s in result.sequential.metrics if s.metric == metric)


def metric_line(mc: MetricComparison, result: CompareResult, show: Callable[[str], str] = label_at) -> str:
    """One metric's sequential decision in words: where the confidence sequence ended, and when it decided."""
    seq = _of(result, mc.metric)
    run = result.sequential
    assert run is not None
    alpha = result.meta["alpha"]
    margin = _signed(result.meta["max_drop"] if mc.direction == "lower" else -result.meta["max_drop"])
    where = f"{show(mc.metric)}: Δ {_signed(mc.delta)} [{_signed(mc.ci_low)}, {_signed(mc.ci_high)}] after {mc.n:,} queries"
    if seq.decision == "regression":
        return (f"regression — {where}; decided at query {seq.decided_at:,} (e-Holm e-value "
                f"{seq.e_regression:.3g} ≥ 1/α = {1 / alpha:g}): worse than {margin}")
    if seq.decision == "no regression":
        return (f"no regression — {where}; decided at query {seq.decided_at:,} (e-Holm e-value "
                f"{seq.e_no_regression:.3g} ≥ 1/α = {1 / alpha:g}): not worse than {margin}")
    return (f"inconclusive — {where}: the sequence still holds {margin} after all {run.stopped_at:,} queries read "
            f"(largest e-value {max(seq.e_regression, seq.e_no_regression):.3g} < 1/α = {1 / alpha:g})")


def settings_line(result: CompareResult) -> str:
    run = result.sequential
    assert run is not None
    meta = result.meta
    bounds = (f", values in [{run.bounds[0]:g}, {run.bounds[1]:g}]" if run.sequence == "betting" and run.bounds
              else f", first look after {run.burn_in} queries")
    return (f"sequential: {run.sequence} confidence sequences{bounds}, e-Holm across {len(run.metrics)} metrics; "
            f"{run.order} order, a look every {run.look_every} {'query' if run.look_every == 1 else 'queries'}; stopped after {run.stopped_at:,} of "
            f"{run.available:,} paired queries ({meta['input_kind']}); α {meta['alpha']:g} per side, max drop "
            f"{meta['max_drop']:g}")


def stop_line(run: SequentialRun) -> str:
    """How much of the fixed plan the replay needed."""
    saved = run.available - run.stopped_at
    if saved <= 0:
        line = f"every metric needed all {run.available:,} queries (none saved by stopping early)"
    elif not all(m.decided_at is not None for m in run.metrics):
        line = f"stopped after {run.stopped_at:,} of {run.available:,} queries, not every metric decided"
    else:
        line = (f"stopped after {run.stopped_at:,} of {run.available:,} queries: every metric was decided; "
                f"{saved:,} queries ({100 * saved / run.available:.0f}%) need not be judged")
    return line if run.calls is None else f"{line}. {calls_line(run.calls, run.available)}"


def calls_line(calls: dict, available: int) -> str:
    """The judged loop's LLM calls: paid, answered by the cache, and the requests judging every question makes beyond them."""
    cap = "" if calls.get("stopped_by") != "max-calls" else f" (stopped by --max-calls {calls['max_calls']})"
    return (f"LLM calls: {calls['paid']:,} paid, {calls['from_cache']:,} answered by the cache "
            f"({calls['requests']:,} requests for {calls['questions_judged']:,} questions judged{cap}); the fixed plan "
            f"(all {available:,}) asks about {calls['fixed_plan']:,}: {calls['saved']:,} requests saved, each a paid "
            "call unless the cache holds it")


@plain_text_plot
def plot(result: CompareResult) -> Figure:
    """Per metric: the running confidence sequence of Δ against the queries read, the margin dashed,
    the look where it decided marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = result.sequential
    assert run is not None
    styles = {"regression": "-", "no regression": "--", "inconclusive": ":"}
    palette = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    for index, (seq, mc) in enumerate(zip(run.metrics, result.metrics)):
        xs = [n for n, lo, hi in zip(seq.n, seq.lower, seq.upper) if lo is not None and hi is not None]
        lows = [lo for lo, hi in zip(seq.lower, seq.upper) if lo is not None and hi is not None]
        highs = [hi for lo, hi in zip(seq.lower, seq.upper) if lo is not None and hi is not None]
        colour = palette(index % 10)
        ax.plot(xs, lows, linewidth=1.5, color=colour, linestyle=styles[seq.decision],
                label=f"{label_at(seq.metric)}: {seq.decision}"
                      + (f" at query {seq.decided_at}" if seq.decided_at is not None else ""))
        ax.plot(xs, highs, linewidth=1.5, color=colour, linestyle=styles[seq.decision])
        ax.fill_between(xs, lows, highs, color=colour, alpha=0.08)
        if seq.decided_at is not None and seq.decided_at in xs:  # the bound that crossed the margin
            upper_crossed = (seq.decision == "regression") == (mc.direction == "higher")
            ax.plot([seq.decided_at], [(highs if upper_crossed else lows)[xs.index(seq.decided_at)]], "o",
                    color=colour, markersize=5)
        margin = result.meta["max_drop"] * (1 if mc.direction == "lower" else -1)
        ax.axhline(margin, color="grey", linestyle="--", linewidth=1)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("queries read (seeded random order)" if run.order.startswith("random") else f"queries read ({run.order})")
    ax.set_ylabel(f"Δ = new − base, {100 * result.meta['interval_level']:g}% sequence")
    ax.set_title(f"compare --sequential: gate {(result.decision or '—').upper()}; grey dashed: the margin; "
                 "dot: the look that decided", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return at_dpi(fig, 110)
