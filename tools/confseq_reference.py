"""Reference bounds from confseq's betting confidence sequences, for tests/compare/test_sequential.py.

confseq 0.0.11 (Howard & Waudby-Smith, MIT licence) no longer builds on Python 3.11 (its C++ part pins
an old pybind11), so ragdiag implements the betting sequence itself and checks it against confseq's
pure-Python ``betting_lower_cs``, run here in a separate environment:

    python -m venv /tmp/confseq-env && /tmp/confseq-env/bin/pip install "numpy<2" scipy matplotlib multiprocess
    pip download --no-deps --no-binary :all: confseq==0.0.11 -d /tmp/confseq && tar xzf /tmp/confseq/confseq-0.0.11.tar.gz -C /tmp/confseq
    /tmp/confseq-env/bin/python tools/confseq_reference.py --confseq-src /tmp/confseq/confseq-0.0.11/src \
        --out tests/compare/data/confseq_betting_reference.json

The sequences are seeded draws on [0, 1]; the upper bound is 1 − the lower bound of 1 − x (the hedged
process's negative side is the positive side of the mirrored data).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

CASES = (("beta(2,3)", 0.05), ("beta(2,3)", 0.1), ("bernoulli(0.3)", 0.05), ("uniform", 0.05), ("beta(8,2)", 0.01))
N = 200


def draw(name: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "beta(2,3)":
        return rng.beta(2, 3, N)
    if name == "beta(8,2)":
        return rng.beta(8, 2, N)
    if name == "bernoulli(0.3)":
        return (rng.random(N) < 0.3).astype(float)
    return rng.random(N)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--confseq-src", required=True, help="the src/ folder of confseq's source distribution")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.confseq_src)
    from confseq.betting import betting_lower_cs

    cases = []
    for seed, (name, alpha) in enumerate(CASES):
        x = draw(name, seed)
        lower = np.maximum.accumulate(betting_lower_cs(x, alpha=alpha, breaks=1000))
        upper = 1 - np.maximum.accumulate(betting_lower_cs(1 - x, alpha=alpha, breaks=1000))
        cases.append({"distribution": name, "seed": seed, "alpha": alpha, "x": x.tolist(),
                      "lower": lower.tolist(), "upper": upper.tolist()})
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"source": "confseq 0.0.11 betting_lower_cs (breaks=1000, running intersection)", "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
