"""python -m benchmarks.scale --preset paper [--out DIR] [--seed 0]: generate, then print the counts."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import __doc__ as PACKAGE_DOC
from .data import DataError
from .presets import PRESETS

ROOT = Path(__file__).resolve().parents[2]


def summary(counts: dict) -> list[str]:
    """The counts as the lines the CLI prints."""
    u = counts["umls"]
    lines = [f"umls: concepts={u['concepts']} " + " ".join(f"{k}={v}" for k, v in u["rows"].items()),
             "      atoms by LAT: " + " ".join(f"{k}={v}" for k, v in u["atoms_by_lat"].items()),
             "      concepts by group: " + " ".join(f"{k}={v}" for k, v in u["concepts_by_group"].items())]
    for task, by_lang in counts["questions"].items():
        lines.append(f"questions {task}: " + " ".join(f"{k}={v}" for k, v in by_lang.items()))
    lines.append(f"questions total={counts['questions_total']} deliberate duplicates: "
                 + " ".join(f"{k}={v}" for k, v in counts["deliberate_duplicates"].items()))
    lines.append("passages: " + " ".join(f"{k}={v}" for k, v in counts["passages"].items()))
    m = counts["memory"]
    lines.append(f"memory: lines={m['lines']} questions " + " ".join(f"{k}={v}" for k, v in m["question_entries"].items())
                 + " terms " + " ".join(f"{k}={v}" for k, v in m["term_entries"].items()))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=PACKAGE_DOC.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default benchmarks/out/scale-<preset>)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = args.out or ROOT / "benchmarks" / "out" / f"scale-{args.preset}"
    try:
        from .generate import generate  # loads the data tables: a malformed one stops here, before any output
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    counts = generate(PRESETS[args.preset], out, args.seed)
    elapsed = time.perf_counter() - t0
    print(f"preset={args.preset} seed={args.seed} out={out}")
    print("\n".join(summary(counts)))
    print(f"time={elapsed:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
