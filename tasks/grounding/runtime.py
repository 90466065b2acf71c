"""How the grounders run, apart from what they match: the collector paused while they are
built, and the shared tokenizer and morphology analyzer with the locks that serialise them
(Prefect may run task runs on threads; a forked worker gets fresh locks)."""
from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache
import gc
import os
import threading


_GC_LOCK = threading.Lock()
_gc_pauses = 0  # builds in progress (threads may build grounders concurrently)
_gc_was_enabled = False


@contextmanager
def gc_paused():
    """The cyclic garbage collector off while grounders are built: a build allocates millions
    of long-lived objects (terms, index keys), each collection rescans them all (5 s of the
    English TermMatcher's 17) and frees nothing, as they all live on. Counted, so that
    concurrent builds re-enable it only when the last one ends, and only if it was on."""
    global _gc_pauses, _gc_was_enabled
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


@lru_cache(maxsize=2)
def _sudachi():
    from sudachipy import dictionary, tokenizer

    d = dictionary.Dictionary(dict="core")
    return (d.tokenizer() if hasattr(d, "tokenizer") else d.create()), tokenizer.Tokenizer.SplitMode.A


_SUDACHI_LOCK = threading.Lock()  # one shared tokenizer


def sudachi_tokens(text: str) -> list[tuple[int, int, str]]:
    """(begin, end, normalised form) of Sudachi's split-mode-A morphemes of a text."""
    tok, mode = _sudachi()
    with _SUDACHI_LOCK:
        return [(m.begin(), m.end(), m.normalized_form()) for m in tok.tokenize(text, mode)]


@lru_cache(maxsize=4)
def _morph_analyzer(lang_code: str):
    """pymorphy3's analyzer for a language (its dictionaries ship in the pymorphy3-dicts-<code>
    wheel: nothing downloads)."""
    import pymorphy3

    try:
        return pymorphy3.MorphAnalyzer(lang=lang_code)
    except (ValueError, ImportError) as exc:  # no dictionary package for the language
        raise ValueError(f"morphology 'pymorphy3' for {lang_code!r}: {exc}") from None


_MORPH_LOCK = threading.Lock()  # one analyzer per language


def morph_parses(word: str, lang_code: str) -> list:
    """pymorphy3's parses of a word, most probable first."""
    analyzer = _morph_analyzer(lang_code)
    with _MORPH_LOCK:
        return analyzer.parse(word)


@lru_cache(maxsize=16)
def snowball_stemmer(nltk_name: str | None):
    """NLTK's Snowball stemmer for a language, None when NLTK has none."""
    if not nltk_name:
        return None
    try:
        from nltk.stem.snowball import SnowballStemmer

        return SnowballStemmer(nltk_name)
    except (ImportError, ValueError):
        return None


def _fresh_locks_in_child() -> None:
    """A forked worker must not inherit a lock another thread of its parent held at the fork
    (nothing would release it there)."""
    global _SUDACHI_LOCK, _MORPH_LOCK
    _SUDACHI_LOCK = threading.Lock()
    _MORPH_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_fresh_locks_in_child)
