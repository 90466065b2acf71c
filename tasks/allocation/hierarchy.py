"""The concept hierarchy as CSR arrays over integer ids: ancestors within a depth, siblings,
nearness (a common ancestor within some steps), for the confusion-set tiers."""
from __future__ import annotations

from itertools import repeat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from common.parquet import pylist


class Hierarchy:
    """Parent/child links over integer ids (CSR arrays): Python sets of CUIs per concept in
    both directions were hundreds of MB at paper scale and GBs at full scale."""

    def __init__(self, parents: list[tuple[str, str]] | None = None, table: pa.Table | None = None):
        """`parents`: (child, parent) pairs; or `table` with string columns cui, parent."""
        if table is None:
            pairs = list(parents or [])
            table = pa.table({"cui": pa.array([c for c, _ in pairs], pa.string()), "parent": pa.array([p for _, p in pairs], pa.string())})
        child, parent = (table[k].combine_chunks() if isinstance(table[k], pa.ChunkedArray) else table[k] for k in ("cui", "parent"))
        ids = pc.unique(pa.concat_arrays([child.cast(pa.string()), parent.cast(pa.string())]))
        self._cuis: list[str] = pylist(ids)
        self._id = {c: i for i, c in enumerate(self._cuis)}
        n = len(self._cuis)
        ci = pc.index_in(child, value_set=ids).to_numpy(zero_copy_only=False).astype(np.int64)
        pi = pc.index_in(parent, value_set=ids).to_numpy(zero_copy_only=False).astype(np.int64)
        pairs = np.unique(ci * max(1, n) + pi)  # distinct links, as the sets were
        ci, pi = pairs // max(1, n), pairs % max(1, n)
        self._up = _csr(ci, pi, n)
        self._down = _csr(pi, ci, n)
        self._memo: dict[tuple[int, int], frozenset[int]] = {}  # candidates recur across targets

    def _parents_of(self, i: int) -> list[int]:
        off, val = self._up
        return val[off[i]:off[i + 1]].tolist()

    def _ancestor_depths(self, i: int, depth: int) -> dict[int, int]:
        out = {i: 0}
        frontier = {i}
        off, val = self._up
        for d in range(1, depth + 1):
            frontier = {p for c in frontier for p in val[off[c]:off[c + 1]].tolist()} - out.keys()
            for p in frontier:
                out[p] = d
        return out

    def ancestors_within(self, cui: str, depth: int) -> dict[str, int]:
        i = self._id.get(cui)
        if i is None:
            return {cui: 0}
        return {self._cuis[a]: d for a, d in self._ancestor_depths(i, depth).items()}

    def _near_set(self, cui: str, depth: int):
        i = self._id.get(cui)
        if i is None:
            return frozenset([cui])  # in no link: its own ancestor only (no id can equal a str)
        key = (i, depth)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = frozenset(self._ancestor_depths(i, depth))
        return hit

    def near(self, a: str, b: str, depth: int) -> bool:
        """True if a and b share an ancestor within `depth` steps of each (or one contains the other)."""
        return not self._near_set(a, depth).isdisjoint(self._near_set(b, depth))

    def near_mask(self, a: str, others: list[str], depth: int) -> list[bool]:
        """`[self.near(a, b, depth) for b in others]`, walking the others' ancestors in numpy
        a level at a time (a medium set checks ~300 candidates per target, most of them seen
        by no earlier target). A node reached by two paths is listed twice: the same set."""
        out = [b == a for b in others]  # near(a, a); and a concept in no link is near itself only
        i = self._id.get(a)
        if i is None or not others:
            return out
        mine = np.array(sorted(self._near_set(a, depth)), np.int64)
        ids = np.fromiter(map(self._id.get, others, repeat(-1)), np.int64, len(others))
        owner = np.flatnonzero(ids >= 0)
        nodes = ids[owner]
        off, val = self._up
        owners, reached = [owner], [nodes]
        for _ in range(depth):
            starts, counts = off[nodes], off[nodes + 1] - off[nodes]
            at = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
            owner, nodes = np.repeat(owner, counts), val[at].astype(np.int64)
            owners.append(owner)
            reached.append(nodes)
        owner, nodes = np.concatenate(owners), np.concatenate(reached)
        for j in np.unique(owner[np.isin(nodes, mine)]).tolist():
            out[j] = True
        return out

    def sibling_ids(self, cui: str) -> np.ndarray:
        """`siblings`, as ascending ids (into `cuis`)."""
        i = self._id.get(cui)
        if i is None:
            return np.zeros(0, np.int32)
        off, val = self._down
        up_off, up = self._up
        parents = up[up_off[i]:up_off[i + 1]]
        if len(parents) == 1:  # the common case: one parent's children, ascending already
            sib = val[off[parents[0]]:off[parents[0] + 1]]
        else:
            sib = np.unique(np.concatenate([val[off[p]:off[p + 1]] for p in parents.tolist()] or [np.zeros(0, np.int32)]))
        return sib[sib != i]

    @property
    def cuis(self) -> list[str]:
        return self._cuis

    def ids_of(self, cuis) -> np.ndarray:
        """The ids of those of these concepts that are in some link."""
        return np.array(sorted({self._id[c] for c in cuis if c in self._id}), np.int64)

    def siblings(self, cui: str) -> set[str]:
        i = self._id.get(cui)
        if i is None:
            return set()
        off, val = self._down
        sib = {self._cuis[s] for p in self._parents_of(i) for s in val[off[p]:off[p + 1]].tolist()}
        sib.discard(cui)
        return sib


def _csr(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and values: the `dst` of each `src`, ascending."""
    order = np.lexsort((dst, src))
    return np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))]), dst[order].astype(np.int32)
