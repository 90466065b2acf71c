"""Compiled inner loops of tasks.dedup.minhash (numba; compiled on first use and cached
beside this file, so later processes load them in milliseconds).

Why compiled: from a shingle set to its signature, the work per shingle is a look-up
(shingle -> row of permuted hash values) and a 128-wide minimum. In Python that is a
dict probe and a string comparison per shingle, then numpy gathers that cannot fuse
with the minimum: about 2.5x the work of rensa's Rust loop. Here both are one pass over
a chunk's shingles as UTF-8 bytes, with the minimum kept in registers.

The hash table numbers shingles by their bytes; the values the signatures are made of
are still datasketch's (SHA-1, then its permutations), computed in Python once per
distinct shingle. The table's own hash (FNV-1a) only places shingles in slots: a
collision costs a byte comparison, never a wrong row.
"""
from __future__ import annotations

import numpy as np
from numba import njit, uint64

SHINGLE_END = 0x1F  # "\x1f" ends a shingle inside a set
SET_END = 0x1E  # "\x1e" ends a set

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)

# Statuses of number_shingles.
DONE, NEEDS_ROOM = 0, 1


@njit(cache=True, nogil=True, boundscheck=False)
def number_shingles(buf, lens, state, slot_hash, slot_id, arena, arena_end, ids):
    """Number the shingles of a chunk of sets, new ones after the known ones.

    ``buf``: uint8, the sets' shingles as UTF-8, each shingle followed by SHINGLE_END
    except a set's last, sets separated by SET_END (an empty set is an empty segment).
    ``lens[i]``: shingles in set i. ``state`` (int64[4], updated in place so a call can
    resume): next set, next byte of buf, next entry of ids, shingles known.
    ``slot_hash``/``slot_id``: open-addressing table (power-of-two size, id -1 free).
    ``arena``/``arena_end``: the bytes of shingle i are ``arena[arena_end[i]:arena_end[i + 1]]``
    (``arena_end[0]`` is 0). ``ids``: out, one id per shingle occurrence.

    Returns NEEDS_ROOM before a set that could overfill the table (load above one half)
    or the id arrays; the caller grows them and calls again. The arena must hold
    ``len(buf)`` more bytes (the caller ensures it per chunk)."""
    mask = uint64(len(slot_hash) - 1)
    nbuf = len(buf)
    i, pos, k_out, known = state[0], state[1], state[2], state[3]
    while i < len(lens):
        k = lens[i]
        if (known + k) * 2 > len(slot_hash) or known + k >= len(arena_end):
            state[0], state[1], state[2], state[3] = i, pos, k_out, known
            return NEEDS_ROOM
        for _ in range(k):
            a = pos
            h = _FNV_OFFSET
            while pos < nbuf:
                c = buf[pos]
                if c == SHINGLE_END or c == SET_END:
                    break
                h = (h ^ uint64(c)) * _FNV_PRIME
                pos += 1
            b = pos
            pos += 1  # past the separator
            n = b - a
            s = h & mask
            while True:
                sid = slot_id[s]
                if sid < 0:  # new shingle
                    o = arena_end[known]
                    for q in range(n):
                        arena[o + q] = buf[a + q]
                    arena_end[known + 1] = o + n
                    slot_hash[s] = h
                    slot_id[s] = known
                    ids[k_out] = known
                    known += 1
                    break
                if slot_hash[s] == h:
                    o = arena_end[sid]
                    if arena_end[sid + 1] - o == n:
                        q = 0
                        while q < n and arena[o + q] == buf[a + q]:
                            q += 1
                        if q == n:
                            ids[k_out] = sid
                            break
                s = (s + uint64(1)) & mask
            k_out += 1
        if k == 0:
            pos += 1  # an empty set's segment is its separator alone
        i += 1
    state[0], state[1], state[2], state[3] = i, pos, k_out, known
    return DONE


@njit(cache=True, nogil=True, boundscheck=False)
def rehash(slot_hash, slot_id, new_hash, new_id):
    """Move every entry of one open-addressing table into another (empty) one."""
    mask = uint64(len(new_hash) - 1)
    for j in range(len(slot_id)):
        sid = slot_id[j]
        if sid >= 0:
            h = slot_hash[j]
            s = h & mask
            while new_id[s] >= 0:
                s = (s + uint64(1)) & mask
            new_hash[s] = h
            new_id[s] = sid


@njit(cache=True, nogil=True, boundscheck=False)
def column_minima(table, lens, ids, out):
    """out[i] = min(out[i], column-wise minimum of table[ids[...]] over set i's entries)
    (set i owns lens[i] consecutive entries of ids)."""
    width = table.shape[1]
    acc = np.empty(width, table.dtype)
    p = 0
    for i in range(len(lens)):
        acc[:] = out[i]
        for _ in range(lens[i]):
            row = ids[p]
            p += 1
            for j in range(width):
                v = table[row, j]
                acc[j] = v if v < acc[j] else acc[j]
        out[i] = acc
