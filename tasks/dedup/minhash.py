"""Batched MinHash signatures, bit-identical to datasketch, for the near-duplicate index.

datasketch hashes one set at a time: a Python call to SHA-1 per element, then a
(set size x num_perm) numpy block per set. Here whole batches are done at once, and
work is shared between texts, because character n-grams repeat heavily across texts:

* Every distinct shingle is hashed once with datasketch's hash function
  (``sha1_hash32``: the first 4 bytes of SHA-1, little-endian; ``sha1_hash64`` for
  "affine64") and permuted once with datasketch's own numpy expressions (same dtypes,
  same wrap-around), into a row of a cached table (one row per distinct shingle).
* The signature of a set is the column-wise minimum of its rows.
* From shingle sets, each set is joined into one string as it arrives (C-level, while
  its freshly made strings are in the CPU cache), a chunk of sets becomes one UTF-8
  buffer, and compiled loops (:mod:`tasks.dedup.kernels`, numba) number its shingles
  by their bytes and take each set's column-wise minimum. Only the rows of shingles
  never seen before are computed in Python, at the end of the chunk.
* From texts (:meth:`MinHasher.text_signatures`), the n-grams of a normalised text are
  covered by one "piece" per word: the word, its trailing space and the next n-1
  characters. The n-grams of the pieces are exactly the n-grams of the text (every
  start position falls in one word's piece), and min is idempotent, so the signature is
  the minimum of the pieces' rows -- and a piece ("fever and") recurs far more than
  the text does: each distinct piece is reduced once and cached like a shingle.

Results are the matrix of datasketch ``hashvalues`` (one row per set, in the scheme's
dtype: uint32 for "affine32", datasketch 2.x's default and what ``MinHash(num_perm,
seed)`` uses; uint64 for "legacy" and "affine64"). An empty set gives the row of an
empty datasketch MinHash (every value the scheme's maximum), as ``update_batch([])``.
Caches are bounded and emptied when full (the shingle table may overshoot its bound
by one chunk's new shingles before it is emptied): results never depend on them, only
speed.

Rows become :class:`datasketch.LeanMinHash` objects through :func:`to_lean` (slots set
directly, no validation or copy), which :class:`datasketch.MinHashLSH` accepts like any
MinHash; :func:`lsh_insert_many` inserts a whole signature matrix into an LSH index.

A :class:`MinHasher` is not thread-safe (its caches change on every call): use one per
thread. Everything runs in the calling thread.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from collections import defaultdict
from functools import lru_cache
from itertools import islice
from operator import itemgetter

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

from common.text import normalize

__all__ = ["MinHasher", "signatures", "text_signatures", "to_lean", "to_leans", "lsh_insert_many", "lsh_band_keys",
           "lsh_insert_banded", "lsh_query_banded", "default_scheme"]

_LEGACY, _AFFINE32, _AFFINE64 = "legacy", "affine32", "affine64"
_MERSENNE = np.uint64((1 << 61) - 1)
_MAX32 = (1 << 32) - 1
_MAX64 = (1 << 64) - 1

# MurmurHash3 finalizer (datasketch.minhash._fmix), per width: s1, m1, s2, m2, s3.
_FMIX = {
    32: (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35), np.uint32(16)),
    64: (np.uint64(33), np.uint64(0xFF51AFD7ED558CCD), np.uint64(33), np.uint64(0xC4CEB9FE1A85EC53), np.uint64(33)),
}

_sha1 = hashlib.sha1


@lru_cache(maxsize=1)
def default_scheme() -> str:
    """The permutation scheme of ``datasketch.MinHash(num_perm, seed)`` as installed
    ("affine32" since datasketch 2.0; "legacy" before, when there was no choice)."""
    return getattr(MinHash(num_perm=1, seed=1), "scheme", _LEGACY)


def _fmix(hv: np.ndarray, width: int) -> np.ndarray:
    s1, m1, s2, m2, s3 = _FMIX[width]
    hv = hv ^ (hv >> s1)
    hv = hv * m1
    hv = hv ^ (hv >> s2)
    hv = hv * m2
    return hv ^ (hv >> s3)


@lru_cache(maxsize=32)
def _permutations(num_perm: int, seed: int, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) exactly as datasketch generates them (by asking datasketch)."""
    kwargs = {"scheme": scheme} if hasattr(MinHash(num_perm=1), "scheme") else {}
    if not kwargs and scheme != _LEGACY:
        raise ValueError(f"the installed datasketch has no scheme {scheme!r}")
    a, b = MinHash(num_perm=num_perm, seed=seed, **kwargs).permutations
    a, b = np.array(a), np.array(b)
    a.setflags(write=False)
    b.setflags(write=False)
    return a, b


def _pieces(joined: str, n: int) -> list[str]:
    """The pieces of texts joined by "\n" (normalised, longer than n): for each word (run
    between " " / "\n"), the text from its start to n-1 characters past the start of
    the next word, cut at the end of its own text. The n-grams of a text's pieces are
    exactly its n-grams: the n-grams starting in a word and its trailing space are those
    of its piece, and a piece reaches no further than its text."""
    cp = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    size = len(cp)
    newline = np.flatnonzero(cp == 10)
    starts = np.empty(1 + int(np.count_nonzero(cp == 32)) + len(newline), dtype=np.intp)
    starts[0] = 0
    starts[1:] = np.flatnonzero((cp == 32) | (cp == 10)) + 1
    nxt = np.empty_like(starts)
    nxt[:-1] = starts[1:]
    nxt[-1] = size + 1
    text_end = np.append(newline, size)[np.searchsorted(newline, starts)]
    ends = np.minimum(nxt + (n - 1), text_end)
    return [joined[a:b] for a, b in zip(starts.tolist(), ends.tolist())]


class _Index(dict):
    """key -> row, numbering unseen keys as they are looked up (``__missing__``), so a
    whole batch is looked up by one C-level call (``itemgetter(*keys)(index)``) with no
    Python function call per key; ``new`` lists the keys numbered since it was reset."""

    __slots__ = ("next", "new")

    def __missing__(self, key):
        i = self.next
        self[key] = i
        self.next = i + 1
        self.new.append(key)
        return i


def _lookup(index: dict, keys: tuple) -> np.ndarray:
    """np.intp array of ``index[k]`` for each key of ``keys``."""
    if len(keys) > 1:
        return np.fromiter(itemgetter(*keys)(index), dtype=np.intp, count=len(keys))
    return np.array([index[k] for k in keys], dtype=np.intp)  # itemgetter(k) returns a scalar


class _RowCache:
    """dict key -> row of a growing table of permuted values; row 0 is the 'empty' row
    (the scheme's maximum: identity of min, and an empty set's signature)."""

    def __init__(self, num_perm: int, dtype: np.dtype, empty: int, max_rows: int):
        self.num_perm, self.dtype, self.empty, self.max_rows = num_perm, dtype, empty, max(2, max_rows)
        self.clear()

    def clear(self) -> None:
        self.rows = _Index()
        self.rows.next, self.rows.new = 1, []
        self.table = np.empty((min(self.max_rows, 4096), self.num_perm), dtype=self.dtype)
        self.table[0] = self.empty
        self.used = 1

    def ids(self, flat: tuple, compute: Callable[[list], np.ndarray]) -> np.ndarray | None:
        """Row of each key in ``flat``; unseen keys get rows ``compute(new keys)``.
        None if they do not fit (the caller then finishes with the table and clears it)."""
        rows = self.rows
        rows.new = new = []
        try:
            ids = _lookup(rows, flat)
            if not new:
                return ids
            lo, hi = self.used, rows.next
            if hi > self.max_rows:
                self._forget(new)
                return None
            values = compute(new)  # before touching the table: compute may use other caches
        except BaseException:  # e.g. a str that is not UTF-8 encodable: keep the cache consistent
            self._forget(new)
            raise
        if hi > len(self.table):
            self.table = _grown(self.table, min(self.max_rows, max(hi, 2 * len(self.table))), lo)
        self.table[lo:hi] = values
        self.used = hi
        return ids

    def _forget(self, new: list) -> None:
        """Undo the numbering of ``new`` (keys that got no row)."""
        for k in new:
            del self.rows[k]
        self.rows.next = self.used
        new.clear()

    def local(self, flat: tuple, compute: Callable[[list], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(table, ids) outside the cache, for a batch with more distinct keys than fit."""
        local = _Index()
        local.next, local.new = 1, []
        ids = _lookup(local, flat)
        table = np.empty((local.next, self.num_perm), dtype=self.dtype)
        table[0] = self.empty
        table[1:] = compute(local.new)
        return table, ids


def _kernels():
    """tasks.dedup.kernels, imported on first use (numba takes a few tenths of a second
    to import, which commands that never hash should not pay)."""
    from tasks.dedup import kernels

    return kernels


def _minima(table: np.ndarray, lens: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """(len(lens), num_perm): for each set (lens[i] consecutive entries of ids), the
    column-wise minimum of its rows of ``table``; row 0 for an empty set."""
    out = np.repeat(table[:1], len(lens), axis=0)
    if len(ids):
        _kernels().column_minima(table, np.ascontiguousarray(lens, dtype=np.intp),
                                 np.ascontiguousarray(ids, dtype=np.intp), out)
    return out


# Separators of a chunk's shingles (tasks.dedup.kernels): a set whose shingles contain
# either is hashed on its own instead (MinHasher._direct), so any str works.
_SHINGLE_END, _SET_END = chr(0x1F), chr(0x1E)


class _ShingleTable:
    """Distinct shingles, numbered by their UTF-8 bytes in a compiled hash table
    (tasks.dedup.kernels), and a table of their permuted hash values (row = number).

    Memory is bounded like the dict caches: once more than ``max_rows`` shingles are
    known (a chunk may overshoot), the next chunk starts from an empty table."""

    def __init__(self, num_perm: int, dtype: np.dtype, empty: int, max_rows: int):
        self.num_perm, self.dtype, self.empty, self.max_rows = num_perm, dtype, empty, max(2, max_rows)
        self.clear()

    def clear(self) -> None:
        self.slot_hash = np.zeros(1 << 12, dtype=np.uint64)
        self.slot_id = np.full(1 << 12, -1, dtype=np.int64)
        self.arena = np.empty(1 << 16, dtype=np.uint8)  # the shingles' bytes, end to end
        self.arena_end = np.zeros(1 << 11, dtype=np.int64)  # shingle i: arena[end[i]:end[i + 1]]
        self.rows = np.empty((1 << 11, self.num_perm), dtype=self.dtype)
        self.known = 0

    def minima(self, encoded: bytes, lens: list[int], permuted: Callable[[list], np.ndarray]) -> np.ndarray:
        """Signatures (in the table's dtype) of a chunk of sets: ``encoded`` is their
        shingles' UTF-8, laid out as tasks.dedup.kernels.number_shingles reads it."""
        k = _kernels()
        lens_a = np.array(lens, dtype=np.intp)
        out = np.full((len(lens), self.num_perm), self.empty, dtype=self.dtype)
        if not len(encoded) and not lens_a.any():
            return out
        data = np.frombuffer(encoded, dtype=np.uint8)
        try:
            old = self.known
            need = int(self.arena_end[old]) + len(data)
            if need > len(self.arena):
                self.arena = _grown(self.arena, max(need, 2 * len(self.arena)), int(self.arena_end[old]))
            ids = np.empty(int(lens_a.sum()), dtype=np.intp)
            state = np.array([0, 0, 0, old], dtype=np.int64)
            while k.number_shingles(data, lens_a, state, self.slot_hash, self.slot_id, self.arena,
                                    self.arena_end, ids) != k.DONE:
                self._make_room(int(state[3]) + int(lens_a[state[0]]))
            new = int(state[3])
            if new > old:
                ends = self.arena_end[old : new + 1].tolist()
                blob, o = self.arena[ends[0] : ends[-1]].tobytes(), ends[0]
                values = permuted([blob[a - o : b - o] for a, b in zip(ends, ends[1:])])
                if new > len(self.rows):
                    self.rows = _grown(self.rows, max(new, 2 * len(self.rows)), old)
                self.rows[old:new] = values
                self.known = new
        except BaseException:  # e.g. interrupted between numbering and rows: start afresh
            self.clear()
            raise
        k.column_minima(self.rows, lens_a, ids, out)
        if self.known > self.max_rows:
            self.clear()
        return out

    def _make_room(self, known: int) -> None:
        """Grow the slots (load at most one half) and the id arrays for ``known`` shingles."""
        if 2 * known > len(self.slot_hash):
            size = len(self.slot_hash)
            while 2 * known > size:
                size *= 2
            slot_hash, slot_id = np.zeros(size, dtype=np.uint64), np.full(size, -1, dtype=np.int64)
            _kernels().rehash(self.slot_hash, self.slot_id, slot_hash, slot_id)
            self.slot_hash, self.slot_id = slot_hash, slot_id
        if known >= len(self.arena_end):
            self.arena_end = _grown(self.arena_end, max(known + 1, 2 * len(self.arena_end)), len(self.arena_end))


def _grown(a: np.ndarray, size: int, keep: int) -> np.ndarray:
    """A larger array (first axis ``size``) with the first ``keep`` entries of ``a``."""
    out = np.empty((size, *a.shape[1:]), dtype=a.dtype)
    out[:keep] = a[:keep]
    return out


class MinHasher:
    """Signatures for many shingle sets (or texts) at once, for one (num_perm, seed,
    scheme). Keep one instance for a whole build: its caches carry across calls.

    Args:
        num_perm: number of permutations (datasketch ``num_perm``).
        seed: datasketch ``seed``.
        scheme: datasketch permutation scheme; None means datasketch's default
            (what ``MinHash(num_perm, seed)`` uses, "affine32" in datasketch 2.x).
        chunk: sets whose minima are taken together (bounds the temporary arrays:
            about chunk x num_perm x 12 bytes plus the chunk's shingle count x 40 bytes).
        group: unused, kept for compatibility (sets are now looked up one at a time).
        cache_bytes: memory bound of each cached table (shingles; pieces of texts).
    """

    def __init__(self, num_perm: int = 128, seed: int = 1, scheme: str | None = None,
                 chunk: int = 2048, group: int = 32, cache_bytes: int = 32 << 20):
        scheme = default_scheme() if scheme is None else scheme
        if scheme not in (_LEGACY, _AFFINE32, _AFFINE64):
            raise ValueError(f"unknown scheme {scheme!r}")
        if num_perm < 1:
            raise ValueError("num_perm must be positive")
        self.num_perm, self.seed, self.scheme = num_perm, seed, scheme
        self.chunk, self.group = max(1, chunk), max(1, group)
        self._a, self._b = _permutations(num_perm, seed, scheme)
        # dtype of the returned hashvalues (datasketch's) and of the cached tables.
        # Legacy values are masked to 32 bits, so its tables can be uint32 (half the
        # memory traffic); results are widened to uint64 at the end.
        self.dtype = np.dtype(np.uint32 if scheme == _AFFINE32 else np.uint64)
        self._work = np.dtype(np.uint64 if scheme == _AFFINE64 else np.uint32)
        self._empty = _MAX64 if scheme == _AFFINE64 else _MAX32
        self._hbytes = 8 if scheme == _AFFINE64 else 4
        self._max_rows = max(2, cache_bytes // (num_perm * self._work.itemsize))
        self._pieces: dict[int, _RowCache] = {}  # n -> cache of text pieces
        self.clear()

    def _new_cache(self) -> _RowCache:
        return _RowCache(self.num_perm, self._work, self._empty, self._max_rows)

    def clear(self) -> None:
        """Forget every cached shingle and piece (frees their memory)."""
        self._shingles = _ShingleTable(self.num_perm, self._work, self._empty, self._max_rows)
        self._pieces.clear()

    # -- hashing ---------------------------------------------------------------------

    def _permuted(self, keys: list) -> np.ndarray:
        """(len(keys), num_perm): datasketch's permuted hash values of each key."""
        nb = self._hbytes
        sha1 = _sha1
        # hashfunc: sha1_hash32 = struct.unpack("<I", sha1(data).digest()[:4])[0]
        #           (sha1_hash64: "<Q", [:8]); str keys are hashed as their UTF-8 bytes.
        digests = b"".join([sha1(k.encode("utf-8") if isinstance(k, str) else k).digest()[:nb] for k in keys])
        hv = np.frombuffer(digests, dtype="<u8" if nb == 8 else "<u4").astype(np.uint64 if nb == 8 else np.uint32)
        a, b = self._a, self._b
        if self.scheme == _LEGACY:
            # datasketch: hv = np.array(hv_list, dtype=np.uint64, ndmin=2).T
            #             phv = np.bitwise_and((hv * a + b) % _mersenne_prime, _max_hash)
            phv = (hv.astype(np.uint64).reshape(-1, 1) * a + b) % _MERSENNE
            return np.bitwise_and(phv, np.uint64(_MAX32)).astype(np.uint32)
        # datasketch: hv = _fmix(np.array(hv_list, dtype).reshape(-1, 1), width)
        #             phv = hv * a + b      (uint32 / uint64: wraps modulo 2^width)
        return _fmix(hv.reshape(-1, 1), 64 if self.scheme == _AFFINE64 else 32) * a + b

    # -- from shingle sets -----------------------------------------------------------

    def signatures(self, shingle_sets: Iterable[Collection]) -> np.ndarray:
        """(number of sets, num_perm) matrix of datasketch hashvalues, in the scheme's
        dtype. Each set is a collection of str (hashed as UTF-8) or bytes; duplicates
        inside a set do not matter; an empty set gives an empty MinHash's values.

        ``shingle_sets`` may be a generator (e.g. ``(char_shingles(t, 5) for t in
        texts)``): each set is looked up as it comes, while its freshly made strings are
        still in the CPU cache, which is markedly faster than looking up a large list of
        sets made earlier."""
        res = self._set_minima(shingle_sets)
        return res if res.dtype == self.dtype else res.astype(self.dtype)

    def _set_minima(self, shingle_sets: Iterable[Collection]) -> np.ndarray:
        table, permuted = self._shingles, self._permuted
        it = iter(shingle_sets)
        done: list[np.ndarray] = []
        sep, end = _SHINGLE_END, _SET_END
        while True:
            joined: list[str] = []
            lens: list[int] = []
            odd: list[tuple[int, Collection]] = []  # sets hashed on their own (_direct)
            # One set at a time, joined into one string by C-level calls while its
            # freshly made strings are in the CPU cache; then it is freed.
            for s in islice(it, self.chunk):
                try:
                    k = len(s)
                except TypeError:  # sets without len(): materialise them
                    s = list(s)
                    k = len(s)
                try:
                    j = sep.join(s)
                except TypeError:  # not all str (bytes shingles)
                    j = None
                if j is None or (k and j.count(sep) != k - 1) or end in j:
                    odd.append((len(lens), s))
                    k, j = 0, ""
                lens.append(k)
                joined.append(j)
            if not lens:
                break
            out = table.minima(end.join(joined).encode("utf-8"), lens, permuted)
            del joined
            for i, s in odd:
                out[i] = self._direct(s)
            done.append(out)
        if not done:
            return np.empty((0, self.num_perm), dtype=self._work)
        return done[0] if len(done) == 1 else np.concatenate(done)

    def _direct(self, shingles: Collection) -> np.ndarray:
        """The signature of one set, hashing each item (str as UTF-8, bytes as they
        are): for sets the shingle table cannot take."""
        items = list(shingles)
        if not items:
            return np.full(self.num_perm, self._empty, dtype=self._work)
        return self._permuted(items).astype(self._work, copy=False).min(axis=0)

    # -- from texts ------------------------------------------------------------------

    def text_signatures(self, texts: Iterable[str], n: int) -> np.ndarray:
        """Bit-identical to ``self.signatures(char_shingles(t, n) for t in texts)``
        (common.text.char_shingles: NFKC + casefold + collapsed whitespace, then
        character n-grams; a text of at most n characters is one shingle; an empty
        text has none), computed from per-word pieces instead of n-grams."""
        if n < 1:
            raise ValueError("n must be positive")
        it = iter(texts)
        pieces = self._pieces.get(n)
        if pieces is None:
            pieces = self._pieces[n] = self._new_cache()

        def piece_rows(new: list[str]) -> np.ndarray:
            # n-grams of each piece (none if it is shorter than n: such a piece starts
            # after the text's last n-gram and covers nothing).
            return self._set_minima([p[i : i + n] for i in range(len(p) - n + 1)] for p in new)

        done: list[np.ndarray] = []
        while True:
            norms = list(map(normalize, islice(it, 256)))
            if not norms:
                break
            out = np.empty((len(norms), self.num_perm), dtype=self._work)
            long_ix = [i for i, t in enumerate(norms) if len(t) > n]
            if len(long_ix) < len(norms):
                short_ix = [i for i, t in enumerate(norms) if len(t) <= n]
                out[short_ix] = self._set_minima([{norms[i]} if norms[i] else () for i in short_ix])
            if long_ix:
                longs = norms if len(long_ix) == len(norms) else [norms[i] for i in long_ix]
                flat = tuple(_pieces("\n".join(longs), n))
                lens = np.fromiter((t.count(" ") + 1 for t in longs), dtype=np.intp, count=len(longs))
                ids = pieces.ids(flat, piece_rows)
                if ids is None:
                    pieces.clear()
                    ids = pieces.ids(flat, piece_rows)
                table = pieces.table
                if ids is None:
                    table, ids = pieces.local(flat, piece_rows)
                out[long_ix] = _minima(table, lens, ids)
            done.append(out)
        res = np.concatenate(done) if done else np.empty((0, self.num_perm), dtype=self._work)
        return res if res.dtype == self.dtype else res.astype(self.dtype)

    def lean(self, row: np.ndarray) -> LeanMinHash:
        return to_lean(row, self.seed, self.scheme)


def _cat(groups: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if len(groups) == 1:
        return groups[0]
    return np.concatenate([g[0] for g in groups]), np.concatenate([g[1] for g in groups])


@lru_cache(maxsize=4)
def _hasher(num_perm: int, seed: int, scheme: str | None) -> MinHasher:
    return MinHasher(num_perm, seed, scheme)


def signatures(shingle_sets: Iterable[Collection], num_perm: int, seed: int, scheme: str | None = None) -> np.ndarray:
    """Matrix of datasketch hashvalues, row i bit-identical to
    ``MinHash(num_perm=num_perm, seed=seed).update_batch([s.encode("utf-8") for s in shingle_sets[i]])``
    (bytes items are hashed as they are). dtype: uint32 for "affine32" (datasketch 2.x
    default), uint64 for "legacy" / "affine64". Uses a shared MinHasher per
    (num_perm, seed, scheme) -- up to 4 kept, each caching at most 32 MiB per table --
    so its caches carry across calls; not thread-safe."""
    return _hasher(num_perm, seed, scheme).signatures(shingle_sets)


def text_signatures(texts: Iterable[str], n: int, num_perm: int, seed: int, scheme: str | None = None) -> np.ndarray:
    """``signatures([char_shingles(t, n) for t in texts], num_perm, seed)``, faster."""
    return _hasher(num_perm, seed, scheme).text_signatures(texts, n)


def to_lean(sig_row: np.ndarray, seed: int, scheme: str | None = None) -> LeanMinHash:
    """A LeanMinHash over ``sig_row`` (a row of a :class:`MinHasher` result, with the
    same seed and scheme) without validation or copy: the row is shared, so do not
    modify the matrix afterwards, and a kept LeanMinHash keeps the matrix alive. Equal
    (==) to ``LeanMinHash(minhash)`` of the datasketch MinHash of the same set; pickles
    and serializes like it."""
    lm = object.__new__(LeanMinHash)
    lm.seed = seed
    lm.scheme = default_scheme() if scheme is None else scheme
    lm.hashvalues = sig_row
    return lm


def to_leans(sigs: np.ndarray, seed: int, scheme: str | None = None) -> list[LeanMinHash]:
    scheme = default_scheme() if scheme is None else scheme
    return [to_lean(row, seed, scheme) for row in sigs]


def lsh_band_keys(lsh: MinHashLSH, sigs: np.ndarray) -> list[list[bytes]]:
    """For each band of ``lsh``, the bucket key of every row of ``sigs``: what
    ``MinHashLSH`` computes per MinHash (``bytes(hashvalues[start:end].byteswap().data)``,
    then ``lsh.hashfunc`` if set), for all rows at once."""
    swapped = sigs.byteswap()
    n = len(sigs)
    out = []
    for start, end in lsh.hashranges:
        width = (end - start) * swapped.itemsize
        blob = swapped[:, start:end].tobytes()
        keys = [blob[i : i + width] for i in range(0, n * width, width)]
        if lsh.hashfunc:
            keys = list(map(lsh.hashfunc, keys))
        out.append(keys)
    return out


def _dict_backed(lsh: MinHashLSH) -> bool:
    """True for a plain in-memory MinHashLSH whose layout this module knows."""
    from datasketch.storage import DictListStorage, DictSetStorage

    return (
        type(lsh) is MinHashLSH
        and not getattr(lsh, "prepickle", True)
        and type(getattr(lsh, "keys", None)) is DictListStorage
        and all(type(t) is DictSetStorage for t in getattr(lsh, "hashtables", [None]))
        and all(isinstance(getattr(s, "_dict", None), defaultdict) for s in (lsh.keys, *lsh.hashtables))
        and len(getattr(lsh, "hashranges", ())) == len(lsh.hashtables)
    )


def lsh_insert_many(lsh: MinHashLSH, keys: Sequence[Hashable], sigs: np.ndarray, seed: int,
                    scheme: str | None = None, check_duplication: bool = True,
                    buffer_size: int = 50000) -> None:
    """Insert ``keys[i]`` with signature row ``sigs[i]`` (from :class:`MinHasher`) into
    ``lsh``: the same index as ``lsh.insert(keys[i], minhash_i)`` for each i in turn
    with the datasketch MinHash of the same set (same buckets, same errors for a wrong
    length, a mixed scheme or a duplicate key).

    An in-memory index (the default ``storage_config``) is filled directly, with the
    bucket keys of all rows computed at once; any other storage goes through
    ``lsh.insertion_session()`` with a LeanMinHash per row."""
    if len(keys) != len(sigs):
        raise ValueError(f"{len(keys)} keys for {len(sigs)} signatures")
    scheme = default_scheme() if scheme is None else scheme
    if not len(keys):
        return
    sigs = np.asarray(sigs)
    if not _dict_backed(lsh):
        with lsh.insertion_session(buffer_size=buffer_size) as session:
            insert = session.insert
            for key, row in zip(keys, sigs):
                insert(key, to_lean(row, seed, scheme), check_duplication=check_duplication)
        return
    if sigs.ndim != 2 or sigs.shape[1] != lsh.h:
        raise ValueError("Expecting minhash with length %d, got %d" % (lsh.h, sigs.shape[-1]))
    if hasattr(lsh, "_minhash_scheme"):
        known = lsh._minhash_scheme
        if known is not None and known != scheme:
            raise ValueError("MinHash scheme %r does not match scheme %r of the MinHash previously "
                             "given to this index" % (scheme, known))
    if check_duplication:
        seen: set = set()
        for key in keys:
            if key in seen or lsh.keys.has_key(key):
                raise ValueError("The given key already exists")
            seen.add(key)
    if hasattr(lsh, "_minhash_scheme"):
        lsh._minhash_scheme = scheme
    for key, hs in zip(keys, zip(*lsh_band_keys(lsh, np.ascontiguousarray(sigs)))):
        lsh_insert_banded(lsh, key, hs)


def lsh_insert_banded(lsh: MinHashLSH, key: Hashable, band_keys: Sequence[bytes]) -> None:
    """``lsh.insert(key, m)`` for an in-memory index (see :func:`lsh_insert_many`), given
    m's bucket key in each band (a row of ``zip(*lsh_band_keys(lsh, sigs))``): no
    numpy work per call. The caller checks that ``key`` is new.
    (DictListStorage.insert(key, *hs) is _dict[key].extend(hs); DictSetStorage.insert(h,
    key) is _dict[h].update((key,)): done inline.)"""
    lsh.keys._dict[key].extend(band_keys)
    for h, table in zip(band_keys, lsh.hashtables):
        table._dict[h].add(key)


def lsh_query_banded(lsh: MinHashLSH, band_keys: Sequence[bytes]) -> set:
    """The keys ``lsh.query(m)`` returns (as a set), given m's bucket keys (see
    :func:`lsh_insert_banded`)."""
    out: set = set()
    for h, table in zip(band_keys, lsh.hashtables):
        bucket = table._dict.get(h)  # .get: a defaultdict would grow an empty bucket
        if bucket:
            out.update(bucket)
    return out

