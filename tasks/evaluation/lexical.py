"""BM25 (bm25s) over a cell's corpus, tokenised per language. (Interim version: the evaluate branch owns this module.)"""
from __future__ import annotations

from collections.abc import Callable

import bm25s
import numpy as np

from common.text import word_tokens


def tokenizer_for(lang) -> Callable[[str], list[str]]:
    return word_tokens


def document_text(doc: dict) -> str:
    return f"{doc.get('title', '')} {doc.get('text', '')}".strip()


class BM25Index:
    def __init__(self, docs: list[tuple[str, str]], tokenize: Callable[[str], list[str]]):
        self.ids = [d for d, _ in docs]
        self.pos = {d: i for i, d in enumerate(self.ids)}
        self.tokenize = tokenize
        self.retriever = bm25s.BM25(k1=1.2, b=0.75)
        self.retriever.index([tokenize(t) or [""] for _, t in docs], show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        toks = self.tokenize(query)
        if not toks:
            return np.zeros(len(self.ids), dtype=np.float32)
        return self.retriever.get_scores(toks)

    def within(self, query: str, doc_ids: list[str]) -> list[tuple[str, float]]:
        s = self.scores(query)
        return sorted(((d, float(s[self.pos[d]])) for d in doc_ids), key=lambda x: (-x[1], x[0]))
