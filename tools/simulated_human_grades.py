"""SIMULATED "human" grades for the calibrate demo (README): not human labels, not data.

For ``--n`` items of a graded file, picked at random with ``--seed`` (numpy ``default_rng(seed)``,
``choice`` without replacement over the rows that have a grade), writes the grade the bundled sample
``fixtures/retrieval-response-sample/samples_graded.json`` gives the same item (id, E, Nc, Np, K).
Those grades are themselves simulated by a documented formula (see that folder's README), so the
file stands in for a human labelling session only to show how ``ragdiag calibrate`` works; the
numbers it yields say nothing about how a judge agrees with people.

    python -m tools.simulated_human_grades pick GRADED OUT.jsonl [--n 30] [--seed 0]
    python -m tools.simulated_human_grades fill to_label.csv OUT.csv   # a calibrate --suggest sheet, grade column filled
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "retrieval-response-sample" / "samples_graded.json"


def _truth() -> dict[tuple, int]:
    return {(r["id"], r["E"], r["Nc"], r["Np"], r["K"]): r["grade"] for r in json.loads(SAMPLE.read_text())}


def simulated_grades(graded: list[dict], n: int, seed: int) -> list[dict]:
    """``n`` seeded picks of ``graded`` rows (with a grade), each with the bundled sample's simulated grade."""
    truth = _truth()
    rows = [r for r in graded if r.get("grade") is not None and (r["id"], r["E"], r["Nc"], r["Np"], r["K"]) in truth]
    if n > len(rows):
        raise SystemExit(f"--n {n}: only {len(rows)} graded rows are items of the bundled sample")
    picked = sorted(np.random.default_rng(seed).choice(len(rows), n, replace=False).tolist())
    return [{"id": r["id"], "E": r["E"], "K": r["K"], "Nc": r["Nc"], "Np": r["Np"],
             "grade": truth[(r["id"], r["E"], r["Nc"], r["Np"], r["K"])]} for r in (rows[i] for i in picked)]


def filled_sheet(sheet: str) -> str:
    """A labelling sheet (``calibrate --suggest``) with its grade column set to the simulated grades."""
    truth = _truth()
    rows = list(csv.DictReader(io.StringIO(sheet)))
    for row in rows:
        row["grade"] = truth[(row["id"], row["E"], int(row["Nc"]), int(row["Np"]), int(row["K"]))]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["grade"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    pick = sub.add_parser("pick", help="simulated grades for --n seeded items of a graded file (JSONL)")
    pick.add_argument("graded", type=Path)
    pick.add_argument("out", type=Path)
    pick.add_argument("--n", type=int, default=30)
    pick.add_argument("--seed", type=int, default=0)
    fill = sub.add_parser("fill", help="a labelling sheet with its grade column filled with simulated grades")
    fill.add_argument("sheet", type=Path)
    fill.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; not overwritten")
    if args.mode == "pick":
        rows = simulated_grades(json.loads(args.graded.read_text()), args.n, args.seed)
        args.out.write_text("".join(json.dumps(row) + "\n" for row in rows))
        print(f"wrote {args.out}: {len(rows)} SIMULATED human grades (the bundled sample's simulated grades; seed {args.seed})")
    else:
        text = filled_sheet(args.sheet.read_text())
        args.out.write_text(text)
        print(f"wrote {args.out}: {args.sheet} with SIMULATED human grades (the bundled sample's simulated grades)")


if __name__ == "__main__":
    main()
