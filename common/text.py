"""Text normalisation, Unicode script profiling and shingling (pure functions)."""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

_WORD = re.compile(r"\w+")

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
    if text.isascii():  # NFKC changes no ASCII character, and casefold is lower there
        return " ".join(text.lower().split())
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


# scripts written without spaces between words
CJK_SCRIPTS = frozenset({"Han", "Hiragana", "Katakana", "Hangul"})


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
    shared = len(a & b)  # |a | b| without making the union (allocation asks this millions of times)
    return shared / (len(a) + len(b) - shared)


def lexical_similarity(a: str, b: str, n: int = 3) -> float:
    """Character-trigram Jaccard: the tier-ordering measure."""
    return jaccard(char_shingles(a, n), char_shingles(b, n))


def _fold_latin_marks(text: str) -> str:
    """Drop combining marks from Latin letters only (é -> e); Cyrillic й and kana voicing stay."""
    if text.isascii():  # no marks, and NFD and NFC leave it as it is
        return text
    nfd = unicodedata.normalize("NFD", text)
    if not any(map(unicodedata.combining, nfd)):  # nothing to drop (Cyrillic, CJK, ß...)
        return unicodedata.normalize("NFC", nfd)
    out = []
    for ch in nfd:
        if unicodedata.combining(ch) and out and script_of(out[-1]) == "Latin":
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def word_tokens(text: str) -> list[str]:
    """Words of a text for phrase comparison: NFKC, casefold, accents folded on Latin
    letters, runs of letters and digits (`\\w+`); punctuation and spacing never matter."""
    return _WORD.findall(_fold_latin_marks(unicodedata.normalize("NFKC", text).casefold()))


def phrase_key(text: str) -> str:
    return " ".join(word_tokens(text))


def contains_phrase(haystack: str, needle: str) -> bool:
    """Does `needle` occur in `haystack` as whole words (any substring for CJK, which has
    no spaces between words)?"""
    n = phrase_key(needle)
    if not n:
        return False
    h = phrase_key(haystack)
    if any(script_of(ch) in CJK_SCRIPTS for ch in n):
        return n.replace(" ", "") in h.replace(" ", "")
    return f" {n} " in f" {h} "
