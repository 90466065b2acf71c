"""Retriever specs (`bm25`, `dense:MODEL_DIR`, `dense:NAME=MODEL_DIR`) and their searchers.

A searcher answers, for one cell, the top documents of each query and the scores of a
confusion set's members. Indexes and embeddings are shared between cells by corpus
content: the xqa corpus of six languages is indexed (or encoded) once.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common.errors import InputError
from schemas.config import Language
from tasks.evaluation.cells import Cell
from tasks.evaluation.lexical import B, K1, BM25Index, document_text, tokenizer_for, tokenizer_named

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RetrieverSpec:
    name: str
    kind: str  # "bm25" | "dense"
    model_dir: Path | None = None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")[:56] or "model"


def parse_retriever(spec: str, base: Path | None = None) -> RetrieverSpec:
    """A retriever from its command-line spec; a dense model folder is checked here, before
    any work (relative paths resolve against `base`, default the current folder)."""
    from tasks.evaluation.dense import check_model_dir

    if spec == "bm25":
        return RetrieverSpec("bm25", "bm25")
    if spec.startswith("dense:") and len(spec) > 6:
        rest = spec[6:]
        name, _, path = rest.partition("=") if "=" in rest else ("", "", rest)
        model_dir = Path(path).expanduser()
        if not model_dir.is_absolute() and base is not None:
            model_dir = base / model_dir
        check_model_dir(model_dir)
        if not name:  # a package's generic "model" folder is named by its package
            folder = Path(os.path.abspath(model_dir))
            name = folder.parent.name if folder.name in ("model", "models") else folder.name
        return RetrieverSpec(f"dense-{_slug(name)}", "dense", model_dir)
    raise InputError(spec, "unknown retriever (expected 'bm25', 'dense:MODEL_DIR' or 'dense:NAME=MODEL_DIR')")


def parse_retrievers(specs: list[str], base: Path | None = None) -> list[RetrieverSpec]:
    out = [parse_retriever(s, base) for s in specs]
    names = [r.name for r in out]
    for n in names:
        if names.count(n) > 1:
            raise InputError(n, "two retrievers with the same name (name one: dense:NAME=MODEL_DIR)")
    if not out:
        raise InputError("--retriever", "no retriever given")
    return out


class Bm25Searcher:
    def __init__(self, index: BM25Index, queries: list[str]):
        self.index, self.queries = index, queries

    def top(self, k: int) -> list[list[tuple[str, float]]]:
        return self.index.top_many(self.queries, k)

    def within(self, i: int, members: list[str]) -> dict[str, float]:
        return dict(self.index.within(self.queries[i], members))


class Bm25Retriever:
    kind = "bm25"

    def __init__(self, spec: RetrieverSpec, registry: dict[str, Language], progress: Progress | None = None):
        self.name = spec.name
        self.registry = registry
        self.progress = progress
        self._indexes: dict[tuple[str, str], BM25Index] = {}

    def parameters(self, langs: list[str]) -> dict[str, str | int | float]:
        toks = ", ".join(f"{c}={tokenizer_for(self.registry[c]).name}" for c in langs)
        return {"implementation": "bm25s", "method": "lucene", "k1": K1, "b": B, "tokenizers": toks}

    def searcher(self, cell: Cell) -> Bm25Searcher:
        tok = tokenizer_for(self.registry[cell.lang])
        texts = [document_text(d) for d in cell.docs]
        key = (cell.corpus_sha, tok.key_for(texts))
        if key not in self._indexes:
            if self.progress:
                self.progress(f"{self.name}: indexing {len(texts)} documents ({key[1]} tokens)")
            self._indexes[key] = BM25Index([(d["_id"], t) for d, t in zip(cell.docs, texts)], tokenizer_named(key[1]))
        return Bm25Searcher(self._indexes[key].with_tokenizer(tok), [q["text"] for q in cell.queries])


class DenseSearcher:
    def __init__(self, index, query_emb):
        self.index, self.query_emb = index, query_emb

    def top(self, k: int) -> list[list[tuple[str, float]]]:
        return self.index.top_many(self.query_emb, k)

    def within(self, i: int, members: list[str]) -> dict[str, float]:
        return self.index.within(self.query_emb[i], members)


class DenseRetriever:
    kind = "dense"

    def __init__(self, spec: RetrieverSpec, cache_dir: Path | None, progress: Progress | None = None):
        from tasks.evaluation.dense import DenseEncoder

        self.name = spec.name
        self.progress = progress
        self.encoder = DenseEncoder(spec.model_dir, cache_dir)
        self._indexes: dict[str, object] = {}

    def parameters(self, langs: list[str]) -> dict[str, str | int | float]:
        return {"implementation": "sentence-transformers"} | self.encoder.parameters

    def _report(self, what: str):
        if not self.progress:
            return None
        return lambda done, total: self.progress(f"{self.name}: encoded {done}/{total} {what}")

    def searcher(self, cell: Cell) -> DenseSearcher:
        from tasks.evaluation.dense import DenseIndex

        if cell.corpus_sha not in self._indexes:
            texts = [document_text(d) for d in cell.docs]
            emb = self.encoder.encode(texts, "document", self._report(f"documents of {cell.task} corpus"))
            self._indexes[cell.corpus_sha] = DenseIndex([d["_id"] for d in cell.docs], emb)
        q = self.encoder.encode([q["text"] for q in cell.queries], "query", self._report(f"{cell.name} queries"))
        return DenseSearcher(self._indexes[cell.corpus_sha], q)


def make_retriever(spec: RetrieverSpec, registry: dict[str, Language], cache_dir: Path | None, progress: Progress | None):
    if spec.kind == "bm25":
        return Bm25Retriever(spec, registry, progress)
    return DenseRetriever(spec, cache_dir, progress)
