"""Dense retrieval: an encoder backend, embeddings cached by content, exact search.

    DenseEncoder(backend, cache_dir).encode(texts, "query" | "document", progress)
    DenseIndex(doc_ids, embeddings).top_many(query_embeddings, k)

A backend turns texts into L2-normalized float32 vectors: a local sentence-transformers
folder (`SentenceTransformersBackend`, here: `dense:DIR` and the built-in English MiniLM)
or a built-in multilingual encoder (common/encoders.py, shared with grounding). Nothing downloads: the
hub is switched offline before sentence-transformers is imported and built-in weights ship
in their packages. Threads are the command's (`--threads`), given to each library through
its own call (torch.set_num_threads, threadpoolctl), never through the process environment.

Embeddings are cached on disk by content: the backend's identity (its weights' sha256 and
whatever else changes its numbers), the side and the texts. A cache file is named by the
sha256 of its own array, checked when read: a file cut short by a full disk or an edit is
not trusted but encoded again (as git treats an object whose bytes do not match its name).
A corpus several cells share is encoded once; progress counts texts as they are encoded.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from common.encoders import EmbeddingCache, files_sha256  # noqa: F401  (files_sha256: shared with common.encoders)
from common.errors import InputError

BATCH = 32
CHUNK = 128  # texts per encode call: the unit of progress
_WEIGHTS = ("*.safetensors", "*.bin", "*.onnx")


def check_model_dir(path: Path) -> Path:
    """The folder, if it holds a local model; else one clear InputError."""
    p = Path(path)
    if not p.is_dir():
        raise InputError(p, "not a local model folder (dense retrieval never downloads; give the folder of a "
                            "sentence-transformers or transformers model)")
    if not (p / "modules.json").exists() and not (p / "config.json").exists():
        raise InputError(p, "not a sentence-transformers or transformers model folder (no modules.json or config.json)")
    if not any(next(p.rglob(w), None) for w in _WEIGHTS):
        raise InputError(p, f"no model weights in the folder ({', '.join(_WEIGHTS)})")
    return p


def model_fingerprint(path: Path) -> str:
    """sha256 over the folder's files (relative path and content): the model's identity."""
    files = sorted(q for q in Path(path).rglob("*") if q.is_file() and "__pycache__" not in q.parts
                   and not q.name.startswith(".") and q.suffix != ".md")  # .gitattributes, README: not the model
    return files_sha256([(f.relative_to(path).as_posix(), f) for f in files])


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class SentenceTransformersBackend:
    """A local sentence-transformers (or transformers, mean-pooled) model folder, on the CPU."""

    implementation = "sentence-transformers"

    def __init__(self, model_dir: Path, threads: int):
        self.model_dir = check_model_dir(model_dir)
        _offline()
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.logging.disable_progress_bar()
        torch.set_num_threads(threads)
        try:
            self.model = SentenceTransformer(str(self.model_dir), device="cpu", local_files_only=True)
        except Exception as exc:  # a broken folder: say which, in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(self.model_dir, f"cannot load a sentence-transformers model ({first})") from None
        self.model.eval()
        self.weights_sha256 = model_fingerprint(self.model_dir)
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(dim() or 0)
        self.fingerprint = self.weights_sha256
        self.key_parts = [self.model.max_seq_length, BATCH, CHUNK]  # batching can move a float's last bits

    def describe(self) -> dict[str, str | int | float]:
        return {"max_seq_length": int(self.model.max_seq_length or 0)}

    def embed(self, texts: list[str], side: str) -> np.ndarray:
        import torch

        fn = self.model.encode_query if side == "query" else self.model.encode_document
        with torch.inference_mode():
            return fn(texts, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True,
                      show_progress_bar=False).astype(np.float32)


class DenseEncoder:
    """A backend's embeddings, cached in memory and (with a cache folder) on disk."""

    def __init__(self, backend, cache_dir: Path | None):
        self.backend = backend
        self.dimension = backend.dimension
        self.cache = EmbeddingCache(Path(cache_dir) / backend.fingerprint[:16]) if cache_dir else None
        self._memory: dict[str, np.ndarray] = {}

    def _key(self, side: str, texts: list[str]) -> str:
        payload = json.dumps([self.backend.fingerprint, *self.backend.key_parts, side, texts], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    def encode(self, texts: list[str], side: str, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Normalized float32 embeddings of `texts` ("query" or "document" side)."""
        key = self._key(side, texts)
        if key in self._memory:
            return self._memory[key]
        emb = self.cache.get(key, len(texts), self.dimension) if self.cache else None
        if emb is None:
            parts = []
            for i in range(0, len(texts), CHUNK):
                parts.append(np.asarray(self.backend.embed(texts[i:i + CHUNK], side), dtype=np.float32))
                if progress:
                    progress(min(i + CHUNK, len(texts)), len(texts))
            emb = np.concatenate(parts) if parts else np.zeros((0, self.dimension), dtype=np.float32)
            if self.cache:
                self.cache.put(key, emb)
        self._memory[key] = emb
        return emb


class DenseIndex:
    """Exact search over normalized embeddings; results sorted by (-score, doc_id)."""

    def __init__(self, doc_ids: list[str], embeddings: np.ndarray):
        self.doc_ids = doc_ids
        self.emb = embeddings.astype(np.float64)  # scored in float64: batching cannot move a printed digit
        self._pos = {d: i for i, d in enumerate(doc_ids)}
        self._id_rank = np.empty(len(doc_ids), dtype=np.int64)
        self._id_rank[np.argsort(np.array(doc_ids, dtype=object), kind="stable")] = np.arange(len(doc_ids))

    def scores(self, queries: np.ndarray) -> np.ndarray:
        return queries.astype(np.float64) @ self.emb.T

    def top_many(self, queries: np.ndarray, k: int, chunk: int = 256) -> list[list[tuple[str, float]]]:
        out = []
        for i in range(0, len(queries), chunk):
            for s in self.scores(queries[i:i + chunk]):
                n = len(s)
                idx = np.argpartition(-s, k - 1)[:k] if n > k else np.arange(n)
                if n > k:
                    idx = np.flatnonzero(s >= s[idx].min())  # every tie of the k-th score
                order = np.lexsort((self._id_rank[idx], -s[idx]))[:k]
                out.append([(self.doc_ids[j], float(s[j])) for j in idx[order]])
        return out

    def within(self, query: np.ndarray, doc_ids: list[str]) -> dict[str, float]:
        idx = [self._pos[d] for d in doc_ids]
        s = self.emb[idx] @ query.astype(np.float64)
        return {d: float(v) for d, v in zip(doc_ids, s)}
