"""Text normalisation, Unicode script profiling and shingling (pure functions)."""
from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

_SCRIPT_PREFIXES = (
    ("CJK UNIFIED IDEOGRAPH", "Han"),
    ("CJK COMPATIBILITY IDEOGRAPH", "Han"),
    ("HIRAGANA", "Hiragana"),
    ("KATAKANA", "Katakana"),
    ("HALFWIDTH KATAKANA", "Katakana"),
    ("HANGUL", "Hangul"),
    ("CYRILLIC", "Cyrillic"),
    ("LATIN", "Latin"),
    ("GREEK", "Greek"),
    ("ARABIC", "Arabic"),
    ("HEBREW", "Hebrew"),
    ("DEVANAGARI", "Devanagari"),
    ("THAI", "Thai"),
)


def normalize(text: str) -> str:
    """NFKC + casefold + collapsed whitespace. Kana voicing marks survive NFKC (composed)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@lru_cache(maxsize=65536)
def script_of(ch: str) -> str | None:
    """Unicode script of a letter, or None for digits, punctuation and spaces."""
    if ch == "ー" or ch == "々":  # prolonged sound mark / iteration mark: Japanese
        return "Katakana" if ch == "ー" else "Han"
    if not unicodedata.category(ch).startswith("L"):
        return None
    name = unicodedata.name(ch, "")
    for prefix, script in _SCRIPT_PREFIXES:
        if name.startswith(prefix):
            return script
    return "Other"


def script_profile(text: str) -> Counter:
    return Counter(s for s in map(script_of, text) if s is not None)


def char_shingles(text: str, n: int) -> set[str]:
    """Character n-grams of the normalised text. A text shorter than n is one shingle:
    nothing is skipped for being short."""
    t = normalize(text)
    if not t:
        return set()
    if len(t) <= n:
        return {t}
    return {t[i : i + n] for i in range(len(t) - n + 1)}


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def lexical_similarity(a: str, b: str, n: int = 3) -> float:
    """Character-trigram Jaccard: the tier-ordering measure."""
    return jaccard(char_shingles(a, n), char_shingles(b, n))
