"""Demo inputs for the judge-noise correction and ``ragdiag calibrate`` (README): SIMULATED, not data.

Takes the bundled sample's rows of subset M (their grades are themselves simulated, see
fixtures/retrieval-response-sample/README.md) as the "true" quality, and writes

* ``graded.json``: each row judged three times by a simulated judge — round(true + 0.6 + N(0, 0.9)),
  clipped to 1–5 (a lenient, noisy judge); ``grade`` is the mean of the three, as ``grade --repeats 3``;
* ``human.jsonl``: "human" grades (the true grade, rounded) for ``--labelled`` random rows.

Every row of both files carries ``"simulated_grades": true``: ragdiag labels what it computes from
them as simulated.

    python tools/judge_noise_demo.py OUT_DIR [--labelled 120] [--seed 0]

``--fill SHEET`` instead plays the human on a ``calibrate --suggest`` sheet: it writes
``OUT_DIR/filled.jsonl``, the sheet's rows (with how they were drawn) graded with the true grade,
rounded, each marked ``"simulated_grades": true``.

    python tools/judge_noise_demo.py OUT_DIR --fill SHEET
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "retrieval-response-sample" / "samples_graded.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--labelled", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fill", type=Path, help="a --suggest sheet to grade with the simulated truth")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = [r for r in json.loads(SAMPLE.read_text()) if r["id"].startswith("M-")]
    if args.fill:
        fill(rows, args.fill, args.out_dir / "filled.jsonl")
        return
    truth = np.array([r["grade"] for r in rows], dtype=np.float64)
    judged = np.clip(np.round(truth[:, None] + 0.6 + rng.normal(0, 0.9, (len(rows), 3))), 1, 5).astype(int)
    for row, grades in zip(rows, judged.tolist(), strict=True):
        row["grades"], row["grade"] = grades, float(np.mean(grades))
        row["simulated_grades"] = True
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "graded.json").write_text(json.dumps(rows))
    picked = rng.choice(len(rows), args.labelled, replace=False)
    lines = [json.dumps({"id": rows[i]["id"], "E": rows[i]["E"], "K": rows[i]["K"], "Nc": rows[i]["Nc"],
                         "Np": rows[i]["Np"], "grade": int(np.clip(np.round(truth[i]), 1, 5)),
                         "simulated_grades": True}) for i in sorted(picked)]
    (args.out_dir / "human.jsonl").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out_dir}/graded.json ({len(rows)} rows, 3 simulated judge grades each) and "
          f"{args.out_dir}/human.jsonl ({args.labelled} simulated human grades)")


def fill(rows: list[dict], sheet: Path, out: Path) -> None:
    """The sheet's rows with the true grade (rounded) as the "human" grade, as JSON lines."""
    truth = {(r["id"], r["E"], str(r["K"]), str(r["Nc"]), str(r["Np"])): r["grade"] for r in rows}
    with sheet.open(newline="", encoding="utf-8") as handle:
        drawn = list(csv.DictReader(handle))
    keep = ("id", "E", "K", "Nc", "Np", "strategy", "strata", "stratum", "sampling_probability", "seed")
    lines = [json.dumps({k: row[k] for k in keep if k in row}
                        | {"grade": int(np.clip(np.round(truth[row["id"], row["E"], row["K"], row["Nc"], row["Np"]]),
                                                1, 5)), "simulated_grades": True}) for row in drawn]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out} ({len(lines)} simulated human grades for the rows of {sheet})")


if __name__ == "__main__":
    main()
