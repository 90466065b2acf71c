"""The dense pass: a text span, or an option read as a whole, linked to the vocabulary concept
whose name is nearest in a multilingual sentence encoder's space (XL-BEL / SapBERT-style
nearest-name linking), where string matching found nothing.

    index = NameIndex.build(encoder, {"en": en_terms, "fr": fr_terms}, cache_dir, progress)
    linker = DenseLinker(index, settings)
    linker.link_spans([(lang, text, tokens)], taken)   -> mentions per text
    linker.link_whole([(lang, text)])                  -> (cui, score) or None per text

Names: every vocabulary atom of every language, embedded once per language's content (the
embedding cache is content-addressed: the encoder's fingerprint and the names), so that
English is embedded once however many shards and languages use it. A text in language L is
compared with English names and L's own (the cross-lingual space is what reaches a Japanese
variant through an English synonym). A name shared by several concepts speaks for its
best-ranked one (the preferred atom, then source order, then CUI), as in string matching.

A link is kept only when its cosine is at least `threshold` and exceeds the best other
concept's by at least `margin` (a span equally near two concepts says neither). Spans are
n-grams of the language's segmentation (words; jieba for zh, Sudachi for ja) up to
`max_tokens` tokens, never crossing clause punctuation, never starting or ending with a
stop-word, never overlapping what an earlier pass found. Options, whose concept becomes a
gold passage, use their own, stricter pair of thresholds. Every value here is a function of
the embeddings, which do not depend on batching (each text is encoded on its own tokens),
and ties break by CUI: the same links on any thread count.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.encoders import EmbeddingCache
from tasks.grounding.spans import MENTION_BREAK, Term

TOP_NAMES = 64  # names looked at per query: enough to find the runner-up concept behind a concept's synonyms
CHUNK = 512  # texts per encoder call: the unit of progress
SEARCH_CHUNK = 256  # queries per matrix product (a 256 x names float32 block)


@dataclass(frozen=True)
class DenseSettings:
    """When the dense pass links (calibrated on dev gold: benchmarks/grounding_eval.py)."""

    span_threshold: float
    span_margin: float
    option_threshold: float
    option_margin: float
    max_tokens: int = 3


@dataclass(frozen=True)
class Link:
    cui: str
    score: float  # cosine with the nearest name of `cui`
    margin: float  # over the best name of any other concept


Token = tuple[int, int]  # (start, end) in the text


def span_candidates(text: str, tokens: Sequence[Token], stopwords: set[str], max_tokens: int,
                    taken: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Pure: the (start, end) spans of 1..max_tokens consecutive tokens that cross no clause
    punctuation, start and end with a token that holds a letter and is no stop-word (compared
    casefolded), and overlap no span in `taken`. In text order, shorter first."""
    out = []
    words = list(tokens)
    edge = [any(c.isalpha() for c in text[s:e]) and text[s:e].casefold() not in stopwords for s, e in words]
    for i, (s, _e) in enumerate(words):
        if not edge[i]:
            continue
        for j in range(i, min(i + max_tokens, len(words))):
            e = words[j][1]
            if j > i and MENTION_BREAK.search(text, words[j - 1][1], words[j][0]):
                break
            if not edge[j]:
                continue
            if any(s < te and ts < e for ts, te in taken):
                continue
            out.append((s, e))
    return out


def nearest_links(scores: np.ndarray, name_cuis: Sequence[str], top: int = TOP_NAMES) -> list[Link | None]:
    """Pure: per row of `scores` (queries x names), the best concept, its score and its margin
    over the best name of another concept (none among the `top` best: the margin is taken to
    the `top`-th score, a lower bound of it). Ties: the smaller CUI."""
    out: list[Link | None] = []
    n = scores.shape[1]
    for row in scores:
        if n == 0:
            out.append(None)
            continue
        k = min(top, n)
        idx = np.argpartition(-row, k - 1)[:k] if n > k else np.arange(n)
        best: dict[str, float] = {}
        for j in idx.tolist():
            c, v = name_cuis[j], float(row[j])
            if v > best.get(c, -2.0):
                best[c] = v
        ranked = sorted(best.items(), key=lambda cv: (-cv[1], cv[0]))
        cui, score = ranked[0]
        runner = ranked[1][1] if len(ranked) > 1 else float(row[idx].min())
        out.append(Link(cui, score, score - runner))
    return out


def select_links(found: list[tuple[int, int, Link]], threshold: float, margin: float) -> list[tuple[int, int, Link]]:
    """Pure: the links at or above both gates, non-overlapping, best first (score, then the
    longer span, then leftmost, then CUI); in text order."""
    kept: list[tuple[int, int, Link]] = []
    ok = [f for f in found if f[2].score >= threshold and f[2].margin >= margin]
    for s, e, link in sorted(ok, key=lambda f: (-f[2].score, -(f[1] - f[0]), f[0], f[2].cui)):
        if any(s < ke and ks < e for ks, ke, _l in kept):
            continue
        kept.append((s, e, link))
    return sorted(kept, key=lambda f: (f[0], f[1], f[2].cui))


def best_ranked_names(terms: Sequence[Term]) -> tuple[list[str], list[str]]:
    """Pure: (distinct names, sorted; the best-ranked CUI of each) of a language's atoms."""
    best: dict[str, Term] = {}
    for t in terms:
        name = t.text.strip()
        if not name:
            continue
        cur = best.get(name)
        if cur is None or t.rank < cur.rank:
            best[name] = t
    names = sorted(best)
    return names, [best[n].cui for n in names]


def _key(encoder, side: str, texts: list[str]) -> str:
    payload = json.dumps([encoder.fingerprint, *encoder.key_parts, side, texts], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def encode(encoder, texts: list[str], cache: EmbeddingCache | None, progress: Callable[[int, int], None] | None = None,
           side: str = "document") -> np.ndarray:
    """L2-normalized float32 embeddings of `texts`, read from `cache` when it holds them
    (content-addressed: encoder and texts), else encoded a chunk at a time and stored."""
    key = _key(encoder, side, texts)
    emb = cache.get(key, len(texts), encoder.dimension) if cache is not None else None
    if emb is not None:
        return emb
    parts = []
    for i in range(0, len(texts), CHUNK):
        parts.append(np.asarray(encoder.embed(texts[i:i + CHUNK], side), dtype=np.float32))
        if progress:
            progress(min(i + CHUNK, len(texts)), len(texts))
    emb = np.concatenate(parts) if parts else np.zeros((0, encoder.dimension), dtype=np.float32)
    if cache is not None:
        cache.put(key, emb)
    return emb


LanguageNames = tuple[list[str], list[str], np.ndarray]  # (names, their CUIs, their embeddings)


def embed_names(encoder, terms: Sequence[Term], cache: EmbeddingCache | None,
                progress: Callable[[int, int], None] | None = None) -> LanguageNames:
    """A language's distinct names, the best-ranked CUI of each and their embeddings."""
    texts, cuis = best_ranked_names(terms)
    return texts, cuis, encode(encoder, texts, cache, progress)


class NameIndex:
    """Every language's names and their embeddings; searched per text language."""

    def __init__(self, encoder, names: dict[str, LanguageNames]):
        self.encoder = encoder
        self._names = names
        self._cuis: dict[str, list[str]] = {}

    @classmethod
    def build(cls, encoder, terms_by_lang: dict[str, Sequence[Term]], cache_dir: Path | None,
              progress: Callable[[str, int, int], None] | None = None) -> "NameIndex":
        cache = EmbeddingCache(Path(cache_dir) / encoder.fingerprint[:16]) if cache_dir else None
        names = {}
        for code in sorted(terms_by_lang):
            step = (lambda done, total, code=code: progress(code, done, total)) if progress else None
            names[code] = embed_names(encoder, terms_by_lang[code], cache, step)
        return cls(encoder, names)

    def languages(self) -> list[str]:
        return sorted(self._names)

    def size(self, code: str) -> int:
        return len(self._names[code][0])

    def _codes(self, code: str) -> list[str]:
        """The languages whose names a text in `code` is compared with: English and its own."""
        return sorted({code, "en"} & set(self._names))

    def nearest(self, code: str, queries: np.ndarray) -> list[Link | None]:
        codes = self._codes(code)
        if code not in self._cuis:
            self._cuis[code] = [cui for c in codes for cui in self._names[c][1]]
        cuis = self._cuis[code]
        out: list[Link | None] = []
        for i in range(0, len(queries), SEARCH_CHUNK):
            q = np.ascontiguousarray(queries[i:i + SEARCH_CHUNK], dtype=np.float32)
            # one block per language, side by side (no concatenated copy of the name matrices);
            # a row's scores do not depend on the other rows of the block
            block = np.hstack([q @ self._names[c][2].T for c in codes]) if codes else np.zeros((len(q), 0), np.float32)
            out += nearest_links(block, cuis)
        return out


class DenseLinker:
    def __init__(self, index: NameIndex, settings: DenseSettings, cache_dir: Path | None = None):
        self.index = index
        self.settings = settings
        fp = index.encoder.fingerprint[:16]
        self._cache = EmbeddingCache(Path(cache_dir) / fp) if cache_dir else None

    def _links(self, queries: list[tuple[str, str]], progress=None) -> list[Link | None]:
        """The nearest concept of each (lang, text), in order; each distinct text encoded once."""
        texts = sorted({t for _c, t in queries})
        emb = encode(self.index.encoder, texts, self._cache, progress, side="query")
        row = {t: i for i, t in enumerate(texts)}
        out: list[Link | None] = [None] * len(queries)
        by_lang: dict[str, list[int]] = {}
        for i, (c, _t) in enumerate(queries):
            by_lang.setdefault(c, []).append(i)
        for code, positions in sorted(by_lang.items()):
            links = self.index.nearest(code, emb[[row[queries[i][1]] for i in positions]])
            for i, link in zip(positions, links):
                out[i] = link
        return out

    def link_spans(self, texts: list[tuple[str, str, list[tuple[int, int]]]], progress=None) -> list[list[tuple[int, int, Link]]]:
        """Per (lang, text, candidate spans): the kept links (span gates), in text order."""
        queries = [(code, text[s:e]) for code, text, spans in texts for s, e in spans]
        links = self._links(queries, progress)
        out, k = [], 0
        for code, text, spans in texts:
            found = [(s, e, link) for (s, e), link in zip(spans, links[k:k + len(spans)]) if link is not None]
            k += len(spans)
            out.append(select_links(found, self.settings.span_threshold, self.settings.span_margin))
        return out

    def link_whole(self, texts: list[tuple[str, str]], progress=None) -> list[Link | None]:
        """Per (lang, text): the concept the text names as a whole (option gates), or None."""
        s = self.settings
        return [link if link is not None and link.score >= s.option_threshold and link.margin >= s.option_margin else None
                for link in self._links([(c, t.strip()) for c, t in texts], progress)]
