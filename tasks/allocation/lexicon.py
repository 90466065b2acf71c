"""What a lexical retriever over English entries can match, per concept: the `Lexicon` of
the confusion-set tiers (entry words, IDF, coverage, look-alikes), columnar.

`coverage(target, d)` is the IDF-weighted share of the target's name words (preferred
name and synonyms) that occur in d's entry: what a lexical retriever can confuse. Entry
words are arrays of word ids; the lexicon is written once per vocabulary by the
`index_entries` stage and loaded by allocation (`save` / `load`).
"""
from __future__ import annotations

import math
import re
from itertools import repeat
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.parquet import pylist, write_parquet
from common.text import word_tokens

_WORD = re.compile(r"\w+")  # common.text.word_tokens' words
# a look-alike shares one of the target's rare name words: a word in more than 2% of the
# entries, or in more than LOOKALIKE_MAX_DF of them, makes no two names look alike. The
# absolute bound keeps a target's candidates in the hundreds at full UMLS (2% of 3M
# entries is 60k); it binds only above 25k concepts (real-data config: 17k, unchanged).
LOOKALIKE_MAX_DF = 500


class Lexicon:
    """What a lexical retriever over English entries can match, per concept.

    `entries[cui]`: the texts of the concept's English entry (preferred name, synonyms,
    definition); `names[cui]`: its names in every build language (the queries a set may
    get). A concept's *name words* are the words of its names that occur in some English
    entry: French "syndrome de marfan" contributes "syndrome" and "marfan", Chinese nothing.
    With a set's language (`LanguageNames`) they are that language's own words where it has
    any, else the English ones. IDF is over entries; stop-words never count.

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

    def with_names(self, names) -> "Lexicon":
        """The same entries, words and IDF, with other names (`.get(cui, default)`): the name
        words of a set's language. The entry arrays and the memo of entry words are shared;
        what depends on names (name words, their IDF totals, look-alikes) starts empty."""
        lex = Lexicon.__new__(Lexicon)
        lex.__dict__.update(self.__dict__)
        lex.names = names
        lex._name_words, lex._totals, lex._look_alikes = {}, {}, {}
        return lex

    def _words(self, texts) -> frozenset[str]:
        return frozenset(w for t in texts for w in _tokens(t) if w not in self.stopwords and not w.isdigit())

    def words_of(self, text: str) -> frozenset[str]:
        return self._words([text])

    def entry_index(self, cui: str) -> int:
        """The concept's entry index in the lexicon's arrays, or -1 when it has no entry."""
        return self._index.get(cui, -1)

    def name_words(self, cui: str) -> frozenset[str]:
        """The words of the concept's names that some entry holds: with `LanguageNames`, the
        language's own where it has any, else the English ones. A lexical retriever matches
        the query's words: confusers chosen by the union, mostly the English name's words,
        often shared no word with a French query (real data, BM25 within-set accuracy fr
        0.621 / 0.557 / 0.413, easy > medium p 0.15; by the French words 0.629 / 0.433 /
        0.231, p 0.001; docs/evaluation.md)."""
        hit = self._name_words.get(cui)
        if hit is None:
            parts = self.names.parts(cui) if isinstance(self.names, LanguageNames) else (self.names.get(cui, ()),)
            hit = frozenset()
            for names in parts:
                hit = frozenset(w for w in self._words(names) if w in self.idf)
                if hit:
                    break
            self._name_words[cui] = hit
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


def stop_words(code: str) -> frozenset[str]:
    """spaCy's bundled stop-word list for a language, as the lexicon's words (folded as
    `word_tokens` folds them: French "à" is "a"), read from its module file: importing it
    the usual way imports spaCy, thinc and torch for one word list. Empty for a language
    spaCy has no list for."""
    import importlib.util

    spec = importlib.util.find_spec("spacy")  # finds the package without importing it
    path = Path(spec.submodule_search_locations[0]) / "lang" / code / "stop_words.py"
    if not path.exists():
        return frozenset()
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(f"_spacy_{code}_stop_words", path))
    module.__spec__.loader.exec_module(module)
    return frozenset(w for s in module.STOP_WORDS for w in word_tokens(s))


class LanguageNames:
    """A concept's names a query in `lang` is made from, then its English names: what a
    lexical retriever sees of the query (a French name shares "syndrome" and "marfan" with
    English entries, not "néoplasme") and what the concept is called in its entry. The
    lexicon reads the two `parts` in turn (`Lexicon.name_words`).
    `names_in(cui, lang)`: the concept's names in the language; `english`: `.get(cui, default)`."""

    def __init__(self, lang: str, names_in, english, stopwords: frozenset[str] = frozenset()):
        self.lang, self.names_in, self.english, self.stopwords = lang, names_in, english, stopwords

    def get(self, cui: str, default=()):
        """The language's names without its stop-words (French "de" is in few English entries,
        so it weighs much, and says nothing about the concept), then the English names."""
        return self._own(cui) + list(self.english.get(cui, default))

    def parts(self, cui: str) -> tuple[list[str], list[str]]:
        """(the language's names without stop-words, the English names)."""
        return self._own(cui), list(self.english.get(cui, ()))

    def _own(self, cui: str) -> list[str]:
        if self.lang == "en":
            return []
        return [" ".join(w for w in word_tokens(n) if w not in self.stopwords) for n in self.names_in(cui, self.lang)]


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
