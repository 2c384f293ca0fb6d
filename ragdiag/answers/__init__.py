"""The one LLM answer and judge engine: prompts in, typed objects out; it writes no file.

Used by ``generate``, ``grade``, ``label``, ``pipeline``, ``sweep`` and ``triage`` (the ``commands/``
modules read the inputs, call this package, then write and stamp). Every call goes through the
cached client (:mod:`ragdiag.llm.client`), whose cache under ``remote/`` persists the replies — the
one thing this package causes to be stored.

- :mod:`.plan` — how a generation call is built (language, prompt budget);
- :mod:`.generation` — ideal and top-K answers of ranked samples;
- :mod:`.judging` — the 1–5 judge (digit or logprobs), the reference gate's counts;
- :mod:`.answers_file` — the answers file of ``generate`` read and checked for ``grade``;
- :mod:`.contexts` — answers and grades per distinct retrieval context (sweep, triage);
- :mod:`.labelling`, :mod:`.listwise`, :mod:`.refine` — the utility judge of ``label``;
- :mod:`.grade_parse`, :mod:`.agreement` — strict grade parsing, inter-judge agreement;
- :mod:`.runs` — one generate run and one grade run as computations (typed outcomes);
- :mod:`.run_stats` — the meta block, the server details and the call summary of a run.

``tests/answers/test_engine_writes_nothing.py`` holds the package to that: no file write, no run record.
"""
