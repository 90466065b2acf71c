"""Grounder setup cost: CPU seconds to build each language's grounder from its atoms table.

    python benchmarks/bench_grounder_setup.py
    python benchmarks/bench_grounder_setup.py --langs en fr --atoms-dir DIR --registry FILE

Defaults read the paper-scale run (benchmarks/out/run-paper/stages/vocab/atoms-<lang>.parquet
and benchmarks/out/scale-paper/languages.toml); nothing is written into the repository. Each
piece is measured in a fresh Python process (no caches warmed by another piece or language),
with the heavy imports done before its timer starts. Per language:

- load_terms: reading the atoms table into Terms;
- quickumls_index: building the QuickUMLS index alone, into an empty cache (what
  `prepare_grounders(indexes_only=True)` does);
- Grounder cold: the whole grounder with an empty cache (builds the index too), what a cold
  build pays per language;
- Grounder warm: the whole grounder with the index already on disk (a rebuild, or a second
  process of the same build).

Zh and ja have no QuickUMLS index (dictionary grounder), so only load_terms and Grounder.

    python benchmarks/bench_grounder_setup.py --check-fold --langs en fr

checks instead that fold_term (the fast path) equals fold() on every atom string of those
languages, and prints the counts (tests/tasks/grounding/test_fold_term.py does the same on generated text).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_ATOMS = ROOT / "benchmarks/out/run-paper/stages/vocab"
DEFAULT_REGISTRY = ROOT / "benchmarks/out/scale-paper/languages.toml"


PIECES = ["load_terms", "quickumls_index", "grounder_cold", "grounder_warm"]


def measure_piece(piece: str, code: str, atoms_dir: Path, registry: Path, cache: Path) -> float:
    """CPU seconds of one piece for one language, in this (fresh) process."""
    import quickumls  # noqa: F401  heavy imports happen before the timer starts
    import quickumls.install  # noqa: F401
    import scispacy.abbreviation  # noqa: F401
    import spacy  # noqa: F401

    from schemas.config import load_registry
    from tasks.grounding.grounder import Grounder
    from tasks.grounding.matchers import load_terms
    from tasks.grounding.quickumls_index import quickumls_index

    lang = load_registry(registry)[code]
    atoms = atoms_dir / f"atoms-{code}.parquet"
    run = {"load_terms": lambda: load_terms(atoms, lang),
           "quickumls_index": lambda: quickumls_index(atoms, lang, cache),
           "grounder_cold": lambda: Grounder(atoms, lang, cache),
           "grounder_warm": lambda: Grounder(atoms, lang, cache)}[piece]
    t = time.process_time()
    run()
    return time.process_time() - t


def _child(piece: str, code: str, args, cache: Path) -> float:
    res = subprocess.run([sys.executable, __file__, "--one", piece, code, str(cache), "--atoms-dir", str(args.atoms_dir),
                          "--registry", str(args.registry)], check=True, capture_output=True, text=True)
    return float(res.stdout.strip().splitlines()[-1])


def measure_language(code: str, args) -> dict:
    """Every piece in its own process; the warm run reuses the cold run's cache."""
    import pyarrow.parquet as pq

    from schemas.config import load_registry

    fuzzy = load_registry(args.registry)[code].grounder != "dictionary"
    row = {"atoms": pq.read_metadata(args.atoms_dir / f"atoms-{code}.parquet").num_rows}
    with tempfile.TemporaryDirectory(prefix="bench-setup-") as tmp:
        row["load_terms"] = _child("load_terms", code, args, Path(tmp) / "unused")
        row["grounder_cold"] = _child("grounder_cold", code, args, Path(tmp) / "grounder")
        if fuzzy:
            row["quickumls_index"] = _child("quickumls_index", code, args, Path(tmp) / "index")
            row["grounder_warm"] = _child("grounder_warm", code, args, Path(tmp) / "grounder")
    return row


def check_fold(code: str, atoms_dir: Path, registry: Path) -> tuple[int, int, list[str]]:
    """(strings, strings whose fold_term differs from fold()[0], a few of those)."""
    import pyarrow.parquet as pq

    from schemas.config import load_registry
    from tasks.grounding.normalize import fold, fold_term

    latin = "Latin" in load_registry(registry)[code].scripts
    strings = pq.read_table(atoms_dir / f"atoms-{code}.parquet", columns=["str"])["str"].to_pylist()
    bad = [s for s in strings if fold_term(s, latin) != fold(s, latin)[0]]
    return len(strings), len(bad), bad[:5]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", nargs="+", default=["en", "fr", "es", "ru", "zh", "ja"])
    ap.add_argument("--atoms-dir", type=Path, default=DEFAULT_ATOMS)
    ap.add_argument("--registry", type=Path, default=DEFAULT_REGISTRY)
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # child: PIECE LANG CACHE, prints CPU seconds
    ap.add_argument("--check-fold", action="store_true", help="compare fold_term with fold() on every atom string")
    args = ap.parse_args()
    if args.check_fold:
        failed = False
        for code in args.langs:
            n, bad, examples = check_fold(code, args.atoms_dir, args.registry)
            print(f"{code}: {n} atom strings, fold_term != fold: {bad} {examples}", flush=True)
            failed |= bad > 0
        sys.exit(1 if failed else 0)
    if args.one:
        piece, code, cache = args.one
        print(measure_piece(piece, code, args.atoms_dir, args.registry, Path(cache)))
        return
    print("CPU seconds; the atoms table of each language read from", args.atoms_dir)
    print()
    print("| lang | atoms | " + " | ".join(PIECES) + " |")
    print("|---|---:|" + "---:|" * len(PIECES))
    for code in args.langs:
        row = measure_language(code, args)
        cells = [str(row["atoms"])] + [f"{row[c]:.1f}" if c in row else "-" for c in PIECES]
        print(f"| {code} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
