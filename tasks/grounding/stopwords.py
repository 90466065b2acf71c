"""A language's stop-words (spaCy's bundled lists), and the NLTK stop-word corpus QuickUMLS
reads, written from them so that nothing is ever downloaded."""
from __future__ import annotations

from pathlib import Path
import importlib
import os
import threading

from schemas.config import Language


def language_stopwords(lang: Language) -> set[str]:
    """spaCy's stop-words of the registry's `stopwords` language; none when it names none or
    spaCy has no list for it."""
    if not lang.stopwords:
        return set()
    try:
        return set(importlib.import_module(f"spacy.lang.{lang.stopwords}.stop_words").STOP_WORDS)
    except ImportError:
        return set()


_NLTK_LOCK = threading.Lock()


def ensure_nltk_stopwords(root: Path, languages: dict[str, str]) -> None:
    """QuickUMLS reads NLTK's stopwords corpus and downloads it when missing. We write the
    corpus ourselves, in NLTK's layout, from spaCy's bundled stop-word lists, so nothing
    is ever downloaded. `languages`: NLTK language name -> spaCy language code."""
    import nltk

    corpus = root / "corpora" / "stopwords"
    with _NLTK_LOCK:  # shards build their grounders concurrently on a thread pool
        corpus.mkdir(parents=True, exist_ok=True)
        for nltk_name, spacy_code in languages.items():
            target = corpus / nltk_name
            if not target.exists():
                words = importlib.import_module(f"spacy.lang.{spacy_code}.stop_words").STOP_WORDS
                tmp = target.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
                tmp.write_text("\n".join(sorted(words)) + "\n", encoding="utf-8")
                tmp.replace(target)
        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
        # NLTK binds its stopwords reader to the first root it loaded from: a process that
        # grounds with a second cache root (`mmedbench ground` after a build, tests) would
        # look for a new language's list in the old root. Rebind when a list is missing there.
        bound = getattr(nltk.corpus.stopwords, "_root", None)
        if bound is not None and not all(os.path.exists(os.path.join(bound.path, n)) for n in languages):
            from nltk.corpus.reader import StopwordsCorpusReader
            from nltk.corpus.util import LazyCorpusLoader

            nltk.corpus.stopwords = LazyCorpusLoader("stopwords", StopwordsCorpusReader, r"(?!README|\.).*", encoding="utf8")
