"""Dense retrieval through sentence-transformers, from a local model folder only.

Nothing downloads: the folder must hold a sentence-transformers model (modules.json) or a
transformers one (config.json, then mean pooling), and the hub is switched offline before
sentence-transformers is imported. Embeddings are normalized and searched exactly (a dot
product with every document). They are cached on disk by content: the model's files, the
side (query or document) and the texts. A corpus several cells share is encoded once.
Torch runs on the CPU with a fixed number of threads, so a run repeats to the byte.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from common.errors import InputError
from common.jsonio import atomic_write

THREADS = 2
BATCH = 32
CHUNK = 512  # texts per encode call: the unit of progress
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
    h = hashlib.sha256()
    for f in sorted(q for q in Path(path).rglob("*") if q.is_file() and "__pycache__" not in q.parts):
        if f.name.startswith(".") or f.suffix == ".md":
            continue  # .gitattributes, README: not the model
        h.update(f.relative_to(path).as_posix().encode() + b"\0")
        with open(f, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class DenseEncoder:
    def __init__(self, model_dir: Path, cache_dir: Path | None):
        self.model_dir = check_model_dir(model_dir)
        _offline()
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.logging.disable_progress_bar()
        torch.set_num_threads(THREADS)
        try:
            self.model = SentenceTransformer(str(self.model_dir), device="cpu", local_files_only=True)
        except Exception as exc:  # a broken folder: say which, in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(self.model_dir, f"cannot load a sentence-transformers model ({first})") from None
        self.model.eval()
        self.fingerprint = model_fingerprint(self.model_dir)
        self.cache_dir = Path(cache_dir) / self.fingerprint[:16] if cache_dir else None
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(dim() or 0)
        self._memory: dict[str, np.ndarray] = {}

    @property
    def parameters(self) -> dict[str, str | int | float]:
        return {"model_sha256": self.fingerprint, "dimension": self.dimension,
                "max_seq_length": int(self.model.max_seq_length or 0), "normalized": "yes", "search": "exact"}

    def _key(self, side: str, texts: list[str]) -> str:
        payload = json.dumps([self.fingerprint, side, self.model.max_seq_length, BATCH, CHUNK, texts], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    def encode(self, texts: list[str], side: str, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Normalized float32 embeddings of `texts` ("query" or "document" side)."""
        import torch

        key = self._key(side, texts)
        if key in self._memory:
            return self._memory[key]
        path = self.cache_dir / f"{key}.npy" if self.cache_dir else None
        if path is not None and path.exists():
            emb = np.load(path)
        else:
            fn = self.model.encode_query if side == "query" else self.model.encode_document
            parts = []
            with torch.inference_mode():
                for i in range(0, len(texts), CHUNK):
                    parts.append(fn(texts[i:i + CHUNK], batch_size=BATCH, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False).astype(np.float32))
                    if progress:
                        progress(min(i + CHUNK, len(texts)), len(texts))
            emb = np.concatenate(parts) if parts else np.zeros((0, self.dimension), dtype=np.float32)
            if path is not None:
                with atomic_write(path, "wb") as fh:
                    np.save(fh, emb)
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
