"""Translation and language gates: small pure functions, each returning a `GateFailure` or None.

A text that fails a gate is excluded; the failure's str() is the reason written down, its
`gate` what the build report counts (schemas/gates.py).
"""
from __future__ import annotations

import re
import unicodedata

from schemas.config import Language
from schemas.gates import GateFailure
from common.text import CJK_SCRIPTS, normalize, script_profile

LANGID_MIN_CHARS = 20  # below this (CJK) langdetect is noise; the script gate still applies
LANGID_MIN_WORDS = 6  # likewise for space-delimited text: concept names are too short to detect
SHORT_TERM_CHARS = 16  # an all-Han text up to this length may be a Japanese kanji term
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_UNITS = ("mg", "mmhg", "kg", "ml", "mmol", "µg", "mcg", "iu", "%", "bpm")


# lingua restricted to the benchmark languages and their confusables measured best on
# 11,580 native questions (docs/langid.md: half langdetect's false rejections, ten times
# faster); langdetect stays available. A release records the backend it was built with
# (config.langid_backend) and its audit uses the same one.
DEFAULT_LANGID_BACKEND = "lingua-subset"


def detect_language(text: str, expected: str | None = None, backend: str | None = None) -> str | None:
    """The detector's answer in langdetect's codes; `expected` (a registry code) is always
    among the languages lingua-subset can answer."""
    from tasks.translation import langid

    chosen = backend or DEFAULT_LANGID_BACKEND
    if chosen not in langid.available_backends():
        chosen = "langdetect"
    try:
        return langid.detect(text, chosen, languages=(expected,) if expected else ())
    except ValueError:  # a registry language lingua has no model for: langdetect decides
        return langid.detect(text, "langdetect")


def detect_languages(texts, expected: str | None = None, backend: str | None = None) -> None:
    """`detect_language`'s answers for many texts at once (`langid.detect_many`), for the
    calls that follow inside `langid.detected_in_batches()`; same answers."""
    from tasks.translation import langid

    chosen = backend or DEFAULT_LANGID_BACKEND
    if chosen not in langid.available_backends():
        return
    try:
        langid.detect_many([t for t in texts if isinstance(t, str)], chosen, languages=(expected,) if expected else ())
    except ValueError:  # lingua has no model for `expected`: detect_language decides one by one
        return


def script_gate(text: str, lang: Language) -> GateFailure | None:
    prof = script_profile(text)
    letters = sum(prof.values())
    if letters == 0:
        return GateFailure("script", "no letters")
    for s in lang.forbid_scripts:
        if prof.get(s):
            return GateFailure("script", f"contains {s}, not expected in {lang.code}")
    share = sum(prof.get(s, 0) for s in lang.scripts) / letters
    if share < lang.min_script_share:
        main = prof.most_common(1)[0][0]
        return GateFailure("script", f"{share:.0%} of letters in {'/'.join(lang.scripts)} (mostly {main})")
    if lang.code == "ja" and not (prof.get("Hiragana") or prof.get("Katakana")):
        if not (lang.all_han_ok and len(normalize(text)) <= SHORT_TERM_CHARS):
            return GateFailure("script", "Japanese sentence without kana")
    return None


# The script each detector answer implies; any code not listed is a Latin-script language.
DETECTED_SCRIPTS = {
    "ko": {"Hangul"}, "ja": {"Hiragana", "Katakana", "Han"}, "zh-cn": {"Han"}, "zh-tw": {"Han"},
    "ru": {"Cyrillic"}, "uk": {"Cyrillic"}, "bg": {"Cyrillic"}, "mk": {"Cyrillic"},
    "ar": {"Arabic"}, "fa": {"Arabic"}, "ur": {"Arabic"}, "he": {"Hebrew"}, "th": {"Thai"},
    "hi": {"Devanagari"}, "mr": {"Devanagari"}, "ne": {"Devanagari"}, "el": {"Greek"},
}


def langid_gate(text: str, lang: Language, backend: str | None = None) -> GateFailure | None:
    """Language ID decides between languages that share a script (fr/es/en, ru/uk).

    An answer whose script is not the text's majority script is discarded: langdetect
    calls medical Chinese "ko" (its Korean profile holds Hanja) although the text has no
    Hangul, and the script gate already judged the script."""
    norm = normalize(text)
    if len(norm) < LANGID_MIN_CHARS or (not _is_cjk(lang) and len(norm.split()) < LANGID_MIN_WORDS):
        return None
    got = detect_language(text, lang.code, backend)
    if got is None or got in lang.detector_codes:
        return None
    prof = script_profile(text)
    implied = DETECTED_SCRIPTS.get(got, {"Latin"})
    if sum(prof.get(s, 0) for s in implied) * 2 < sum(prof.values()):
        return None
    # all-kanji Japanese is often detected as Chinese: the script gate already decided
    if lang.all_han_ok and got.startswith("zh"):
        prof = script_profile(text)
        if prof.get("Hiragana") or prof.get("Katakana") or len(normalize(text)) <= SHORT_TERM_CHARS:
            return None
    return GateFailure("langid", f"detected {got}, expected {lang.code}")


def copy_gate(source: str, target: str) -> GateFailure | None:
    return GateFailure("copy", "translation equals its source") if normalize(source) == normalize(target) else None


def _is_cjk(lang: Language) -> bool:
    return bool(CJK_SCRIPTS & set(lang.scripts))


def length_ratio_gate(source: str, target: str, src: Language, tgt: Language) -> GateFailure | None:
    s, t = len(normalize(source)), len(normalize(target))
    if s < 15 or (not _is_cjk(src) and len(source.split()) < LANGID_MIN_WORDS):
        return None  # terms translate to a single word or a long phrase; ratios mean nothing
    lo, hi = (0.5, 2.5)
    if _is_cjk(tgt) and not _is_cjk(src):
        lo, hi = (0.1, 1.2)
    elif _is_cjk(src) and not _is_cjk(tgt):
        lo, hi = (0.8, 10.0)
    ratio = t / s
    if not lo <= ratio <= hi:
        return GateFailure("length", f"ratio {ratio:.2f} outside [{lo}, {hi}]")
    return None


_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[\s.,\u00a0\u202f'](?=\d)")


def numbers(text: str) -> list[str]:
    """Digit strings with separators between digits dropped: '10,000' (en), '10 000' (fr)
    and '0,5' / '0.5' compare equal; which separator is decimal differs by language."""
    t = _DIGIT_SEPARATOR.sub("", unicodedata.normalize("NFKC", text))
    return sorted(re.findall(r"\d+", t))


def numbers_gate(source: str, target: str, tgt: Language) -> GateFailure | None:
    missing = sorted(set(numbers(source)) - set(numbers(target)))
    if missing:
        return GateFailure("numbers", f"{', '.join(missing)} missing from the translation")
    if "Latin" in tgt.scripts:
        s, t = normalize(source), normalize(target)
        lost = [u for u in _UNITS if re.search(rf"(?<![a-zµ]){re.escape(u)}(?![a-z])", s) and u not in t]
        if lost:
            return GateFailure("units", f"{', '.join(lost)} missing from the translation")
    return None


def text_gates(text: str, lang: Language, backend: str | None = None) -> list[GateFailure]:
    """Gates for any query text in `lang` (native, terminology or translated)."""
    return [f for f in (script_gate(text, lang), langid_gate(text, lang, backend)) if f is not None]


def translation_gates(source: str, target: str, src: Language, tgt: Language,
                      backend: str | None = None) -> list[GateFailure]:
    """All gates for a translation, in a fixed order; empty list means accepted."""
    failures = text_gates(target, tgt, backend)
    for f in (copy_gate(source, target), length_ratio_gate(source, target, src, tgt), numbers_gate(source, target, tgt)):
        if f is not None:
            failures.append(f)
    return failures
