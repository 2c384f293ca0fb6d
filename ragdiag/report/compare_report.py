"""Rendering of ``ragdiag compare``: the gate's decision in words first, a table readable at 80
columns, the Markdown summary (``--summary-md``, ``$GITHUB_STEP_SUMMARY``) and the forest plot of Δ
with its interval per metric (the HTML report's figure)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ragdiag.measures.registry import label_at
from ragdiag.report import sequential_report
from ragdiag.report.plot_text import at_dpi, plain_text_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.console import Console, JustifyMethod

from ragdiag.report.safe_text import markdown_text, visible
from ragdiag.results.calibrate import BudgetPlan
from ragdiag.results.compare import CompareResult, JudgeSplit, MetricComparison, PlanEntry

WORST_SHOWN = 5


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "−")


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _count(value: int | None) -> str:
    return "no finite number" if value is None else f"{value:,}"


def _threshold(mc: MetricComparison, max_drop: float) -> str:
    """The margin on Δ's scale: −m where higher is better, +m where lower is better (0 at a zero margin)."""
    return _signed(max_drop if mc.direction == "lower" else -max_drop) if max_drop else "0"


def _gain(mc: MetricComparison, value: float) -> float:
    """A value on Δ's scale as a gain (higher is better): a regression is always a low gain."""
    return -value if mc.direction == "lower" else value


def _level(meta: dict, toward_regression: bool) -> str:
    """The level the queries needed are sized at: the family's first step for a regression, α for no regression."""
    alpha, level = meta["alpha"], meta.get("plan_alpha", meta["alpha"])
    if not toward_regression or level == alpha:
        return f"α {alpha:g}"
    step = "Holm's" if meta["correction"] == "holm" else "Benjamini–Hochberg's"
    return f"α {level:.3g} = α/{round(alpha / level)}, {step} first step"


def _needed(mc: MetricComparison, meta: dict) -> str:
    """What would decide an inconclusive metric, named for what it is: the queries at which a paired t
    test, with power --power, tells the observed Δ from the margin at the level that decision uses."""
    margin = _threshold(mc, meta["max_drop"])
    toward_regression = _gain(mc, mc.delta) < -meta["max_drop"]
    if mc.queries_needed is not None:
        shown = "beyond" if toward_regression else "within"
        return (f"about {mc.queries_needed:,} queries would show it {shown} {margin} if Δ stays {_signed(mc.delta)} "
                f"(power {meta['power']:g} at {_level(meta, toward_regression)})")
    if meta["max_drop"] == 0:
        return ("Δ is 0 to 12 significant digits, and at --max-drop 0 only a Δ shown below 0 (regression) or not "
                "below it (no regression) decides, so no number of queries decides this one; a margin above 0 "
                "(--max-drop) decides 'no worse than the margin'")
    if abs(_gain(mc, mc.delta) + meta["max_drop"]) <= 1e-12 * max(abs(mc.delta), meta["max_drop"]):
        return f"Δ equals the margin {margin} to 12 significant digits: no number of queries decides it"
    return "more than 10⁹ queries would decide it"


def _leaning(mc: MetricComparison, max_drop: float) -> str:
    """Where an inconclusive metric's interval lies, in words."""
    high = max(_gain(mc, mc.ci_low), _gain(mc, mc.ci_high))
    if high < -max_drop:
        return "likely worse than the margin"
    return "likely worse" if high < 0 else "undecided"


def metric_line(mc: MetricComparison, result: CompareResult, show: Callable[[str], str] = label_at) -> str:
    """One metric's decision in words, then the numbers that carry it."""
    if result.sequential is not None:
        return sequential_report.metric_line(mc, result, show)
    meta = result.meta
    margin = _threshold(mc, meta["max_drop"])
    where = f"{show(mc.metric)}: Δ {_signed(mc.delta)} [{_signed(mc.ci_low)}, {_signed(mc.ci_high)}]"
    worse = "above" if mc.direction == "lower" else "below"
    better = "below" if mc.direction == "lower" else "above"
    if mc.decision == "regression":
        return (f"regression — {where} lies {worse} {margin}; p {mc.p:.3g}, adjusted ({meta['correction']}) "
                f"{mc.p_adjusted:.3g} ≤ α {meta['alpha']:g}")
    if mc.decision == "no regression":
        return f"no regression — {where} lies {better} {margin} (non-inferior at that margin)"
    limit = meta["max_drop"] if mc.direction == "lower" else -meta["max_drop"]
    past = mc.ci_low > limit if mc.direction == "lower" else mc.ci_high < limit
    why = (f"lies {worse} {margin}, but the adjusted ({meta['correction']}) p {mc.p_adjusted:.3g} > α {meta['alpha']:g}"
           if past else f"straddles {margin}")  # the interval is per metric, the test corrected for the family
    return f"inconclusive — {where} {why}; {_needed(mc, meta)}"


def plan_line(entry: PlanEntry, alpha: float, show: Callable[[str], str] = label_at, max_drop: float = 0.0,
              meta: dict | None = None) -> str:
    """The planning sentence: queries needed for --mde at the level a regression is decided at, and the
    drop detectable at the current n."""
    beyond = f" ({entry.mde - max_drop:g} beyond the margin)" if max_drop > 0 else ""
    level = _level(meta, True) if meta else f"α {alpha:g}"
    return (f"plan — {show(entry.metric)}: {_count(entry.queries_needed)} queries detect a drop of {entry.mde:g}{beyond} "
            f"with power {entry.power:g} at {level} (sd of Δ {entry.sd_diff:.3f}, {entry.sd_source}); with the "
            f"{entry.n:,} queries here the detectable drop is {entry.mde_at_n:.3f}")


def headline(result: CompareResult, show: Callable[[str], str] = label_at) -> str:
    """The gate in words: FAIL with the regressed (and, under --strict, inconclusive) metrics, or PASS
    with every inconclusive metric, its Δ and interval and where it leans."""
    meta = result.meta
    bad = [show(mc.metric) for mc in result.metrics if mc.decision == "regression"]
    open_ = [mc for mc in result.metrics if mc.decision == "inconclusive"]
    if result.decision == "fail":
        strict = [show(mc.metric) for mc in open_] if meta["strict"] else []
        why = "; ".join(part for part in (f"regression in {', '.join(bad)}" if bad else "",
                                          f"inconclusive under --strict: {', '.join(strict)}" if strict else "") if part)
        return f"GATE FAIL (exit 1): {why}"
    if not open_:
        return "GATE PASS: no metric regressed"
    words = "; ".join(f"{show(mc.metric)} inconclusive, Δ {_signed(mc.delta)} [{_signed(mc.ci_low)}, "
                      f"{_signed(mc.ci_high)}], {_leaning(mc, meta['max_drop'])}" for mc in open_)
    directions = {mc.direction for mc in result.metrics}
    margin = _threshold(result.metrics[0], meta["max_drop"]) if len(directions) == 1 else f"±{meta['max_drop']:.3f}"
    return f"GATE PASS: no metric shown worse than {margin}; {words} — --strict fails on this"


def judge_line(split: JudgeSplit, show: Callable[[str], str] = label_at) -> str:
    """The judge-noise split: σ²_J named for what it sums, its interval named for how it was computed."""
    what = {1: "judge variance of one grade", 2: "judge variance of one grade, base + new"}.get(
        split.sides or 0, "judge variance of one grade, summed over the sides")
    how = f" ({split.sigma2_judge_ci_method})" if split.sigma2_judge_ci_method else ""
    return (f"judge noise — {show(split.metric)}: {what} {split.sigma2_judge:.3f} "
            f"[{split.sigma2_judge_ci[0]:.3f}, {split.sigma2_judge_ci[1]:.3f}]{how}, k = {split.k:g}: "
            f"{100 * split.judge_share:.0f}% of the variance; {split.advice} buys more precision per call "
            f"(a repeat on every query: {split.repeat_calls:,.0f} calls; a query: {split.query_calls:,.0f} calls)")


def summary_lines(result: CompareResult, show: Callable[[str], str] = label_at) -> list[str]:
    """The gate first, then one line per metric, the plan and the judge-noise split."""
    meta = result.meta
    lines = []
    if result.decision is not None:
        lines.append(headline(result, show))
        lines += [metric_line(mc, result, show) for mc in result.metrics]
    if result.sequential is not None:
        lines.append(sequential_report.stop_line(result.sequential))
    for entry in result.plan or []:
        lines.append(plan_line(entry, meta["alpha"], show, meta["max_drop"], meta))
    lines += [judge_line(split, show) for split in result.judge or []]
    if result.budget_plan is not None:
        lines += budget_lines(result.budget_plan, result.meta)
    return lines


def budget_lines(plan: BudgetPlan, meta: dict) -> list[str]:
    """--plan --budget / --target-width: the aim and prices, one line per design (what it adds, its
    predicted width with the bootstrap interval, its cost), then the pilot's variance components."""
    from ragdiag.report.calibrate_report import plan_lines

    level = f"{100 * meta['interval_level']:g}%"
    aim = f"budget {plan.budget:g}" if plan.budget is not None else f"target width {plan.target_width:g}"
    lines = [f"spend — {plan.estimand}: {aim}; a call {plan.price_call:.6g} ({meta.get('price_call_source', '--price-call')}), "
             f"a human grade {plan.price_human:g}; predicted width of the {level} interval"]
    for row in plan.designs:
        low, high = row.width_interval
        spread = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
        width = "–" if row.predicted_width is None else f"{row.predicted_width:.3f}{spread}"
        lines.append(f"spend — {row.design}: +{row.new_questions:,} questions ({row.questions:,}), {row.repeats} repeats, "
                     f"+{row.new_labels:,} labelled ({row.labels:,}) → width {width}, cost {row.cost:,.6g}")
    return lines + [f"spend — {line}" for line in plan_lines(plan)]


def names_text(result: CompareResult) -> str:
    """What was compared: ``new.trec against base.jsonl`` (--base-name / --new-name, else the file names)."""
    meta = result.meta
    base = meta.get("base_name") or meta.get("base") or "base"
    new = meta.get("new_name") or meta.get("new")
    return f"{new} against {base}" if new else f"{base}"


def alone_line(result: CompareResult) -> str:
    """A plan on one run: which run, how many queries."""
    return f"{names_text(result)} alone: {result.meta['queries']:,} queries ({result.meta['input_kind']})"


def settings_line(result: CompareResult) -> str:
    if result.sequential is not None:
        return f"{names_text(result)}: {sequential_report.settings_line(result)}"
    meta = result.meta
    dropped = meta.get("dropped") or {}
    skipped = sum(dropped.values())
    return (f"{names_text(result)}: {meta['queries']:,} paired queries ({meta['input_kind']})"
            + (f", {skipped} dropped (--allow-missing)" if skipped else "")
            + f"; test {meta['test']}, correction {meta['correction']}, α {meta['alpha']:g}, "
              f"intervals {100 * meta['interval_level']:g}%, max drop {meta['max_drop']:g}, seed {meta['seed']}")


def render(result: CompareResult, console: Console) -> None:
    """The terminal: decision lines, the table (fits 80 columns), the most regressed queries. Every
    string is printed as text (never rich markup), its control characters escaped (:func:`visible`)."""
    from rich.table import Table
    from rich.text import Text

    def say(line: str) -> None:
        console.print(Text(visible(line)), highlight=False)

    lines = summary_lines(result)
    count = 1 + len(result.metrics) if result.decision is not None else 0
    for line in lines[:count]:
        say(line)
    if result.metrics:
        from rich import box

        table = Table(title=Text(visible(settings_line(result))), title_justify="left", box=box.SIMPLE_HEAD,
                      pad_edge=False, padding=(0, 1))
        columns: tuple[tuple[str, JustifyMethod], ...] = (
            ("decision", "left"), ("metric", "left"), ("n", "right"), ("base", "right"), ("new", "right"),
            ("Δ", "right"), ("interval", "right"), ("p adj", "right"))
        for title, justify in columns:
            table.add_column(title, justify=justify, no_wrap=title != "metric", overflow="fold")
        for mc in result.metrics:
            cells = (mc.decision, label_at(mc.metric), f"{mc.n:,}", f"{mc.mean_base:.3f}", f"{mc.mean_new:.3f}",
                     _signed(mc.delta), f"{_signed(mc.ci_low)} {_signed(mc.ci_high)}", _p(mc.p_adjusted))
            table.add_row(*(Text(visible(cell)) for cell in cells))
        console.print(table)
    elif result.plan:
        say(alone_line(result))
    for line in lines[count:]:
        say(line)
    if result.worst:
        say("most regressed queries (Δ per metric): " + "; ".join(
            f"{w['query_id']} " + " ".join(_signed(v) if v is not None else "–" for v in w["delta"].values())
            for w in result.worst[:WORST_SHOWN]))


def markdown(result: CompareResult) -> str:
    """The Markdown summary: the gate in words, the table, the plan and the worst queries; every line
    and every cell escaped for Markdown and HTML on one line (:func:`markdown_text`)."""
    md = markdown_text
    lines = summary_lines(result)
    count = 1 + len(result.metrics) if result.decision is not None else 0
    out = ["## ragdiag compare", ""]
    if count:
        out += [f"**{md(lines[0])}**", ""] + [f"- {md(line)}" for line in lines[1:count]] + [""]
        out += [f"_{md(settings_line(result))}_", "", "| decision | metric | n | base | new | Δ | interval | p | p adj | d_z |",
                "|---|---|--:|--:|--:|--:|---|--:|--:|--:|"]
        for mc in result.metrics:
            d_z = "–" if mc.d_z is None else f"{mc.d_z:+.2f}".replace("-", "−")
            out.append(f"| {md(mc.decision)} | {md(label_at(mc.metric))} | {mc.n:,} | {mc.mean_base:.4f} | "
                       f"{mc.mean_new:.4f} | {_signed(mc.delta)} | \\[{_signed(mc.ci_low)}, {_signed(mc.ci_high)}\\] | "
                       f"{mc.p:.3g} | {mc.p_adjusted:.3g} | {d_z} |")
        out.append("")
    elif result.plan:
        out += [f"_{md(alone_line(result))}_", ""]
    out += [f"- {md(line)}" for line in lines[count:]]
    if result.worst:
        out += ["", "Most regressed queries: " + ", ".join(md(str(w["query_id"])) for w in result.worst[:WORST_SHOWN])]
    return "\n".join(out).rstrip() + "\n"


@plain_text_plot
def plot(result: CompareResult) -> Figure:
    """Forest plot: Δ per metric with its interval, the margin as a dashed line, colour = decision."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"regression": "#c0392b", "no regression": "#27ae60", "inconclusive": "#e67e22"}
    metrics = result.metrics
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.55 * len(metrics)), layout="constrained")
    ys = list(range(len(metrics)))[::-1]
    for y, mc in zip(ys, metrics):
        colour = colours[mc.decision]
        ax.plot([mc.ci_low, mc.ci_high], [y, y], color=colour, linewidth=2.5, solid_capstyle="butt")
        ax.plot([mc.delta], [y], "o", color=colour, markersize=7)
        margin = result.meta["max_drop"] * (1 if mc.direction == "lower" else -1)
        ax.plot([margin, margin], [y - 0.35, y + 0.35], color="grey", linestyle="--", linewidth=1)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(ys, [f"{label_at(mc.metric)}\n{mc.decision}" for mc in metrics], fontsize=8)
    ax.set_xlabel(f"Δ = new − base, {100 * result.meta['interval_level']:g}% interval; dashed: the margin "
                  f"(max drop {result.meta['max_drop']:g})")
    ax.set_title(f"compare: gate {(result.decision or '—').upper()}", fontsize=10)
    ax.set_ylim(-0.7, len(metrics) - 0.3)
    return at_dpi(fig, 110)
