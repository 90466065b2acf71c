"""The dense pass as the grounding stage and `mmedbench ground` run it: the built-in
multilingual encoder (use-m, common/encoders.py), every language's names embedded once per
process and cached on disk by content (`<cache_root>/dense/`), candidate spans from the
language's own segmentation, mentions in the stage's dict form with `"pass": "dense"`.

The linking itself (gates, margins, span rules) is tasks/grounding/dense.py's, pure.
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path

from common.encoders import EmbeddingCache, UseBackend
from common.segmenters import new_jieba
from schemas.config import Language
from tasks.grounding.dense import DenseLinker, DenseSettings, LanguageNames, NameIndex, embed_names, span_candidates
from tasks.grounding.matchers import load_terms
from tasks.grounding.spans import WORD
from tasks.grounding.stopwords import language_stopwords

ENCODER = "use-m"  # the encoder of the dense pass (its weights ship in its package)
ASKED_BY = "grounding.passes"  # what a missing encoder package is blamed on: the config's choice
DENSE_PASS = "dense"
# tokens per span: words (en, fr, es, ru); jieba words (zh); Sudachi's short units (ja), of
# which a term takes more (高血圧症 is 高/血圧/症)
MAX_TOKENS = {"words": 3, "jieba": 3, "sudachi": 5}

_LOCK = threading.Lock()
_ENCODERS: dict[int, object] = {}
_NAMES: dict[tuple, LanguageNames] = {}  # (atoms path, size, mtime, language JSON, fingerprint) -> names


def encoder(threads: int):
    """The process's use-m backend (its 65 MB table loaded once)."""
    with _LOCK:
        if threads not in _ENCODERS:
            _ENCODERS[threads] = UseBackend(threads, asked_by=ASKED_BY)
        return _ENCODERS[threads]


def dense_settings(gates: dict[str, float], lang_segmenter: str = "words") -> DenseSettings:
    return DenseSettings(span_threshold=gates["span_threshold"], span_margin=gates["span_margin"],
                         option_threshold=gates["option_threshold"], option_margin=gates["option_margin"],
                         max_tokens=MAX_TOKENS.get(lang_segmenter, 3))


def name_index(enc, atoms_by_lang: dict[str, str], languages: dict[str, Language], cache_root: str,
               progress: Callable[[str, int, int], None] | None = None) -> NameIndex:
    """The names of these languages, each language embedded once per process (and read from
    the disk cache when its names were embedded before: the key is the encoder and the names)."""
    cache = EmbeddingCache(Path(cache_root) / "dense" / enc.fingerprint[:16], what="the dense linker's name embeddings (the work dir)")
    names = {}
    for code in sorted(atoms_by_lang):
        path = atoms_by_lang[code]
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns, languages[code].model_dump_json(), enc.fingerprint)
        with _LOCK:
            found = _NAMES.get(key)
        if found is None:
            step = (lambda done, total, code=code: progress(code, done, total)) if progress else None
            found = embed_names(enc, load_terms(Path(path), languages[code]), cache, step)
            with _LOCK:
                _NAMES[key] = found
        names[code] = found
    return NameIndex(enc, names)


def drop_names() -> None:
    with _LOCK:
        _NAMES.clear()
        _ENCODERS.clear()


@functools.lru_cache(maxsize=1)
def _jieba():
    return new_jieba()


_JIEBA_LOCK = threading.Lock()


def tokens(text: str, lang: Language) -> list[tuple[int, int]]:
    """(start, end) of the text's words by the registry's segmenter: words, jieba, Sudachi."""
    if lang.segmenter == "jieba":
        with _JIEBA_LOCK:
            return [(s, e) for w, s, e in _jieba().tokenize(text) if w.strip()]
    if lang.segmenter == "sudachi":
        from tasks.grounding.runtime import sudachi_tokens

        return [(s, e) for s, e, _nf in sudachi_tokens(text) if text[s:e].strip()]
    return [(m.start(), m.end()) for m in WORD.finditer(text)]


@functools.lru_cache(maxsize=16)
def casefolded_stopwords(lang_json: str) -> frozenset[str]:
    lang = Language.model_validate_json(lang_json)
    return frozenset(w.casefold() for w in language_stopwords(lang))


class DensePass:
    """The dense pass over a set of languages: spans of running text, options as a whole."""

    def __init__(self, atoms_by_lang: dict[str, str], languages: dict[str, Language], gates: dict[str, float],
                 cache_root: str, threads: int, progress: Callable[[str, int, int], None] | None = None):
        self.languages = languages
        enc = encoder(threads)
        self.index = name_index(enc, atoms_by_lang, languages, cache_root, progress)
        self.gates = gates
        self._cache_dir = Path(cache_root) / "dense"

    def _linker(self, code: str) -> DenseLinker:
        return DenseLinker(self.index, dense_settings(self.gates, self.languages[code].segmenter), self._cache_dir)

    def span_mentions(self, texts: list[tuple[str, str]], taken: dict[tuple[str, str], list[dict]]) -> dict[tuple[str, str], list[dict]]:
        """Mentions the dense pass adds to each (lang, text): spans overlapping no mention in `taken`."""
        out: dict[tuple[str, str], list[dict]] = {}
        for code in sorted({c for c, _t in texts}):
            lang = self.languages[code]
            linker = self._linker(code)
            stop = casefolded_stopwords(lang.model_dump_json())
            mine = [t for c, t in texts if c == code]
            spans = [span_candidates(t, tokens(t, lang), stop, linker.settings.max_tokens,
                                     [(m["start"], m["end"]) for m in taken.get((code, t), [])]) for t in mine]
            linked = linker.link_spans([(code, t, sp) for t, sp in zip(mine, spans)])
            for t, links in zip(mine, linked):
                out[(code, t)] = [mention(t, s, e, link) for s, e, link in links]
        return out

    def whole(self, texts: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, float] | None]:
        """(CUI, cosine) each (lang, text) names as a whole (the option gates), or None."""
        out: dict[tuple[str, str], tuple[str, float] | None] = {}
        for code in sorted({c for c, _t in texts}):
            mine = [(c, t) for c, t in texts if c == code]
            for req, link in zip(mine, self._linker(code).link_whole(mine)):
                out[req] = (link.cui, round(link.score, 4)) if link is not None else None
        return out


def mention(text: str, start: int, end: int, link) -> dict:
    return {"start": start, "end": end, "text": text[start:end], "cui": link.cui, "score": round(link.score, 4),
            "pass": DENSE_PASS}
