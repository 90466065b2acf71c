"""Lexical retrieval: per-language tokenizers from the registry, and BM25 through bm25s.

Tokenizers (`tokenizer_for(language)`, chosen by the registry's `segmenter` field):
  words    NFKC, casefold, Latin accents and ligatures folded, a lone Greek letter spelled
           out (TNF-α = tnf alpha), a possessive 's dropped, ё = е; tokens are runs of letters
           and digits. The folding of tasks/grounding/normalize.py `fold`, done on whole
           strings (fold walks characters in Python: too slow for 100k passages).
  jieba    Chinese: runs of Han/kana are segmented by jieba, the rest of the text goes
  sudachi  Japanese: through `words`; Sudachi gives short units (mode A) in their
           normalized form (spelling variants meet). Punctuation and spaces are dropped.
Whitespace splitting is never used for unsegmented scripts. Tokenizers are deterministic
and thread-safe (Sudachi's tokenizer is per thread).

`BM25Index` wraps bm25s (Lucene's BM25, k1=1.2, b=0.75: the BEIR/Anserini setting). A
document sharing no term with the query scores 0 and is never retrieved by `top`.
Results are sorted by (-score, doc_id), so ties are broken the same way on every run.
"""
from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from common.segmenters import new_jieba
from schemas.config import Language

K1 = 1.2
B = 0.75

# --- the "words" folding -----------------------------------------------------------------

_POSSESSIVE = re.compile(r"(?<=[^\W_])['\u2019\u02bc`\u00b4\u2018][sS](?![^\W_])")
_APOSTROPHE = re.compile("['\u2019\u02bc`\u00b4\u2018]")
_GREEK_LETTERS = "α-ωάέήίόύώϊϋΐΰ"
_GREEK_NAMES = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "κ": "kappa",
                "λ": "lambda", "μ": "mu", "τ": "tau", "ω": "omega"}
_GREEK_ANY = re.compile(f"[{''.join(_GREEK_NAMES)}]")
_LONE_GREEK = re.compile(f"(?<![{_GREEK_LETTERS}])([{''.join(_GREEK_NAMES)}])(?![{_GREEK_LETTERS}])")
# combining marks after a Latin base letter (after NFD); Cyrillic й keeps its breve
_LATIN_MARKS = re.compile(r"(?<=[a-z\u00df-\u02af\u1d00-\u1dbf\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
                            "ё": "е", "_": " "})
_WORD = re.compile(r"[^\W_]+")
_ASCII_SPACES = {i: " " for i in range(128) if not chr(i).isalnum()}


def fold_words(text: str) -> list[str]:
    """The `words` tokens of a text (see the module docstring)."""
    s = _POSSESSIVE.sub("", text) if _APOSTROPHE.search(text) else text
    s = unicodedata.normalize("NFKC", s).casefold()
    if not s.isascii():
        if _GREEK_ANY.search(s):
            s = _LONE_GREEK.sub(lambda m: " " + _GREEK_NAMES[m.group(1)] + " ", s)
        s = unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", s)))
        s = s.translate(_LIGATURES)
        return _WORD.findall(s)
    return s.translate(_ASCII_SPACES).split()  # the same tokens for ASCII, twice as fast


# --- CJK segmentation --------------------------------------------------------------------

# Han, kana (half-width katakana too: NFKC makes it full-width inside a run), iteration marks
_CJK_RUN = re.compile("[\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                      "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+")
_MAX_RUN = 4000  # Sudachi refuses inputs over ~49 kB; a run this long is cut in pieces


@lru_cache(maxsize=1)
def _jieba():
    return new_jieba()


_SUDACHI = threading.local()
_SUDACHI_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _sudachi_dictionary():
    from sudachipy import dictionary

    return dictionary.Dictionary(dict="core")


def _sudachi_tokenizer():
    tok = getattr(_SUDACHI, "tok", None)
    if tok is None:
        from sudachipy import tokenizer

        with _SUDACHI_LOCK:
            d = _sudachi_dictionary()
            tok = _SUDACHI.tok = (d.create(tokenizer.Tokenizer.SplitMode.A), tokenizer.Tokenizer.SplitMode.A)
    return tok


def _segment_jieba(run: str) -> list[str]:
    return _jieba().lcut(run, HMM=True)


def _segment_sudachi(run: str) -> list[str]:
    tok, mode = _sudachi_tokenizer()
    return [m.normalized_form() for m in tok.tokenize(run, mode)]


class Tokenizer:
    """A named, deterministic text -> tokens function (the name keys caches of indexes).

    A segmenting tokenizer gives a text without any Han or kana exactly the `words` tokens,
    so an index of such a corpus is shared with the `words` languages (`shares_words_index`).
    """

    def __init__(self, name: str, segment: Callable[[str], list[str]] | None):
        self.name = name
        self._segment = segment

    def __call__(self, text: str) -> list[str]:
        if self._segment is None:
            return fold_words(text)
        out: list[str] = []
        pos = 0
        for m in _CJK_RUN.finditer(text):
            out += fold_words(text[pos:m.start()])
            run = unicodedata.normalize("NFKC", m.group())
            for i in range(0, len(run), _MAX_RUN):
                out += [t.casefold() for t in self._segment(run[i:i + _MAX_RUN]) if _WORD.search(t)]
            pos = m.end()
        out += fold_words(text[pos:])
        return out

    def key_for(self, texts: Sequence[str]) -> str:
        """The name of the tokenizer whose index these texts share: `words` when no text has
        a run this tokenizer would segment (then its tokens are the words tokens, exactly)."""
        if self._segment is None or not any(_CJK_RUN.search(t) for t in texts):
            return "words"
        return self.name

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"


_TOKENIZERS = {"words": Tokenizer("words", None), "jieba": Tokenizer("jieba", _segment_jieba),
               "sudachi": Tokenizer("sudachi", _segment_sudachi)}


def tokenizer_named(name: str) -> Tokenizer:
    return _TOKENIZERS[name]


def tokenizer_for(lang: Language) -> Tokenizer:
    """The tokenizer the registry names for this language (its `segmenter` field)."""
    return _TOKENIZERS[lang.segmenter]


def document_text(doc: dict) -> str:
    """What is indexed for a BEIR corpus row: title + " " + text (BEIR's convention)."""
    return (doc.get("title", "") + " " + doc.get("text", "")).strip()


# --- BM25 --------------------------------------------------------------------------------

class BM25Index:
    """bm25s over `docs` (doc_id, text); scores aligned with `doc_ids`, computed by bm25s
    (`get_scores_from_ids`, float64); a repeated query term counts as often as it occurs."""

    def __init__(self, docs: Sequence[tuple[str, str]], tokenizer: Callable[[str], list[str]],
                 k1: float = K1, b: float = B, tokens: list[list[str]] | None = None):
        import logging

        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG at import
        self.doc_ids = [d for d, _ in docs]
        if len(set(self.doc_ids)) != len(self.doc_ids):
            raise ValueError("BM25Index: duplicate document ids")
        self.tokenizer = tokenizer
        self.k1, self.b = k1, b
        self._pos = {d: i for i, d in enumerate(self.doc_ids)}
        # rank of each doc id in sorted order: the tie-break key
        self._id_rank = np.empty(len(self.doc_ids), dtype=np.int64)
        self._id_rank[np.argsort(np.array(self.doc_ids, dtype=object), kind="stable")] = np.arange(len(self.doc_ids))
        self.bm25 = bm25s.BM25(k1=k1, b=b, method="lucene", dtype="float64", csc_backend="scipy")
        if tokens is None:
            tokens = [tokenizer(text) for _, text in docs]
        self._empty = not any(tokens)
        if not self._empty:
            self.bm25.index(tokens, show_progress=False)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def with_tokenizer(self, tokenizer: Callable[[str], list[str]]) -> "BM25Index":
        """The same index, queried through another tokenizer (one that tokenizes this corpus
        the same way: see Tokenizer.key_for)."""
        view = object.__new__(BM25Index)
        view.__dict__.update(self.__dict__)
        view.tokenizer = tokenizer
        return view

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document (float64, aligned with `doc_ids`)."""
        ids = [] if self._empty else self.bm25.get_tokens_ids(self.tokenizer(query))
        if not ids:
            return np.zeros(len(self.doc_ids))
        return np.asarray(self.bm25.get_scores_from_ids(ids), dtype=np.float64)

    def _sorted(self, idx: np.ndarray, s: np.ndarray) -> list[tuple[str, float]]:
        order = np.lexsort((self._id_rank[idx], -s[idx]))
        return [(self.doc_ids[i], float(s[i])) for i in idx[order]]

    def top(self, query: str, k: int) -> list[tuple[str, float]]:
        """The k best documents with a score above 0, sorted by (-score, doc_id)."""
        s = self.scores(query)
        n = len(s)
        if n > k > 0:
            kth = max(np.partition(s, n - k)[n - k], np.nextafter(0.0, 1.0))
            idx = np.flatnonzero(s >= kth)  # every tie of the k-th score, cut after sorting
        else:
            idx = np.flatnonzero(s > 0)
        return self._sorted(idx, s)[:k]

    def top_many(self, queries: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        return [self.top(q, k) for q in queries]

    def within(self, query: str, doc_ids: list[str]) -> list[tuple[str, float]]:
        """The same index's scores restricted to `doc_ids` (all of them, zeros included),
        sorted by (-score, doc_id)."""
        s = self.scores(query)
        try:
            idx = np.array(sorted({self._pos[d] for d in doc_ids}), dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"BM25Index.within: document {exc.args[0]!r} is not in the index") from None
        return self._sorted(idx, s) if len(idx) else []
