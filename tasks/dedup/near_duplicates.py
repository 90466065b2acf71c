"""Near-duplicate detection: MinHash LSH (datasketch) candidates, confirmed by exact Jaccard.

Texts are shingled by characters after NFKC + casefold (common.text.char_shingles),
so short texts and CJK are never skipped and kana voicing marks are kept. Each text
lives in a namespace ("pivot" for English pivot text, "text:<lang>" for text in a
language); duplicates are only looked for inside a namespace.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from datasketch import MinHash, MinHashLSH

from common.text import char_shingles, jaccard
from tasks.dedup.minhash import MinHasher, lsh_band_keys, lsh_insert_banded, lsh_query_banded


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
    """First come, first kept: callers feed items in a deterministic priority order.

    A text's shingles and its MinHash's LSH bucket keys are computed once and shared by
    the ``find`` and ``add`` calls that look at it (a caller usually asks "is it a
    duplicate?" and then adds it). Callers that know their texts ahead sign them in one
    batch with :meth:`prepare` (or add them in one batch with :meth:`add_many`): a batch
    is many times faster than a text at a time. Results never depend on either: only
    speed. The LSH indexes are datasketch ``MinHashLSH`` objects, filled and queried
    through their in-memory tables (``lsh_insert_banded`` / ``lsh_query_banded``): the
    same buckets and candidates as ``insert`` / ``query`` with datasketch's MinHash
    (tests/tasks/dedup/test_dedup.py)."""

    _RECENT = 1024  # texts remembered from ``find`` for the ``add`` that usually follows

    def __init__(self, threshold: float, num_perm: int, seed: int):
        self.threshold, self.num_perm, self.seed = threshold, num_perm, seed
        # bit-identical to datasketch's MinHash (tests/tasks/dedup/test_minhash.py), ~10x faster
        self._hasher = MinHasher(num_perm, seed)
        self._lsh: dict[str, MinHashLSH] = {}
        # band layout, the same for every namespace's index (threshold, num_perm); building
        # an LSH integrates its band parameters, so this one is built once
        self._layout = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self._shingles: dict[tuple[str, str], frozenset[str]] = {}
        self._exact: dict[tuple[str, frozenset], str] = {}
        # (n, text) -> (shingles, bucket keys or None), signed in a batch by prepare()
        self._prepared: dict[tuple[int, str], tuple[set[str], tuple | None]] = {}
        self._recent: dict[tuple[int, str], tuple[set[str], tuple | None]] = {}

    def _bands(self, sets: list[set[str]]) -> list[tuple]:
        """Each set's LSH bucket key per band."""
        return list(zip(*lsh_band_keys(self._layout, self._hasher.signatures(sets))))

    def prepare(self, texts: Iterable[tuple[str, int]]) -> None:
        """Shingle and sign these (text, n) pairs in one batch, for the ``find`` / ``add``
        calls that follow (kept for the index's life: its shingle sets are the ones the
        index keeps for the added items anyway)."""
        todo = sorted({(n, t) for t, n in texts} - self._prepared.keys())
        sets = [char_shingles(t, n) for n, t in todo]
        for key, sh, hs in zip(todo, sets, self._bands(sets)):
            self._prepared[key] = (sh, hs if sh else None)

    def _shingled(self, text: str, n: int) -> tuple[tuple[int, str], set[str], tuple | None]:
        key = (n, text)
        hit = self._prepared.get(key) or self._recent.get(key)
        if hit is not None:
            return key, hit[0], hit[1]
        return key, char_shingles(text, n), None

    def find(self, item_id: str, namespace: str, text: str, n: int) -> Duplicate | None:
        key, sh, hs = self._shingled(text, n)
        if not sh:
            return None
        exact = self._exact.get((namespace, frozenset(sh)))
        if exact is not None and exact != item_id:
            return Duplicate(item_id, exact, namespace, 1.0)
        lsh = self._lsh.get(namespace)
        if lsh is None:
            return None
        if hs is None:
            hs = self._bands([sh])[0]
            if len(self._recent) >= self._RECENT:
                self._recent.clear()
            self._recent[key] = (sh, hs)
        best: Duplicate | None = None
        for cand in sorted(lsh_query_banded(lsh, hs)):
            if cand == item_id:
                continue
            j = jaccard(sh, self._shingles[(namespace, cand)])
            if j >= self.threshold and (best is None or j > best.jaccard):
                best = Duplicate(item_id, cand, namespace, j)
        return best

    def _lsh_of(self, namespace: str) -> MinHashLSH:
        lsh = self._lsh.get(namespace)
        if lsh is None:
            lsh = self._lsh[namespace] = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm,
                                                    params=(self._layout.b, self._layout.r))
        return lsh

    def _register(self, item_id: str, namespace: str, sh: set[str]) -> bool:
        """Record an item's shingles; False if it has none or is already in."""
        if not sh or (namespace, item_id) in self._shingles:
            return False
        # one frozenset, both the item's shingles and its exact-match key (two copies of the
        # table were 115 MB of the paper-scale allocation)
        self._shingles[(namespace, item_id)] = frozen = frozenset(sh)
        self._exact.setdefault((namespace, frozen), item_id)
        return True

    def add(self, item_id: str, namespace: str, text: str, n: int) -> None:
        _, sh, hs = self._shingled(text, n)
        if self._register(item_id, namespace, sh):
            lsh_insert_banded(self._lsh_of(namespace), item_id, self._bands([sh])[0] if hs is None else hs)

    def add_many(self, items: Iterable[tuple[str, str, str, int]]) -> None:
        """``add(item_id, namespace, text, n)`` for each item in turn, in one batch."""
        new: list[tuple[str, str, set[str], tuple | None]] = []
        for item_id, namespace, text, n in items:
            _, sh, hs = self._shingled(text, n)
            if self._register(item_id, namespace, sh):
                new.append((item_id, namespace, sh, hs))
        unsigned = [i for i, (*_, hs) in enumerate(new) if hs is None]
        bands = dict(zip(unsigned, self._bands([new[i][2] for i in unsigned]))) if unsigned else {}
        for i, (item_id, namespace, _, hs) in enumerate(new):
            lsh_insert_banded(self._lsh_of(namespace), item_id, bands[i] if hs is None else hs)


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
