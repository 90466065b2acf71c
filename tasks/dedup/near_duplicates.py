"""Near-duplicate detection: MinHash LSH (datasketch) candidates, confirmed by exact Jaccard.

Texts are shingled by characters after NFKC + casefold (common.text.char_shingles),
so short texts and CJK are never skipped and kana voicing marks are kept. Each text
lives in a namespace ("pivot" for English pivot text, "text:<lang>" for text in a
language); duplicates are only looked for inside a namespace.
"""
from __future__ import annotations

from dataclasses import dataclass

from datasketch import MinHash, MinHashLSH

from common.text import char_shingles, jaccard
from tasks.dedup.minhash import MinHasher, to_lean


def signature(shingles: set[str], num_perm: int, seed: int) -> MinHash:
    """datasketch's own signature (reference; tests compare tasks.dedup.minhash against it)."""
    m = MinHash(num_perm=num_perm, seed=seed)
    m.update_batch([s.encode("utf-8") for s in sorted(shingles)])
    return m


@dataclass(frozen=True)
class Duplicate:
    item_id: str
    kept_id: str
    namespace: str
    jaccard: float

    @property
    def reason(self) -> str:
        return f"near-duplicate of {self.kept_id} ({self.namespace}, jaccard={self.jaccard:.2f})"


class NearDuplicateIndex:
    """First come, first kept: callers feed items in a deterministic priority order."""

    def __init__(self, threshold: float, num_perm: int, seed: int):
        self.threshold, self.num_perm, self.seed = threshold, num_perm, seed
        # bit-identical to datasketch's MinHash (tests/test_minhash.py), ~10x faster
        self._hasher = MinHasher(num_perm, seed)
        self._lsh: dict[str, MinHashLSH] = {}
        self._shingles: dict[tuple[str, str], set[str]] = {}
        self._exact: dict[tuple[str, frozenset], str] = {}

    def find(self, item_id: str, namespace: str, text: str, n: int) -> Duplicate | None:
        sh = char_shingles(text, n)
        if not sh:
            return None
        exact = self._exact.get((namespace, frozenset(sh)))
        if exact is not None and exact != item_id:
            return Duplicate(item_id, exact, namespace, 1.0)
        lsh = self._lsh.get(namespace)
        if lsh is None:
            return None
        best: Duplicate | None = None
        for cand in sorted(lsh.query(self._signature(sh))):
            if cand == item_id:
                continue
            j = jaccard(sh, self._shingles[(namespace, cand)])
            if j >= self.threshold and (best is None or j > best.jaccard):
                best = Duplicate(item_id, cand, namespace, j)
        return best

    def _signature(self, shingles: set[str]):
        return to_lean(self._hasher.signatures([shingles])[0], self.seed)

    def add(self, item_id: str, namespace: str, text: str, n: int) -> None:
        sh = char_shingles(text, n)
        if not sh or (namespace, item_id) in self._shingles:
            return
        lsh = self._lsh.get(namespace)
        if lsh is None:  # building an LSH integrates its band parameters: seconds at scale, so once per namespace
            lsh = self._lsh[namespace] = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm)
        lsh.insert(item_id, self._signature(sh))
        self._shingles[(namespace, item_id)] = sh
        self._exact.setdefault((namespace, frozenset(sh)), item_id)


def find_duplicates(texts: list[tuple[str, str, str, int]], threshold: float, num_perm: int, seed: int) -> list[Duplicate]:
    """All near-duplicates among (id, namespace, text, n) records, earlier records kept (pure)."""
    index = NearDuplicateIndex(threshold, num_perm, seed)
    dups = []
    dropped: set[str] = set()
    for item_id, ns, text, n in texts:
        if item_id in dropped:
            continue
        d = index.find(item_id, ns, text, n)
        if d is not None:
            dups.append(d)
            dropped.add(item_id)
        else:
            index.add(item_id, ns, text, n)
    return dups
