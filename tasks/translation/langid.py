"""Language identification backends for the langid gate.

Every backend answers in langdetect's vocabulary (lower-case ISO 639-1; 'zh-cn'/'zh-tw' for
Chinese; 'no' for Norwegian), so the registry's `detector_codes` and the script table in
tasks.translation.gates apply whichever backend runs. Answers are deterministic: langdetect is seeded,
lingua is deterministic by construction. Neither backend touches the network: langdetect
reads its profiles from its package, lingua's models are compiled into its wheel.

    langdetect     langdetect 1.0.9, 55 languages (the project's required dependency)
    lingua         lingua-language-detector, all 75 languages, high-accuracy mode
    lingua-subset  lingua restricted to LINGUA_SUBSET: the six benchmark languages plus
                   the languages they are most easily confused with, plus any `languages`
                   the caller names (pass the expected language: a registry language
                   outside the subset could otherwise never be answered, and its texts
                   would be called the nearest subset language)

See docs/langid.md for the measured comparison (benchmarks/langid_eval.py).
"""
from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterable
from contextlib import contextmanager
from functools import lru_cache
from typing import get_args

from schemas.config import LangidBackend

BACKENDS = get_args(LangidBackend)
DEFAULT_BACKEND = "langdetect"

# The six benchmark languages, then confusables: ko (Hanja in medical text), de/it/pt/nl
# (Latin script, shared medical vocabulary), uk/bg (Cyrillic).
LINGUA_SUBSET = ("en", "zh", "ja", "fr", "ru", "es", "ko", "de", "it", "pt", "uk", "bg", "nl")

# lingua's ISO 639-1 codes that langdetect spells differently; the rest are identical.
# lingua has one Chinese; "zh-cn" is the code langdetect gives simplified Chinese.
_FROM_LINGUA = {"zh": "zh-cn", "nb": "no", "nn": "no"}

_PACKAGES = {"langdetect": "langdetect", "lingua": "lingua", "lingua-subset": "lingua"}


def available_backends() -> list[str]:
    """The backends whose package is installed, in BACKENDS order."""
    return list(_installed_backends())


@lru_cache(maxsize=1)
def _installed_backends() -> tuple[str, ...]:
    # asked once per text by the gates: find_spec takes the interpreter's import lock, which
    # the realize threads then held in turn while a ground task was importing its stage
    return tuple(b for b in BACKENDS if importlib.util.find_spec(_PACKAGES[b]) is not None)


def detect(text: str, backend: str = DEFAULT_BACKEND, languages: Iterable[str] = ()) -> str | None:
    """The language of `text` as a langdetect-style code, or None when there is no answer
    (no letters, or the backend cannot decide).

    `languages`: registry codes ('pt', 'zh-cn', 'pt-BR') lingua-subset must also consider;
    the other backends already know every language they can answer."""
    if backend == "langdetect":
        return _detect_langdetect(text)
    if backend in ("lingua", "lingua-subset"):
        return _detect_lingua(text, _lingua_codes(backend, languages))
    raise ValueError(f"unknown language-ID backend {backend!r}; known: {', '.join(BACKENDS)}")


def _lingua_codes(backend: str, languages: Iterable[str]) -> tuple[str, ...] | None:
    if backend == "lingua":
        return None
    extra = {c.split("-")[0].lower() for c in languages} - set(LINGUA_SUBSET)
    return LINGUA_SUBSET + tuple(sorted(extra))


# per thread, (lingua codes, text) -> answer, filled by `detect_many` for the `detect` calls
# that follow in the same thread: a build realizes shards on several threads at once, and one
# shard's block ending must not take another's answers with it
_BATCHES = threading.local()
_MISSING = object()


def _detected() -> dict[tuple[tuple[str, ...] | None, str], str | None]:
    memo = getattr(_BATCHES, "memo", None)
    if memo is None:
        memo = _BATCHES.memo = {}
    return memo


@contextmanager
def detected_in_batches():
    """Within the block, `detect_many` keeps its answers for this thread's `detect` calls;
    they go at the end."""
    try:
        yield
    finally:
        _detected().clear()


def detect_many(texts: Iterable[str], backend: str = DEFAULT_BACKEND, languages: Iterable[str] = ()) -> None:
    """Detect these texts at once, for the `detect` calls that follow inside
    `detected_in_batches`: lingua answers a list on all cores, in its own code, about 3x
    faster than one text at a time on one core, with the same answers (15,116 queries of a
    paper-scale release, all equal; tests/tasks/translation/test_langid_batch.py). Other backends: nothing."""
    if backend not in ("lingua", "lingua-subset"):
        return
    codes = _lingua_codes(backend, languages)
    memo = _detected()
    todo = sorted({t for t in texts if (codes, t) not in memo})
    if todo:
        answers = lingua_detector(codes).detect_languages_in_parallel_of(todo)
        memo.update(((codes, t), _from_lingua(a)) for t, a in zip(todo, answers))


# Both libraries load lazily into process-wide state; builds run gates from several threads.
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _langdetect():
    from langdetect import DetectorFactory, detector_factory

    DetectorFactory.seed = 0  # langdetect is randomised; a fixed seed makes it repeatable
    # two threads loading langdetect's global profile factory at once leave it half-loaded
    # (Spanish answered "ro" or "ca"): load it once, under the lock
    with _LOCK:
        detector_factory.init_factory()
    from langdetect import detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    return detect_langs, LangDetectException


def _detect_langdetect(text: str) -> str | None:
    detect_langs, error = _langdetect()
    try:
        langs = detect_langs(text)
    except error:  # "No features in text": nothing a profile can score
        return None
    return langs[0].lang if langs else None


@lru_cache(maxsize=16)
def lingua_detector(codes: tuple[str, ...] | None = None):
    """A lingua detector for the ISO 639-1 `codes` (None: every language), built once per
    set of codes. Models load lazily per language on first use and stay loaded (they are
    shared between detectors) for the life of the process."""
    try:
        from lingua import IsoCode639_1, LanguageDetectorBuilder
    except ImportError as exc:
        raise ImportError("the lingua backends need lingua-language-detector: pip install lingua-language-detector") from exc
    if codes is None:
        builder = LanguageDetectorBuilder.from_all_languages()
    else:
        unknown = [c for c in codes if not _lingua_knows(IsoCode639_1, c)]
        if unknown:
            raise ValueError(f"lingua has no model for {', '.join(unknown)}; use the langdetect backend for it")
        isos = [IsoCode639_1.from_str(c) for c in codes]
        if len(isos) < 2:
            raise ValueError("lingua needs at least two languages to choose between")
        builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos)
    with _LOCK:  # lru_cache does not stop two threads building at once; build one at a time
        return builder.build()


def _lingua_knows(iso_enum, code: str) -> bool:
    try:
        iso_enum.from_str(code)
    except ValueError:
        return False
    return True


def _detect_lingua(text: str, codes: tuple[str, ...] | None) -> str | None:
    hit = _detected().get((codes, text), _MISSING)
    if hit is not _MISSING:
        return hit
    return _from_lingua(lingua_detector(codes).detect_language_of(text))


def _from_lingua(lang) -> str | None:
    if lang is None:
        return None
    code = lang.iso_code_639_1.name.lower()
    return _FROM_LINGUA.get(code, code)
