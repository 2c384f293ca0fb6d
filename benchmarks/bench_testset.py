"""``testset certify`` on SciFact and on the MS MARCO passage sample: the human qrels against
themselves and against qrels degraded in known ways, over real BM25 configurations (bm25s; stemming
on/off, Lucene/Okapi, k1/b variants, no length normalisation, passages truncated to 32 words, two RRF
fusions; SciFact adds title-only and body-only, the MS MARCO sample, which has no titles, a
16-word truncation). Dense and hybrid runs are left out: the local embedder (all-MiniLM-L6-v2 on the
CPU) embedded 384 MS MARCO passages in 99 s on this shared 2-core machine, about 50 minutes for the
sample's 11,809 passages (SciFact's 5,183 longer abstracts: longer still).

Degradations (``tests/testset/scifact_runs.degraded_qrels``): ``drop`` relabels a share of the
relevant pairs 0 (the query stays judged), ``random`` gives a share of the queries as many random
passages as they had relevant ones. Two seeds each; τ, τ_AP and τ among the top 5 (of the human
ordering) of nDCG@10, with 200 paired bootstrap resamples for τ's interval (seed 0).

MS MARCO's human qrels are its dev-small qrels (``qrels/dev.tsv``: binary, one or two relevant
passages per query).

Usage: python benchmarks/bench_testset.py [--data DIR] [--dataset scifact|msmarco|all]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import dataset
from _report import ROOT, write_section

sys.path.insert(0, str(ROOT))
SEEDS = (0, 1)
GRID = [("drop", s) for s in (0.25, 0.5, 0.75, 0.9)] + [("random", s) for s in (0.1, 0.25, 0.5, 0.75, 1.0)]


DATASETS = {"scifact": ("testset", "SciFact", "300 test queries", Path("qrels/test.tsv")),
            "msmarco": ("testset-msmarco", "the MS MARCO passage sample", "dev-small queries", Path("qrels/dev.tsv"))}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", choices=[*DATASETS, "all"], default="all")
    chosen = parser.parse_known_args()[0].dataset
    for name in DATASETS if chosen == "all" else [chosen]:
        run_dataset(name)


def run_dataset(name: str) -> None:
    from ragdiag.testset.certify import CertifyOptions, certify, score_runs
    from tests.testset.scifact_runs import build_runs, degraded_qrels

    section, title, what, qrels_rel = DATASETS[name]
    folder = dataset(name)
    human_qrels = folder / qrels_rel
    started = time.perf_counter()
    options = CertifyOptions(top=5, bootstrap=200, seed=0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = build_runs(folder, Path(tmp), human_qrels)
        names = [p.stem for p in runs]
        human = score_runs(human_qrels, runs, options, "--b")
        built = time.perf_counter() - started
        cells = [("none", 0.0, 0)] + [(kind, share, seed) for kind, share in GRID for seed in SEEDS]
        for kind, share, seed in cells:
            qrels = human_qrels if kind == "none" else degraded_qrels(folder, Path(tmp), kind, share, seed, human_qrels)
            result = certify(names, score_runs(qrels, runs, options, "--a"), human, options, {})
            rows.append((kind, share, seed, result))
            print(kind, share, seed, result.tau.value if result.tau else None, flush=True)
    total = time.perf_counter() - started

    def cell(value: float | None) -> str:
        return "undefined" if value is None else f"{value:.3f}"

    lines = [f"## testset certify: {title} human qrels against degraded copies (`benchmarks/bench_testset.py --dataset {name}`)", "",
             f"{len(runs)} BM25 configurations over {title}'s {len(human.query_ids)} {what} ({', '.join(names)}); nDCG@10; "
             f"B = the human qrels, A = the degraded copy. Wall time {total:.0f} s "
             f"(building the runs {built:.0f} s).", "",
             "| A | seed | τ | τ 95% interval | τ_AP | τ among top 5 | largest swap (Δ under B) |",
             "|---|---|---|---|---|---|---|"]
    for kind, share, seed, r in rows:
        what = "human qrels themselves" if kind == "none" else (
            f"{share:.0%} of relevant pairs dropped" if kind == "drop" else f"{share:.0%} of queries with random labels")
        swap = "none" if r.largest_swap is None else f"{r.largest_swap.run_1} / {r.largest_swap.run_2} ({r.largest_swap.delta_b:+.3f})"
        assert r.tau is not None and r.tau_ap is not None and r.top is not None
        lines.append(f"| {what} | {seed} | {cell(r.tau.value)} | [{cell(r.tau.ci_low)}, {cell(r.tau.ci_high)}] | "
                     f"{cell(r.tau_ap.value)} | {cell(r.top.value)} | {swap} |")
    top = sorted(human.values.mean(axis=0), reverse=True)[:5]
    lines += ["", f"The top 5 systems under the human qrels lie within {top[0] - top[-1]:.3f} nDCG@10 of each other. "
              "A percentile interval can lie below a τ near 1: resampled queries break near-ties between systems."]
    write_section(section, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
