"""Run every benchmark in this folder (files named bench_*.py), one after the other."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    for script in sorted(here.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        runpy.run_path(str(script), run_name="__main__")
