"""The shared option vocabulary, one home: one name, one help text, one default, one range and one
help panel per concept. A command imports it as ``from ragdiag.cli import options as o`` and
declares ``k: o.K = o.DEFAULT_K``.

- :mod:`.declare` — panels (Input, Retrieval, LLM, Statistics, Output, Options), metavars, checked
  ranges, and :func:`retold` / :func:`with_note` / :func:`given` (a shared declaration in a command's
  own words: ``Annotated[Optional[Path], o.retold(o.Qrels, "With --corpus: ...")]``);
- :mod:`.choices` — closed choices (``str`` enums) and the default of each concept;
- :mod:`.shared` — inputs, retrieval, statistics and outputs;
- :mod:`.llm` — the LLM client, answer, grading and engine options and their groups;
- :mod:`.reading` — how a user's files are read: ``--fields`` and the ``--…-field`` / ``--…-format`` options.

Conventions: one cut-off is ``--k`` (INTEGER), several ``--ks`` (comma list); a file written is
``--out``, a folder ``--out-dir``; a PNG is ``--plot``, a folder of plots ``--plot-dir``; a BEIR
queries file is ``--queries``, a ``.npy`` of query vectors ``--query-vectors``; closed choices are
``str`` enums; numeric options carry a range checked before any work, and floats reject nan and
±inf. A flag is declared here once (``tests/cli/test_shared_options.py``).
"""

from __future__ import annotations

from ragdiag.cli.options.choices import *  # noqa: F403
from ragdiag.cli.options.declare import *  # noqa: F403
from ragdiag.cli.options.llm import *  # noqa: F403
from ragdiag.cli.options.reading import *  # noqa: F403
from ragdiag.cli.options.shared import *  # noqa: F403
