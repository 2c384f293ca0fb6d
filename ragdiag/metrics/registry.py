"""The retrieval measures ``ragdiag correlate`` can correlate with the grade, each registered once.

One entry per measure (paper 003, eqs. 1–4; docs/methods.md#2-per-sample-measures): its name (the
``--measures`` choice and the JSON ``measure``), label, direction (higher is better for all),
parameters (α: maximised over the α grid; x: the ``--xk`` sibling ranking), the one-line help and
the legend line printed under the verdict. The ``--measures`` help and its choices, the parser, the
legend and the report labels derive from here. Import-light (no numpy): ``ragdiag --help`` imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragdiag.io.lists import parse_choices


@dataclass(frozen=True)
class Measure:
    name: str
    label: str
    direction: str  # "higher" or "lower" is better
    parameters: tuple[str, ...]  # "alpha": maximised over the α grid; "xk": needs the x·K sibling ranking
    help: str  # one line
    legend: str  # the line under the verdict (symbols as in LEGEND_SYMBOLS)
    choice_note: str = ""  # said beside the name in the --measures help

    @property
    def over_alpha(self) -> bool:
        return "alpha" in self.parameters


LEGEND_SYMBOLS = ("n = relevant passages in the top K, K = passages given to the generator, "
                  "Np = all relevant passages")

REGISTRY: tuple[Measure, ...] = (
    Measure("F", "F(α)", "higher", ("alpha",), "F(α) = n/(α·K + (1−α)·Np), α = 0 recall, α = 1 precision",
            "F(α) = n / (α·K + (1−α)·Np), Van Rijsbergen's F: α = 0 is recall n/Np, α = 1 is precision n/K"),
    Measure("E", "E(α)", "higher", ("alpha", "xk"), "E = F with Np estimated from the ranking (relevant passages in the top x·K)",
            "E(α) = F with Np estimated from the ranking (S = relevant passages in the top x·K, --xk): "
            "needs no count of all relevant passages"),
    Measure("T", "T(α)", "higher", ("alpha",), "T(α) = (1−α)·n − α·(K−n)/K",
            "T(α) = (1−α)·n − α·(K−n)/K, the TopK measure: α = 0 counts relevant passages in the top K, "
            "α → 1 penalises irrelevant ones"),
    Measure("T'", "T′(α)", "higher", ("alpha",), "T′(α) = (1−α)·n − α·(K−n)",
            "T′(α) = (1−α)·n − α·(K−n), T without the 1/K on the irrelevant passages (paper 003, eq. 4)",
            choice_note=" (paper 003 eq. 4: T without the 1/K; quote it in a shell)"),
    Measure("nDCG", "nDCG@K", "higher", (), "nDCG@K",
            "nDCG@K: relevant passages near the top count more (ideal: the n retrieved ones first)"),
    Measure("P", "P@K", "higher", (), "P = n/K (precision@K)",
            "P = n/K, precision@K: the share of the K passages that are relevant"),
    Measure("R", "R@K", "higher", (), "R = n/Np (recall@K)",
            "R = n/Np, recall@K: the share of all relevant passages that reach the top K"),
)

BY_NAME: dict[str, Measure] = {m.name: m for m in REGISTRY}
NAMES: tuple[str, ...] = tuple(BY_NAME)
ALPHA_MEASURES: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.over_alpha)
PLAIN_MEASURES: tuple[str, ...] = tuple(m.name for m in REGISTRY if not m.over_alpha)
DEFAULT_MEASURES: tuple[str, ...] = ("F", "E", "T", "nDCG")
DEFAULT_MEASURES_TEXT = ",".join(DEFAULT_MEASURES)
MEASURES_DEFINED = f"Measures ({LEGEND_SYMBOLS}): " + "; ".join(m.help for m in REGISTRY) + "."
MEASURES_HELP = ("Comma list of " + ", ".join(m.name + m.choice_note for m in REGISTRY)
                 + " (defined in the command's help above).")


def parse_measures(spec: str) -> tuple[str, ...]:
    """``"F,T"`` → ("F", "T"); every name must be registered (the ``--measures`` check)."""
    return tuple(parse_choices(spec, NAMES, "measure", "--measures"))


def legend(names: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """(name, legend line) for each registered measure of ``names``, in that order."""
    return [(name, BY_NAME[name].legend) for name in names if name in BY_NAME]
