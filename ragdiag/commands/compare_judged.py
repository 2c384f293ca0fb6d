"""``ragdiag compare --sequential --texts T --base-ranked A --new-ranked B --k K``: the judged loop (or
``--base-ranked A --new-model M``: two models answering from the same passages; ``--new-prompt P``: two generation
prompts; or ``--corpus C
--base-retriever R1 --new-retriever R2``: two retrievers on one corpus, each ranking computed once before any call).

Checks every option, input and output before any call, reads the texts and both rankings, runs
:func:`ragdiag.compare.judged.judged_loop` (answers and grades batch by batch until the gate decides),
writes ``--out`` / ``--summary-md`` and stamps the run record. Math: :mod:`ragdiag.compare.sequential_gate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragdiag.compare.checks import check_names, check_options, side_names
from ragdiag.compare.gate import GateOptions
from ragdiag.compare.judged import JudgedModels, JudgedOptions, JudgedSides, judged_loop
from ragdiag.compare.judged_corpus import CorpusSource
from ragdiag.compare.judged_prompt import side_prompt
from ragdiag.compare.sequential_gate import SequentialOptions
from ragdiag.compare.step_summary import STEP_SUMMARY, step_summary_path, summary_writes
from ragdiag.errors import RagdiagError
from ragdiag.llm.client import ClientConfig
from ragdiag.llm.prompts import Prompt
from ragdiag.results.compare import CompareResult

__all__ = ["CorpusSource", "JudgedOptions", "JudgedRequest", "run"]

BATCH_MAX = 10_000
MODEL_NAME_MAX = 200


@dataclass
class JudgedRequest:
    texts: Path | None  # None with --corpus
    base_ranked: Path | None  # None with --corpus
    new_ranked: Path | None  # None: the new side answers from --base-ranked's passages (with --new-model)
    k: int
    config: ClientConfig
    options: GateOptions
    sequential: SequentialOptions
    judged: JudgedOptions
    out: Path | None = None
    summary_md: Path | None = None
    base_name: str | None = None
    new_name: str | None = None
    new_model: str | None = None  # --new-model: the model answering the new side (default --model)
    judge_model: str | None = None  # --judge-model: the model writing the ideal answers and grading (default --model)
    corpus: CorpusSource | None = None  # --corpus: two retrievers on one corpus instead of the three files
    base_prompt: str | None = None  # --base-prompt: a bundled prompt id or a TOML file (default: the bundled one)
    new_prompt: str | None = None  # --new-prompt: the same for the new side
    prompts: tuple[Prompt | None, Prompt | None] = (None, None)  # both resolved by _check, before any call

    def prompt_ids(self) -> tuple[str, str]:
        """Each side's generation prompt id (a file's carries its SHA-256); the default: the bundled ones."""
        default = "/".join(self.judged.answer.prompt_ids().values())
        base, new = self.prompts
        return base.id if base else default, new.id if new else default

    def prompt_files(self) -> list[Path]:
        return [Path(spec) for spec, prompt in zip((self.base_prompt, self.new_prompt), self.prompts)
                if spec is not None and prompt is not None and prompt.digest]

    @property
    def inputs(self) -> list[Path]:
        if self.corpus is not None:
            return [*(p for p in (self.corpus.corpus, self.corpus.queries, self.corpus.qrels) if p is not None),
                    *self.prompt_files()]
        assert self.texts is not None and self.base_ranked is not None
        return [self.texts, self.base_ranked, *([] if self.new_ranked is None else [self.new_ranked]),
                *self.prompt_files()]

    @property
    def new_side_ranked(self) -> Path:
        """The new side's ranked file: --new-ranked, else --base-ranked."""
        assert self.base_ranked is not None
        return self.base_ranked if self.new_ranked is None else self.new_ranked

    def sources(self) -> tuple[str, str]:
        """What each side answers from: its ranked file, or its retriever spec (with --corpus)."""
        if self.corpus is not None:
            base, new = self.corpus.specs()
            return base.text, new.text
        return str(self.base_ranked), str(self.new_side_ranked)

    def side_names(self) -> tuple[str, str]:
        """--base-name / --new-name; else what differs, joined by `` · ``: the file (or retriever) names, the model
        names, the prompt ids (the model names when nothing differs at all)."""
        config, new_model = self.config, self.new_model or self.config.model
        base_prompt, new_prompt = self.prompt_ids()
        parts: list[tuple[str, str]] = []
        if self.corpus is not None:
            base, new = self.sources()
            if base != new:
                parts.append((base, new))
        else:
            assert self.base_ranked is not None
            if self.base_ranked.resolve() != self.new_side_ranked.resolve():
                base, named = side_names(self.base_ranked, self.new_side_ranked, None, None)
                assert named is not None
                parts.append((base, named))
        if new_model != config.model or not parts and base_prompt == new_prompt:
            parts.append((config.model, new_model))
        if base_prompt != new_prompt:
            parts.append((base_prompt, new_prompt))
        return (self.base_name or " · ".join(b for b, _ in parts), self.new_name or " · ".join(n for _, n in parts))


def _check(request: JudgedRequest) -> None:
    from ragdiag.io.paths import check_paths

    check_options(request.options)
    check_names(request.base_name, request.new_name)
    j, seq = request.judged, request.sequential
    if not 1 <= j.batch_size <= BATCH_MAX:
        raise RagdiagError(f"--batch-size must be in 1–{BATCH_MAX}, got {j.batch_size}")
    if j.batch_size % seq.look_every:
        raise RagdiagError(f"--batch-size {j.batch_size} must be a multiple of --look-every {seq.look_every} (the gate "
                           "looks only at the ends of its batches)")
    if j.max_calls is not None and j.max_calls < 0:
        raise RagdiagError(f"--max-calls must be at least 0, got {j.max_calls}")
    for flag, model in (("--new-model", request.new_model), ("--judge-model", request.judge_model)):
        if model is not None and (not model.strip() or len(model) > MODEL_NAME_MAX or not model.isprintable()):
            raise RagdiagError(f"{flag} {model!r}: expected a model name of 1–{MODEL_NAME_MAX} printable characters")
    request.prompts = (None if request.base_prompt is None else side_prompt(request.base_prompt, "--base-prompt"),
                       None if request.new_prompt is None else side_prompt(request.new_prompt, "--new-prompt"))
    same_model = request.new_model is None or request.new_model == request.config.model
    base_prompt, new_prompt = request.prompt_ids()
    same = same_model and base_prompt == new_prompt
    other = (f"--new-model (another model than --model {request.config.model}) or --new-prompt (another prompt than "
             f"{base_prompt})")
    if request.corpus is not None:
        base, new = request.sources()  # both specs parsed: a malformed one refused here
        if base == new and same:
            raise RagdiagError(f"the two sides are the same retriever ({base}) answered by the same model with the same "
                               f"prompt: give --new-retriever (another retriever), {other}")
    else:
        assert request.base_ranked is not None
        same_ranking = request.new_ranked is None or request.new_ranked.resolve() == request.base_ranked.resolve()
        if same_ranking and same:
            raise RagdiagError("the two sides are the same ranking answered by the same model with the same prompt: "
                               f"give --new-ranked (another ranking), {other}")
    if seq.bounds is not None or seq.order_col is not None:
        raise RagdiagError("the judged loop grades on the 1–5 scale in a seeded random order: leave out --bounds and "
                           "--order-col")
    c = request.corpus
    given = ({"--texts": request.texts, "--base-ranked": request.base_ranked, "--new-ranked": request.new_ranked}
             if c is None else {"--corpus": c.corpus, "--queries": c.queries, "--qrels": c.qrels})
    inputs = {flag: path for flag, path in given.items() if path is not None}
    check_paths(inputs=inputs, outputs={"--out": request.out, "--summary-md": request.summary_md},
                folders={"--cache-dir": request.config.cache_dir})
    step = step_summary_path()
    if step is not None:  # checked alone: it may be the --summary-md file (written once)
        check_paths(inputs=inputs, outputs={f"${STEP_SUMMARY}": step})
    for flag, path in inputs.items():
        if not path.is_file() and not (flag == "--corpus" and path.is_dir()):
            raise RagdiagError(f"{flag} {path}: no such file")


def run(request: JudgedRequest, notice: Callable[[str], None]) -> CompareResult:
    """Check, read, judge until decided, write; the result carries its run record."""
    from ragdiag.data.texts_ranked_loaders import load_ranked, load_texts
    from ragdiag.io.run_record import start_run
    from ragdiag.io.writer import guard_outputs, write_json, write_text
    from ragdiag.report.compare_report import markdown

    _check(request)
    guard_outputs([p for p in (request.out, request.summary_md) if p is not None], request.inputs)
    o, config, k = request.options, request.config, request.k
    models = JudgedModels.of(config, request.new_model, request.judge_model, *request.prompts)
    record = start_run("ragdiag compare", inputs=request.inputs,
                       models={"llm": list(dict.fromkeys([config.model, models.new.model, models.judge.model]))},
                       seeds={"compare": o.seed, "llm": config.seed}, cache=config.cache)
    judged: dict[str, object] = {"texts": None if request.texts is None else str(request.texts), "k": k,
                                 "model": config.model, "new_model": models.new.model, "judge_model": models.judge.model}
    judged["base_prompt"], judged["new_prompt"] = request.prompt_ids()
    if request.corpus is not None:
        from ragdiag.compare.judged_corpus import corpus_sides

        sides, files = corpus_sides(request.corpus, k, config.cache_dir, config.seed, request.judged.progress, notice)
        base_retriever, new_retriever = request.sources()
        judged.update({"corpus": {what: str(path) for what, path in files.items()},
                       "base_retriever": base_retriever, "new_retriever": new_retriever})
    else:
        dataset = request.judged.dataset
        base_ranked = load_ranked(str(request.base_ranked), dataset)
        new_ranked = base_ranked if request.new_ranked is None else load_ranked(str(request.new_ranked), dataset)
        sides = JudgedSides(load_texts(str(request.texts), dataset), base_ranked, new_ranked, k)
    base_name, new_name = request.side_names()
    base_source, new_source = request.sources()
    meta = {"command": "ragdiag compare", "base": base_source, "new": new_source,
            "base_name": base_name, "new_name": new_name, "qrels": None, "input_kind": "graded",
            "queries": 0, "dropped": {"base_only": 0, "new_only": 0}, "test": o.test, "correction": o.correction,
            "alpha": o.alpha, "interval_level": 1 - 2 * o.alpha, "max_drop": o.max_drop, "seed": o.seed,
            "strict": o.strict, "power": o.power, "mde": None, "sequential": True, "judged": judged}
    if judged["base_prompt"] != judged["new_prompt"]:
        notice(f"two generation prompts answer: base {judged['base_prompt']}, new {judged['new_prompt']}; the ideal "
               f"answers use the bundled generation prompt and {models.judge.model} grades both sides against them")
    result = judged_loop(sides, models, o, request.sequential, request.judged, meta, notice)
    result.run_record = record.to_json()
    if request.out is not None:
        write_json(request.out, result.to_json(), inputs=request.inputs)
    for path, text in summary_writes(markdown(result), request.summary_md):
        write_text(path, text, inputs=request.inputs)
    return result
