"""``ragdiag generate``: ideal and top-K answers from an OpenAI-compatible chat model (cached).

:func:`run` checks the ranking source, the prompt settings, every input and output path and the
reference gate before any call, then runs :func:`ragdiag.pipeline.generate.run_generate` (answers
JSONL, its manifest and, with an embedder, the ranked samples, all through ``ragdiag.io.writer``,
the manifest stamped with the run record).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.pipeline.answer_plan import AnswerSettings
from ragdiag.pipeline.generate import GenerateResult
from ragdiag.pipeline.run_meta import check_coverage
from ragdiag.results.llm_run import RunManifest, RunMeta, RunSummary

__all__ = ["AnswerSettings", "ClientConfig", "GenerateRequest", "GenerateResult", "RunManifest", "RunMeta", "RunSummary",
           "check_coverage", "check_ranking_source", "run"]


@dataclass
class GenerateRequest:
    """Every option of ``generate``, parsed (``ks`` sorted)."""

    texts: str
    out: Path
    config: ClientConfig
    ks: tuple[int, ...]
    ranked: str | None = None
    dataset: str = "all"
    embedder: str | None = None
    ranked_out: Path | None = None
    degenerate_patterns: Path | None = None
    long_answer_ratio: float = 5.0
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    progress: bool = True


def check_ranking_source(ranked: str | None, embedder: str | None) -> None:
    """Exactly one of --ranked and --embedder says where the top-K comes from."""
    if (ranked is None) == (embedder is None):
        raise RagdiagError("give exactly one of --ranked FILE or --embedder EMBEDDER")


def run(request: GenerateRequest) -> GenerateResult:
    """Check, generate, write the answers and their manifest; the result holds both."""
    from ragdiag.data.reference_gate import make_gate
    from ragdiag.io.paths import check_paths
    from ragdiag.pipeline.generate import run_generate

    check_ranking_source(request.ranked, request.embedder)
    local = {"--texts": request.texts, "--ranked": request.ranked, "--degenerate-patterns": request.degenerate_patterns}
    check_paths(inputs={flag: Path(v) for flag, v in local.items() if v and Path(v).exists()},
                outputs={"--out": request.out, "--ranked-out": request.ranked_out},
                folders={"--cache-dir": request.config.cache_dir})
    gate = make_gate(request.degenerate_patterns, request.long_answer_ratio)
    if request.embedder is not None:  # ranking comes first: its keys and the servers before it
        from ragdiag.remote.preflight import preflight

        preflight(embedders=[request.embedder], llm_base_url=request.config.base_url, cache_mode=request.config.cache)
    return run_generate(request.texts, request.ranked, list(request.ks), request.dataset, request.out, request.config,
                        request.embedder, request.ranked_out, request.progress, gate=gate, settings=request.answer)
