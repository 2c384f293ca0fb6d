"""The certificate of ``ragdiag testset certify`` as plain text: the verdict, the systems under both
label sets, the agreement figures, the largest swap and the BM25 − dense gap."""

from __future__ import annotations

from ragdiag.results.testset import Agreement, CertifyResult, TestsetManifest, TopAgreement


def _ci(agreement: Agreement | TopAgreement) -> str:
    if agreement.value is None:
        return "undefined"
    if agreement.ci_low is None or agreement.ci_high is None:
        return f"{agreement.value:.3f}"
    return f"{agreement.value:.3f} [{agreement.ci_low:.3f}, {agreement.ci_high:.3f}]"


def certificate_text(result: CertifyResult) -> str:
    """The lines printed by ``ragdiag testset certify``."""
    meta = result.meta
    width = max(len(s.run) for s in result.systems)
    lines = [f"{meta.get('metric')} of {len(result.systems)} runs; A = {meta.get('a')} ({meta.get('queries_a')} queries), "
             f"B = {meta.get('b')} ({meta.get('queries_b')} queries); {meta.get('bootstrap')} bootstrap resamples "
             f"({'paired' if meta.get('paired') else 'each side on its own'}), seed {meta.get('seed')}", "",
             f"{'run':<{width}}  {'A':>7} {'rank':>4}  {'B':>7} {'rank':>4}"]
    for s in sorted(result.systems, key=lambda s: (s.rank_b, s.run)):
        lines.append(f"{s.run:<{width}}  {s.score_a:7.4f} {s.rank_a:4d}  {s.score_b:7.4f} {s.rank_b:4d}")
    level = round(100 * float(meta.get("level", 0.95)))
    lines += ["", f"Kendall τ            {_ci(result.tau)}" if result.tau else "",
              f"τ_AP (B reference)   {_ci(result.tau_ap)}" if result.tau_ap else ""]
    if result.top is not None:
        lines.append(f"τ among top {result.top.k} of B   {_ci(result.top)}   ({level}% percentile intervals)")
    swap = result.largest_swap
    if swap is None:
        lines.append("largest swap: none (no two systems change order)")
    else:
        lines.append(f"largest swap: {swap.run_1} vs {swap.run_2}: B {swap.delta_b:+.4f}, A {swap.delta_a:+.4f}")
    gap = result.gap
    if gap is not None:
        lines.append(f"BM25 − dense ({gap.bm25} − {gap.dense}): A {gap.a:+.4f}, B {gap.b:+.4f}"
                     + ("; A favours BM25 more than B" if gap.a > gap.b else ""))
    lines += ["", result.verdict]
    return "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1]))


def manifest_text(manifest: TestsetManifest) -> str:
    """What ``ragdiag testset`` prints: kept of sampled, each filter's count with one example, the
    calls and where the files went."""
    counts, calls = manifest.counts, manifest.calls
    lines = [f"kept {counts.get('kept')} of {counts.get('sampled')} questions ({counts.get('usable_replies')} usable replies); "
             f"qrels: {manifest.meta.get('qrels')}"]
    if manifest.unusable.get("count"):
        first = manifest.unusable["examples"][0]
        lines.append(f"  unusable replies: {manifest.unusable['count']} (e.g. document {first['doc_id']}: {first['problem']})")
    for name, entry in manifest.filters.items():
        if not entry.get("examined"):
            continue
        example = entry["examples"][0] if entry.get("examples") else None
        shown = f" (e.g. {example['question']!r}: {example['reason']})" if example else ""
        lines.append(f"  {name}: dropped {entry['flagged']} of {entry['examined']}{shown}")
    client = calls.get("client", {})
    cost = client.get("cost")
    lines.append(f"calls: {client.get('calls', 0)} sent, {client.get('cache_hits', 0)} from the cache; cost "
                 + ("n/a (a model without a price)" if cost is None else f"${cost:.4f}"))
    lines.append(f"wrote {manifest.files.get('queries')}, {manifest.files.get('qrels')}, {manifest.files.get('answers')}, "
                 f"{manifest.files.get('corpus')}, {manifest.files.get('candidates')}, {manifest.files.get('manifest')}"
                 + (f", {manifest.files['certificate']}, {manifest.files['runs']}/" if "certificate" in manifest.files else ""))
    return "\n".join(lines)
