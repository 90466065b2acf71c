"""Confusion sets: a target concept plus look-alike distractors at three tiers.

  easy    another semantic type (another semantic group when the vocabulary has
          several), no common ancestor within EASY_DEPTH steps, and no word of the
          target's names anywhere in the distractor's entry;
  medium  the same semantic type, no common ancestor within MEDIUM_DEPTH steps, and
          some but few of the target's name words in the distractor's entry
          (0 < coverage < HARD_MIN_COVERAGE);
  hard    hierarchy siblings (a shared parent) whose entries cover at least
          HARD_MIN_COVERAGE of the target's name words, the most covering first,
          topped up with covering concepts of the same type.

Why words of entries and not only names: a retriever sees the query (a name of the
target in some language) against whole entries (name, definition, synonyms). Tiers
built from name-to-name character similarity alone were ordered by that similarity but
not for retrievers (real-data within-set BM25 accuracy fr 0.41 / 0.40 / 0.34, es 0.47 /
0.36 / 0.32). `coverage(target, d)` is the IDF-weighted share of the target's name words
(preferred name and synonyms) that occur in d's entry: what a lexical retriever can
confuse.

Pure functions over small in-memory maps; the caller decides which sets to keep.
"""
from __future__ import annotations

import math
import os
import re
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.parquet import pylist, write_parquet
from common.text import char_shingles, jaccard, lexical_similarity, normalize, word_tokens
from common.workers import fork_pool, worker_count
from tasks.allocation.allocator import seeded_order

EASY_DEPTH = 3
MEDIUM_DEPTH = 2
HARD_MIN_COVERAGE = 0.5
MEDIUM_MAX_COVERAGE = 0.2
MEDIUM_CONFUSERS = 1  # look-alikes in a medium set (hard: all k; easy: none)
_WORD = re.compile(r"\w+")  # common.text.word_tokens' words
POOL = 300  # seeded sample of same-type candidates examined per target (keeps full UMLS tractable)
# a look-alike shares one of the target's rare name words: a word in more than 2% of the
# entries, or in more than LOOKALIKE_MAX_DF of them, makes no two names look alike. The
# absolute bound keeps a target's candidates in the hundreds at full UMLS (2% of 3M
# entries is 60k); it binds only above 25k concepts (real-data config: 17k, unchanged).
LOOKALIKE_MAX_DF = 500


class ConceptInfo(NamedTuple):
    """A tuple, not a frozen dataclass: hundreds of thousands are made per build, and a
    frozen dataclass sets each field through object.__setattr__ (1.2 of 1.5 s at paper scale)."""
    cui: str
    tui: str
    group: str
    name: str


class Lexicon:
    """What a lexical retriever over English entries can match, per concept.

    `entries[cui]`: the texts of the concept's English entry (preferred name, synonyms,
    definition); `names[cui]`: its names in every build language (the queries a set may
    get). A concept's *name words* are the words of its names, in any language, that occur
    in some English entry: French "syndrome de marfan" contributes "syndrome" and "marfan",
    Chinese contributes nothing. IDF is over entries; stop-words never count.

    Entry words are held as arrays of word ids (a frozenset is made for a concept when it is
    asked for): per-concept Python sets of every entry's words were the largest structure
    of the allocation stage."""

    def __init__(self, entries: dict[str, list[str]], names, stopwords: frozenset[str] = frozenset()):
        cuis = sorted(entries)
        owner = np.array([i for i, c in enumerate(cuis) for _ in entries[c]], np.int64)
        texts = pa.array([t or "" for c in cuis for t in entries[c]], pa.string())
        self._build(cuis, owner, texts, names, stopwords)

    @classmethod
    def from_texts(cls, cuis: list[str], owner: np.ndarray, texts: pa.Array, names, stopwords: frozenset[str] = frozenset()) -> "Lexicon":
        """`texts[j]` belongs to the entry of `cuis[owner[j]]`; a concept's texts in entry order.
        `names`: anything with `.get(cui, default)` giving the concept's names."""
        lex = cls.__new__(cls)
        lex._build(cuis, owner, texts, names, stopwords)
        return lex

    def _build(self, cuis, owner, texts, names, stopwords) -> None:
        tok_owner, tokens = _entry_tokens(owner, texts, stopwords)
        enc = pc.dictionary_encode(tokens)
        enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
        words_list = pylist(enc.dictionary)
        w = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        # each entry's distinct words in first-occurrence order: a frozenset made from them has
        # the same layout (so the same iteration order, so the same float sums) as one made
        # from the entry's token stream
        _, first = np.unique(tok_owner * max(1, len(words_list)) + w, return_index=True)
        first.sort()
        self._set_up(cuis, tok_owner[first], w[first], words_list, names, stopwords)

    def _set_up(self, cuis: list[str], ent_c: np.ndarray, ent_w: np.ndarray, words_list: list[str], names, stopwords) -> None:
        """The lexicon over its arrays: each entry's distinct words (`ent_c[j]` is the entry
        of word `words_list[ent_w[j]]`, grouped by entry in `cuis` order)."""
        self.names, self.stopwords = names, stopwords
        self.cuis = cuis
        self._index = {c: i for i, c in enumerate(cuis)}
        self._words_list = words_list
        n_words = len(words_list)
        self._ent_c, self._ent_w = ent_c, ent_w
        self._ent_off = np.searchsorted(self._ent_c, np.arange(len(cuis) + 1))
        self._df = np.bincount(self._ent_w, minlength=n_words)
        n = max(1, len(cuis))
        self.idf = {wd: math.log(1 + n / c) for wd, c in zip(self._words_list, self._df.tolist())}
        self._word_id = {wd: i for i, wd in enumerate(self._words_list)}
        self._entry_words: dict[str, frozenset[str]] = {}
        self._name_words: dict[str, frozenset[str]] = {}
        self._totals: dict[str, float] = {}
        self._postings: tuple[np.ndarray, np.ndarray] | None = None
        self._look_alikes: dict[tuple[str, int], list[str]] = {}

    # the files `save` writes into its folder and `load` reads
    FILES = {"concepts": "concepts.parquet", "words": "words.parquet", "entry_words": "entry_words.parquet",
             "stop_words": "stop_words.parquet"}

    def save(self, folder: Path) -> dict[str, str]:
        """Write the lexicon's arrays (not its names, which `load` is given) as parquet:
        `load` makes the same lexicon from them without tokenising every entry again."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = {k: str(folder / name) for k, name in self.FILES.items()}
        write_parquet(pa.table({"cui": pa.array(self.cuis, pa.string())}), Path(paths["concepts"]))
        write_parquet(pa.table({"word": pa.array(self._words_list, pa.string())}), Path(paths["words"]))
        write_parquet(pa.table({"concept": pa.array(self._ent_c.astype(np.int32)), "word": pa.array(self._ent_w.astype(np.int32))}),
                      Path(paths["entry_words"]))
        write_parquet(pa.table({"word": pa.array(sorted(self.stopwords), pa.string())}), Path(paths["stop_words"]))
        return paths

    @classmethod
    def load(cls, paths: dict[str, str], names) -> "Lexicon":
        """The lexicon `save` wrote, with these names (`.get(cui, default)`) and its stop-words."""
        lex = cls.__new__(cls)
        pairs = pq.read_table(paths["entry_words"])
        lex._set_up(pylist(pq.read_table(paths["concepts"])["cui"]),
                    pairs["concept"].to_numpy().astype(np.int64), pairs["word"].to_numpy().astype(np.int64),
                    pylist(pq.read_table(paths["words"])["word"]), names,
                    frozenset(pylist(pq.read_table(paths["stop_words"])["word"])))
        return lex

    def _words(self, texts) -> frozenset[str]:
        return frozenset(w for t in texts for w in _tokens(t) if w not in self.stopwords and not w.isdigit())

    def words_of(self, text: str) -> frozenset[str]:
        return self._words([text])

    def name_words(self, cui: str) -> frozenset[str]:
        hit = self._name_words.get(cui)
        if hit is None:
            hit = self._name_words[cui] = frozenset(w for w in self._words(self.names.get(cui, ())) if w in self.idf)
        return hit

    def entry_words(self, cui: str) -> frozenset[str]:
        hit = self._entry_words.get(cui)
        if hit is None:
            i = self._index.get(cui)
            if i is None:
                return frozenset()
            words = self._words_list
            hit = self._entry_words[cui] = frozenset([words[w] for w in self._ent_w[self._ent_off[i]:self._ent_off[i + 1]].tolist()])
        return hit

    def look_alikes(self, target: str, limit: int = 3) -> list[str]:
        """Concepts whose entries hold the target's rarest name words (the `limit` of highest
        IDF; words in more than 2% of entries, or in more than LOOKALIKE_MAX_DF, say nothing and are skipped): where a lexical
        retriever's confusions come from, whatever the hierarchy says."""
        hit = self._look_alikes.get((target, limit))
        if hit is not None:  # asked for the hard and again for the medium tier
            return hit
        if self._postings is None:
            by_word = np.lexsort((self._ent_c, self._ent_w))
            self._postings = (self._ent_c[by_word], np.concatenate([[0], np.cumsum(self._df)]))
        post_c, post_off = self._postings
        cap = min(max(50, len(self.cuis) // 50), LOOKALIKE_MAX_DF)
        words = sorted(self.name_words(target), key=lambda w: (-self.idf.get(w, 0.0), w))
        ids = [self._word_id[w] for w in words if w in self._word_id and self._df[self._word_id[w]] <= cap][:limit]
        found = {self.cuis[c] for i in ids for c in post_c[post_off[i]:post_off[i + 1]].tolist()}
        found.discard(target)
        hit = self._look_alikes[(target, limit)] = sorted(found)
        return hit

    def coverage(self, target: str, other: str) -> float:
        """IDF-weighted share of the target's name words found in the other's entry."""
        words = self.name_words(target)
        total = self._totals.get(target)
        if total is None:  # the same sum each time: computed once per target
            total = self._totals[target] = _idf_sum(self.idf, words)
        if total == 0:
            return 0.0
        return _idf_sum(self.idf, words & self.entry_words(other)) / total


    def covering(self, target: str, candidates: list[str], threshold: float) -> list[str]:
        """The candidates, in their order, whose `coverage` of the target is at least
        `threshold`. `coverage` decides; a numpy pass over the candidates' entries first drops
        those clearly below (its float64 sums differ from `coverage`'s by rounding only, far
        under 1e-9), so a sibling list of thousands costs a few array operations."""
        if not candidates:
            return []
        ids = np.fromiter(map(self._index.get, candidates, repeat(-1)), np.int64, len(candidates))  # get(c, -1), in C
        maybe = (self._approx_coverage(target, ids) >= threshold - 1e-9).tolist()
        return [c for c, m in zip(candidates, maybe) if m and self.coverage(target, c) >= threshold]

    def not_covering(self, target: str, candidates: list[str], threshold: float) -> list[str]:
        """The candidates, in their order, whose `coverage` of the target is below `threshold`:
        numpy's sums decide where they are more than 1e-9 from it (they differ from
        `coverage`'s by rounding only), `coverage` decides the rest."""
        if not candidates:
            return []
        ids = np.fromiter(map(self._index.get, candidates, repeat(-1)), np.int64, len(candidates))  # get(c, -1), in C
        approx = self._approx_coverage(target, ids)
        sure, unsure = (approx < threshold - 1e-9).tolist(), (approx < threshold + 1e-9).tolist()
        return [c for c, s, u in zip(candidates, sure, unsure) if s or (u and self.coverage(target, c) < threshold)]

    def covering_ids(self, target: str, ids: np.ndarray, threshold: float) -> list[str]:
        """`covering` of the concepts with these entry indexes (into `cuis`; all >= 0), given
        and returned as ids, not strings: a concept's thousands of siblings then cost no
        Python object each. `threshold` > 0 (a concept without an entry covers nothing)."""
        if not len(ids):
            return []
        maybe = ids[self._approx_coverage(target, ids) >= threshold - 1e-9].tolist()
        cuis = self.cuis
        return [cuis[j] for j in maybe if self.coverage(target, cuis[j]) >= threshold]

    def _approx_coverage(self, target: str, ids: np.ndarray) -> np.ndarray:
        """`coverage` of the target by each entry index in `ids` (-1: no entry, 0), summed in
        numpy: equal to it up to float64 rounding."""
        words = self.name_words(target)
        if not words:
            return np.zeros(len(ids))
        wid = np.array(sorted(self._word_id[w] for w in words), np.int64)
        widf = np.array([self.idf[self._words_list[i]] for i in wid], np.float64)
        known = np.flatnonzero(ids >= 0)
        starts, ends = self._ent_off[ids[known]], self._ent_off[ids[known] + 1]
        lens = ends - starts
        # every known candidate's entry words, concatenated; then each one's IDF sum over
        # the target's name words among them
        flat = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        ew = self._ent_w[flat]
        pos = np.minimum(np.searchsorted(wid, ew), len(wid) - 1)
        contrib = np.where(wid[pos] == ew, widf[pos], 0.0)
        sums = np.zeros(len(ids))
        sums[known] = np.bincount(np.repeat(np.arange(len(known)), lens), weights=contrib, minlength=len(known))
        total = _idf_sum(self.idf, words)
        return sums / total if total else sums


def _first_sorted(items: list, keys: list, tiebreak, m: int) -> list:
    """`sorted(items, key=lambda x: (its key, tiebreak(x)))[:m]`, calling `tiebreak` (a hash)
    only for the items that can be among the first m: those whose key is at most the m-th
    smallest."""
    if m <= 0:
        return []
    cut = sorted(keys)[m - 1]
    near = [(key, tiebreak(x), x) for x, key in zip(items, keys) if key <= cut]
    near.sort(key=lambda e: (e[0], e[1]))  # stable, as the full sort is
    return [x for _, _, x in near[:m]]


def _idf_sum(idf: dict[str, float], words) -> float:
    """IDF summed in word order: a set's iteration order follows string hashes, which
    change with PYTHONHASHSEED, and a float sum in another order can differ in its last
    bit, enough to reorder two equally covering candidates."""
    return sum(idf.get(w, 0.0) for w in sorted(words))


def _tokens(text: str) -> list[str]:
    """`word_tokens`, without its per-character Unicode folding for ASCII text (where NFKC
    and accent folding change nothing and casefold is lower)."""
    return _WORD.findall(text.lower()) if text.isascii() else word_tokens(text)


def _entry_tokens(owner: np.ndarray, texts: pa.Array, stopwords: frozenset[str]) -> tuple[np.ndarray, pa.Array]:
    """The counted words of every text, in text order and word order within a text:
    (owner of each word, words). ASCII texts are split by arrow (the same words as
    `word_tokens`: lower-cased runs of [a-z0-9_]); the others by `word_tokens`."""
    texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    texts = pc.fill_null(texts, "")
    ascii_mask = pc.string_is_ascii(texts).to_numpy(zero_copy_only=False)
    asc_rows = np.flatnonzero(ascii_mask)
    lists = pc.split_pattern_regex(pc.ascii_lower(texts.take(pa.array(asc_rows))), r"[^0-9a-z_]+")
    toks = pc.list_flatten(lists)
    rows = asc_rows[pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)]
    keep = pc.and_(pc.not_equal(toks, ""), pc.invert(pc.match_substring_regex(toks, "^[0-9]+$")))
    if stopwords:
        keep = pc.and_(keep, pc.invert(pc.is_in(toks, value_set=pa.array(sorted(stopwords), pa.string()))))
    keep_np = keep.to_numpy(zero_copy_only=False)
    other_rows, other_toks = [], []
    for r, t in zip(np.flatnonzero(~ascii_mask).tolist(), pylist(texts.take(pa.array(np.flatnonzero(~ascii_mask))))):
        for w in word_tokens(t):
            if w not in stopwords and not w.isdigit():
                other_rows.append(r)
                other_toks.append(w)
    all_rows = np.concatenate([rows[keep_np], np.array(other_rows, np.int64)])
    all_toks = pa.concat_arrays([toks.filter(pa.array(keep_np)), pa.array(other_toks, pa.string())])
    order = np.argsort(all_rows, kind="stable")  # text order; word order within a text kept
    return np.asarray(owner, np.int64)[all_rows[order]], all_toks.take(pa.array(order))


@dataclass(frozen=True)
class ConfusionCandidate:
    target_cui: str
    target_name: str
    tier: str
    distractor_cuis: tuple[str, ...]


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


_PAD = 0x1FFFFF  # above every code point: pads a name of 1 or 2 characters to its one shingle


SMALL_BATCH = 8  # fewer names than this: Python sets (numpy's fixed cost per call is more)


def name_similarities(target: str, names: list[str]) -> list[float]:
    """`[lexical_similarity(target, n) for n in names]`, the character-trigram Jaccard: for
    a handful of names (a hard set's covering siblings) with Python sets, for more with
    `_numpy_similarities`."""
    if len(names) < SMALL_BATCH:
        return [lexical_similarity(target, n) for n in names]
    return _numpy_similarities(target, names)


def _numpy_similarities(target: str, names: list[str]) -> list[float]:
    """`name_similarities` with each name's trigrams as integers in numpy (three 21-bit code
    points) instead of a Python set of strings: a medium set ranks ~300 candidates by it,
    most of them new to the build. The shares are int/int divisions in float64, as in
    `jaccard`: the same floats."""
    if not names:
        return []
    texts = [normalize(target), *map(normalize, names)]
    lens = np.fromiter(map(len, texts), np.int64, len(texts))
    cp = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), np.uint32).astype(np.int64)
    # two pads after each text: a text of 1 or 2 characters is one padded shingle, as
    # `char_shingles` makes it one shingle; a longer text's trigrams never reach its pads
    ext = np.insert(cp, np.repeat(np.cumsum(lens), 2), _PAD)
    counts = np.where(lens >= 3, lens - 2, (lens > 0).astype(np.int64))
    starts = np.cumsum(lens + 2) - (lens + 2)
    at = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    code = (ext[at] << 42) | (ext[at + 1] << 21) | ext[at + 2]
    owner = np.repeat(np.arange(len(texts)), counts)
    order = np.lexsort((code, owner))
    owner, code = owner[order], code[order]
    first = np.ones(len(code), bool)
    first[1:] = (owner[1:] != owner[:-1]) | (code[1:] != code[:-1])
    owner, code = owner[first], code[first]  # each text's distinct trigrams
    sizes = np.bincount(owner, minlength=len(texts))
    mine = code[owner == 0]
    shared = np.bincount(owner[np.isin(code, mine)], minlength=len(texts))[1:]
    union = sizes[0] + sizes[1:] - shared
    sims = np.divide(shared, union, out=np.ones(len(names)), where=union > 0)  # two empty names: 1.0
    return sims.tolist()


def build_candidates(concepts: dict[str, ConceptInfo], hierarchy: Hierarchy, k: int, seed: int,
                     targets: list[str], lexicon: Lexicon, one_tier_per_target: bool = False,
                     excluded: frozenset[str] = frozenset()) -> dict[str, list[ConfusionCandidate]]:
    """Every feasible (target, tier) set, each tier list in seeded order.

    With `one_tier_per_target`, target i tries tier i mod 3 first and stops at the first
    feasible tier: a target is used once anyway, and computing all three tiers for every
    candidate target tripled the work at paper scale. Concepts in `excluded` (owned by
    another cell, when overlap covers every role) are never distractors."""
    lazy = lazy_candidates(concepts, hierarchy, k, seed, targets, lexicon, one_tier_per_target, excluded)
    return {tier: list(sets) for tier, sets in lazy.items()}


def lazy_candidates(concepts: dict[str, ConceptInfo], hierarchy: Hierarchy, k: int, seed: int,
                    targets: list[str], lexicon: Lexicon, one_tier_per_target: bool = False,
                    excluded: frozenset[str] = frozenset()) -> dict[str, "LazyTier"]:
    """`build_candidates`' tier lists, each target's sets computed only when a reader of a
    tier list gets to it. A target's sets depend on nothing but the target (and its index),
    so the lists hold exactly what `build_candidates` returns, in the same order; the
    allocator stops reading once its cells are full, and at paper scale it reads a fraction
    of the ~60k targets drawn (computing all of them was most of the stage's time)."""
    sets = _TargetSets(concepts, hierarchy, k, seed, targets, lexicon, one_tier_per_target, excluded)
    out = {}
    for tier in TIERS:
        keys = [seeded_order(seed, f"{tier}:{cui}") for cui in targets]
        # stable: equal keys (a target listed twice) keep their target order, as a stable list sort does
        out[tier] = LazyTier(tier, sorted(range(len(targets)), key=keys.__getitem__), sets)
    return out


TIERS = ("easy", "medium", "hard")


class LazyTier:
    """One tier's sets in seeded order, computed as they are read (and kept: every language
    re-reads the lists from the start). With worker processes (`computed_on`), the targets
    ahead of the reader are computed on them a batch at a time, one batch ahead."""

    def __init__(self, tier: str, order: list[int], sets: "_TargetSets"):
        self.tier, self._order, self._sets = tier, order, sets
        self._pos = 0
        self._done: list[ConfusionCandidate] = []
        self._sent = 0  # positions of `_order` before this one are computed or on the workers
        self._mark = 0  # where the batch sent last starts: reaching it sends the next one

    def __iter__(self):
        i = 0
        while True:
            while i >= len(self._done) and self._pos < len(self._order):
                if self._sets.pool is not None and self._pos >= self._mark:
                    self._send()
                got = self._sets.of(self._order[self._pos]).get(self.tier)
                self._pos += 1
                if got is not None:
                    self._done.append(got)
            if i >= len(self._done):
                return
            yield self._done[i]
            i += 1

    def read(self, passed_over):
        """The tier's candidates in order, as iterating it gives them, except that a target
        `passed_over(cui)` is skipped without its sets being computed (a reader that would
        reject it whatever its distractors: its cell cannot name it, or it is taken), and
        of the others only the tiers that decide whether it is in this one (`in_tier`). The
        sets left uncomputed are computed when another reader gets to them. With worker
        processes, which compute ahead in order, this is plain iteration."""
        sets = self._sets
        if sets.pool is not None:
            yield from self
            return
        for i in self._order:
            if passed_over(sets.targets[i]):
                continue
            got = sets.in_tier(i, self.tier)
            if got is not None:
                yield got

    def _send(self) -> None:
        """Send the workers the next batch of targets nobody has computed or sent, and keep one
        batch in flight beyond the one being read (the reader then rarely waits). At most two
        batches per tier are computed and never read, where the allocator stops."""
        sets = self._sets
        if self._sent <= self._pos:  # nothing sent ahead: send the batch to read now
            self._sent = self._pos
            self._send_batch()
        self._mark = self._sent
        self._send_batch()  # and the next, computed while the reader reads the first

    def _send_batch(self) -> None:
        sets, batch = self._sets, []
        while self._sent < len(self._order) and len(batch) < sets.batch:
            i = self._order[self._sent]
            if not sets.known(i):
                batch.append(i)
            self._sent += 1
        sets.send(batch)


class _TargetSets:
    """The sets of each target (by its index in `targets`), memoised."""

    def __init__(self, concepts, hierarchy, k, seed, targets, lexicon, one_tier_per_target, excluded):
        self.concepts, self.hierarchy, self.k, self.seed = concepts, hierarchy, k, seed
        self.targets, self.lexicon, self.one_tier, self.excluded = targets, lexicon, one_tier_per_target, excluded
        self._memo: dict[int, dict[str, ConfusionCandidate]] = {}
        self.pool = None  # worker processes (`computed_on`), or None: computed here when read
        self.batch = SET_BATCH
        self._pending: dict[int, object] = {}  # target -> the pending answer of the chunk computing it
        # target -> the tiers computed so far (a set, or None: infeasible), while its full
        # result is not: `in_tier` computes only the tiers that decide its answer
        self._tiers: dict[int, dict[str, ConfusionCandidate | None]] = {}
        self.by_tui: dict[str, list[str]] = defaultdict(list)
        # one seeded order per semantic type, computed once: each target then reads a window of
        # it at a target-specific offset (sorting the whole type per target is quadratic at scale)
        for c in sorted(concepts, key=lambda c: seeded_order(seed, f"pool:{c}")):
            self.by_tui[concepts[c].tui].append(c)
        group_sizes = Counter(c.group for c in concepts.values())
        # "another semantic group" only where the vocabulary really has several (full UMLS);
        # the open ontologies are nearly all disorders, so there it means another type
        self.by_group = sum(1 for g, n in group_sizes.items() if n >= max(50, len(concepts) // 20)) >= 2
        self.everyone = sorted((c for c in concepts if c not in excluded), key=lambda c: seeded_order(seed, f"easy-pool:{c}"))
        # per hierarchy id: its entry index in the lexicon (-1: none, or not a possible
        # distractor: not a concept, or excluded), so that siblings are filtered as arrays
        index = lexicon._index
        self.entry_of = np.array([index.get(c, -1) if c in concepts and c not in excluded else -1 for c in hierarchy.cuis],
                                 np.int64)

    def of(self, i: int) -> dict[str, ConfusionCandidate]:
        hit = self._memo.get(i)
        if hit is None:
            pending = self._pending.get(i)
            if pending is None:
                hit = self._memo[i] = self._compute(i)
            else:
                for j, got in pending.get():  # a worker's exception is raised here
                    self._memo[j] = got
                    del self._pending[j]
                hit = self._memo[i]
        return hit

    def in_tier(self, i: int, tier: str) -> ConfusionCandidate | None:
        """`self.of(i).get(tier)`, computing only the tiers that decide it. With one tier per
        target, the target's set is the first feasible tier of its order: it is in `tier`
        when `tier` is feasible and every tier before it is not. Each tier's feasibility
        depends on the target alone, so they are tried in a fixed order, easy first (0.1 ms,
        and feasible for almost every target), and the answer stops at the first that
        settles it: a reader of the scarce medium tier learns that most targets are not
        medium from their easy set alone."""
        hit = self._memo.get(i)
        if hit is not None or i in self._pending:
            return self.of(i).get(tier)
        order = self._order_of(i)
        if tier not in order:
            return None
        deciding = order[:order.index(tier) + 1] if self.one_tier else [tier]
        for t in sorted(deciding, key=TIERS.index):  # easy, medium, hard
            got = self._tier(i, t)
            if (got is None) == (t == tier):  # the tier asked is infeasible, or one before it is feasible
                return None
        return self._tier(i, tier)

    def _order_of(self, i: int) -> list[str]:
        """The tiers target i tries, in order (one tier per target: starting at i mod 3)."""
        return [TIERS[(i + j) % 3] for j in range(3)] if self.one_tier else ["hard", "medium", "easy"]

    def _tier(self, i: int, tier: str) -> ConfusionCandidate | None:
        known = self._tiers.setdefault(i, {})
        if tier not in known:
            known[tier] = self._tier_set(i, tier)
        return known[tier]

    def known(self, i: int) -> bool:
        """Computed, or being computed on a worker."""
        return i in self._memo or i in self._pending

    def send(self, targets: list[int]) -> None:
        """Have the workers compute these targets' sets, `_CHUNK` targets a message (the
        pool hands messages out in the order sent)."""
        for j in range(0, len(targets), _CHUNK):
            part = targets[j:j + _CHUNK]
            pending = self.pool.apply_async(_compute_chunk, (part,))
            for i in part:
                self._pending[i] = pending

    def _compute(self, i: int) -> dict[str, ConfusionCandidate]:
        """Target i's sets: the first feasible tier of its order (one tier per target), or
        every feasible tier."""
        out: dict[str, ConfusionCandidate] = {}
        for tier in self._order_of(i):
            got = self._tier(i, tier)
            if got is not None:
                out[tier] = got
                if self.one_tier:
                    break
        self._tiers.pop(i, None)
        return out

    def _tier_set(self, i: int, tier: str) -> ConfusionCandidate | None:
        """Target i's set of this tier, or None where the tier is infeasible for it."""
        concepts, hierarchy, lexicon, excluded, k = self.concepts, self.hierarchy, self.lexicon, self.excluded, self.k
        by_tui, everyone, seed = self.by_tui, self.everyone, self.seed
        cover = lexicon.coverage

        def hard_set(cui, t, order, related):
            # hard: siblings, most similar first; then lexically close concepts of the same type
            # the siblings that are possible distractors and not related, as entry indexes (in
            # id order: the sort below is a total order, so the order given does not matter)
            sib_ids = hierarchy.sibling_ids(cui)
            sib_ids = sib_ids[~np.isin(sib_ids, hierarchy.ids_of(related))]
            sib_ids = self.entry_of[sib_ids]
            sib = lexicon.covering_ids(cui, sib_ids[sib_ids >= 0], HARD_MIN_COVERAGE)
            sims = dict(zip(sib, name_similarities(t.name, [concepts[s].name for s in sib])))
            sib.sort(key=lambda s: (-cover(cui, s), -sims[s], s))
            hard = sib[:k]
            if len(hard) < k:
                pool = set(same_type_window(cui, t, order, related)) | {
                    c for c in lexicon.look_alikes(cui) if c in concepts and concepts[c].tui == t.tui and c not in related and c not in excluded}
                close = lexicon.covering(cui, [c for c in sorted(pool) if c not in hard], HARD_MIN_COVERAGE)
                close = [c for c, near in zip(close, hierarchy.near_mask(cui, close, 1)) if not near]
                sims = dict(zip(close, name_similarities(t.name, [concepts[c].name for c in close])))
                close.sort(key=lambda c: (-cover(cui, c), -sims[c], c))
                hard += close[: k - len(hard)]
            return tuple(hard) if len(hard) == k else None

        def same_type_window(cui, t, order, related):
            pool = by_tui[t.tui]
            start = int(order("pool")[:12], 16) % max(1, len(pool))
            size = POOL + len(related) + 1
            window = pool[start : start + size]
            if len(window) < size:  # wrap around, never past the start (no repeats)
                window += pool[: min(start, size - len(window))]
            return [c for c in window if c not in related and c not in excluded][:POOL]

        def medium_set(cui, t, order, related):
            # medium: same semantic type, far in the hierarchy; one lexical look-alike (covering
            # as much of the target's name words as a hard distractor does), the others sharing
            # little: one confuser where hard has k and easy none
            confusers = [c for c in lexicon.look_alikes(cui) if c in concepts and c not in related and c not in excluded
                         and concepts[c].tui == t.tui]
            confusers = [c for c in lexicon.covering(cui, confusers, HARD_MIN_COVERAGE)
                         if not hierarchy.near(cui, c, MEDIUM_DEPTH)]
            n = min(MEDIUM_CONFUSERS, k - 1)
            if len(confusers) < n:
                return None  # whatever the others are
            window = same_type_window(cui, t, order, related)
            far = [c for c, near in zip(window, hierarchy.near_mask(cui, window, MEDIUM_DEPTH)) if not near]
            others = lexicon.not_covering(cui, far, MEDIUM_MAX_COVERAGE)
            if len(others) < k - n:
                return None
            sims = name_similarities(t.name, [concepts[c].name for c in others])
            others = _first_sorted(others, [-s for s in sims], order, k - n)
            confusers.sort(key=lambda c: (-cover(cui, c), order(c)))
            return tuple(sorted([*confusers[:n], *others[: k - n]]))

        def easy_set(cui, t, order):
            # easy: another type (another group where there are several), far in the hierarchy
            easy = []
            start = int(order("easy")[:12], 16) % len(everyone)
            for j in range(len(everyone)):  # walk the seeded order from a target-specific start
                c = everyone[(start + j) % len(everyone)]
                other = concepts[c].group != t.group if self.by_group else concepts[c].tui != t.tui
                if other and cover(cui, c) == 0 and not hierarchy.near(cui, c, EASY_DEPTH):
                    easy.append(c)
                    if len(easy) == k:
                        return tuple(sorted(easy))
            return None

        cui = self.targets[i]
        t = concepts[cui]
        order = lambda x: seeded_order(seed, f"{cui}:{x}")  # noqa: E731
        if tier == "easy":
            got = easy_set(cui, t, order)
        else:
            related = set(hierarchy.ancestors_within(cui, 50)) | {cui}
            got = hard_set(cui, t, order, related) if tier == "hard" else medium_set(cui, t, order, related)
        return None if got is None else ConfusionCandidate(cui, t.name, tier, got)


SET_BATCH = 64  # targets per batch sent to the workers (two batches ahead of a tier's reader at most)
_CHUNK = 4  # targets per message to a worker: a few tens of ms of work at paper scale
WORKERS_ENV = "MMEDBENCH_ALLOC_WORKERS"
_FORKED: list = []  # the _TargetSets a forked worker computes with (set just before the fork)


def set_workers() -> int:
    """Worker processes for confusion sets: $MMEDBENCH_ALLOC_WORKERS (1 in a daemonic
    process or a Dask worker), else 1. Opt-in: once the sets cost ~1.3 ms a target, two
    workers at paper scale took more wall time than one (179 vs 131 s, 188 vs 130 CPU s),
    each worker refilling the memos (title shingles, hierarchy neighbourhoods, entry words)
    that the in-process path fills once."""
    if not os.environ.get(WORKERS_ENV, "").strip():
        return 1
    return worker_count(WORKERS_ENV)


def _compute_chunk(targets: list[int]) -> list[tuple[int, dict[str, ConfusionCandidate]]]:
    """In a forked worker: the sets of these targets, with the structures inherited from the parent."""
    sets = _FORKED[0]
    return [(i, sets._compute(i)) for i in targets]


@contextmanager
def computed_on(sets_by_tier: dict[str, LazyTier], workers: int):
    """Within the block, `lazy_candidates`' tier lists are computed on `workers` processes
    forked here (after the lexicon, hierarchy and pools exist, which they share
    copy-on-write), a batch of targets ahead of each tier's reader. A target's sets are a
    function of the target alone, so the lists are what the in-process path reads, in the
    same order, whatever the worker count. The pool is terminated on leaving the block,
    normally (sets computed ahead and never read are dropped) or on an exception (a
    worker's is re-raised as itself)."""
    tiers = list(sets_by_tier.values())
    if workers <= 1 or not tiers:
        yield
        return
    sets = tiers[0]._sets
    _FORKED[:] = [sets]
    try:
        pool = fork_pool(workers, what="confusion sets", env=WORKERS_ENV)  # the lexicon and the allocator's structures, shared
    finally:
        _FORKED[:] = []
    sets.pool = pool
    try:
        yield
    finally:
        sets.pool = None
        sets._pending.clear()
        pool.terminate()
        pool.join()


def mean_similarity(sets: list[tuple[str, list[str]]]) -> float:
    """Mean target-distractor trigram Jaccard over (target_name, distractor_names) pairs."""
    vals = [jaccard(char_shingles(t, 3), char_shingles(d, 3)) for t, ds in sets for d in ds]
    return sum(vals) / len(vals) if vals else 0.0
