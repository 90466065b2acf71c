"""Vocabulary matchers: exact/stemmed token matching, CJK dictionary matching, fuzzy long-form linking."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, NamedTuple
import hashlib
import os
import pyarrow.compute as pc
import pyarrow.parquet as pq
import re
import unicodedata

from common.segmenters import new_jieba
from common.text import normalize
from schemas.config import Language
from tasks.grounding.normalize import GENE_CONTEXT, NAME_CONTINUES, acronym_fits, fold, fold_term, is_acronym
from tasks.grounding.params import GroundingParams, Match, Stemmer
from tasks.grounding.runtime import sudachi_tokens
from tasks.grounding.spans import (WORD, MENTION_BREAK, Candidate, CandidateMatcher, Term, Tier, keep_best_ranked,
                                   select_matches)
from tasks.grounding.stemming import lemma, light_stem


def _pylist(column) -> list:
    """The column's Python values, as `to_pylist` gives them, without a pyarrow scalar per
    value (to_pylist took 4.4 s of 1.1M English atoms' 4 columns; this 0.4 s)."""
    return column.to_numpy(zero_copy_only=False).tolist()


def load_terms(atoms_path: Path, lang: Language) -> list[Term]:
    atoms = pq.read_table(atoms_path, columns=["cui", "lang", "str", "ispref", "sab"])
    atoms = atoms.filter(pc.equal(atoms["lang"], lang.code))
    order = {s: i for i, s in enumerate(lang.preferred_sources)}
    cuis = _pylist(atoms["cui"])
    ranks = zip([not p for p in _pylist(atoms["ispref"])], [order.get(sab, len(order)) for sab in _pylist(atoms["sab"])],
                cuis)
    return list(map(Term._make, zip(_pylist(atoms["str"]), cuis, ranks)))


def fold_terms(terms: list[Term], latin: bool) -> list[str]:
    """Every term's fold_term, computed once per grounder and shared by TermMatcher, the
    QuickUMLS index and the QuickUMLS rank dict."""
    return [fold_term(t.text, latin) for t in terms]


class DictionaryMatcher:
    """Leftmost-longest exact matching of normalised vocabulary strings.

    Normalisation is NFKC + casefold, applied identically to text and terms, so
    full-width/half-width and compatibility forms match; offsets refer to the
    original text (NFKC can change lengths, so we map through a per-char index).
    Kept as the plain matcher; `CJKMatcher` is what the Grounder uses for zh and ja.
    """

    def __init__(self, terms: list[tuple[str, str, bool]], min_len: int = 2):
        self.index: dict[str, list[tuple[bool, str]]] = {}
        for text, cui, pref in terms:
            key = normalize(text).replace(" ", "")
            if len(key) >= min_len:
                self.index.setdefault(key, []).append((pref, cui))
        for key in self.index:
            self.index[key] = sorted(set(self.index[key]), key=lambda x: (not x[0], x[1]))
        self.max_len = max((len(k) for k in self.index), default=0)
        self.min_len = min_len

    def match(self, text: str) -> list[Match]:
        # normalise char by char to keep offsets into the original text
        norm_chars: list[str] = []
        origin: list[int] = []
        for i, ch in enumerate(text):
            for c in normalize(ch):
                if c != " ":
                    norm_chars.append(c)
                    origin.append(i)
        norm = "".join(norm_chars)
        out: list[Match] = []
        i = 0
        while i < len(norm):
            hit = None
            for length in range(min(self.max_len, len(norm) - i), self.min_len - 1, -1):
                cands = self.index.get(norm[i : i + length])
                if cands:
                    hit = (length, cands[0][1])
                    break
            if hit:
                length, cui = hit
                start, end = origin[i], origin[i + length - 1] + 1
                out.append(Match(start, end, text[start:end], cui, 1.0))
                i += length
            else:
                i += 1
        return out


_CJK_SUFFIXES = set("病症")


_VOICING = {"\uff9e", "\uff9f", "\u3099", "\u309a", "\u309b", "\u309c"}


def _kata_to_hira(s: str) -> str:
    return "".join(chr(ord(c) - 0x60) if "\u30a1" <= c <= "\u30f6" else c for c in s)


def cjk_fold(text: str, kana: bool = False) -> tuple[str, list[int], list[int]]:
    """NFKC + casefold with spaces removed; a character and the voicing or combining marks
    after it are normalised together (half-width ｸﾞ -> グ). For every output character:
    the first and one-past-last original index of the group it came from. With `kana`,
    katakana is folded to hiragana."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and (text[j] in _VOICING or unicodedata.combining(text[j])):
            j += 1
        s = unicodedata.normalize("NFKC", text[i:j]).casefold()
        if kana:
            s = _kata_to_hira(s)
        for c in s:
            if c.isspace():
                continue
            out.append(c)
            starts.append(i)
            ends.append(j)
        i = j
    return "".join(out), starts, ends


class CJKMatcher(CandidateMatcher):
    """Exact matching for unsegmented scripts, longest first, with word-boundary and
    (for ja) Sudachi normalised-form matching. See the module docstring."""

    def __init__(self, terms: list[Term], lang_code: str, segment: bool = True, min_len: int = 2):
        self.lang = lang_code
        self.kana = lang_code == "ja"
        self.segment = segment
        self.min_len = min_len
        self.index: dict[str, Term] = {}
        self.nf_index: dict[str, Term] = {}
        for t in terms:
            key = cjk_fold(t.text, self.kana)[0]
            if len(key) >= min_len:
                keep_best_ranked(self.index, key, t)
        if self.kana:
            for t in terms:
                key = cjk_fold("".join(nf for _s, _e, nf in sudachi_tokens(t.text)), True)[0]
                if len(key) >= min_len:
                    keep_best_ranked(self.nf_index, key, t)
        self.max_len = max((len(k) for k in self.index), default=0)
        self.max_nf_len = max((len(k) for k in self.nf_index), default=0)
        self._jieba = None
        if segment and lang_code == "zh":
            tk = new_jieba()
            for t in terms:
                w = t.text.strip()
                if len(w) >= min_len and " " not in w:
                    tk.add_word(w)
            self._jieba = tk

    def _boundaries(self, text: str) -> set[int] | None:
        if not self.segment:
            return None
        if self._jieba is not None:
            b = set()
            for _w, s, e in self._jieba.tokenize(text):
                b.add(s)
                b.add(e)
            return b
        if self.kana:
            b = set()
            for s, e, _nf in sudachi_tokens(text):
                b.add(s)
                b.add(e)
            return b
        return None

    def candidates(self, text: str) -> list[Candidate]:
        norm, starts, ends = cjk_fold(text, self.kana)
        cands = []
        for i in range(len(norm)):
            for length in range(min(self.max_len, len(norm) - i), self.min_len - 1, -1):
                t = self.index.get(norm[i:i + length])
                if t is not None:
                    cands.append((starts[i], ends[i + length - 1], t.cui, 1.0, Tier.EXACT))
                    break
        if self.nf_index:
            toks = sudachi_tokens(text)
            folded = [cjk_fold(nf, True)[0] for _s, _e, nf in toks]
            for i in range(len(toks)):
                acc = ""
                best = None
                for j in range(i, len(toks)):
                    acc += folded[j]
                    if len(acc) > self.max_nf_len:
                        break
                    t = self.nf_index.get(acc)
                    if t is not None and len(acc) >= self.min_len:
                        best = (toks[i][0], toks[j][1], t.cui, 0.95, Tier.STEMMED)
                if best:
                    cands.append(best)
        bounds = self._boundaries(text)
        if bounds is not None:
            # a word may end in a disease suffix the term lacks: 高血压 in 高血压病
            cands = [c for c in cands if c[0] in bounds and (c[1] in bounds or (
                c[1] < len(text) and text[c[1]] in _CJK_SUFFIXES and c[1] + 1 in bounds))]
        return cands

    def match(self, text: str) -> list[Match]:
        return select_matches(self.candidates(text), text)


class TfidfNameLinker:
    """scispacy EntityLinker-style candidate generation, built directly: TF-IDF over character
    3-grams (within word boundaries) of the fold()ed vocabulary strings, cosine nearest
    neighbour. Exact sparse search up to `ann_above` strings (deterministic, a few ms per
    query at 50k strings); an nmslib HNSW index, cached on disk, above that."""

    def __init__(self, terms: list[Term], latin: bool, cache_dir: Path | None = None, ann_above: int = 300_000):
        from sklearn.feature_extraction.text import TfidfVectorizer
        import numpy as np

        self.latin = latin
        best: dict[str, Term] = {}
        for t in terms:
            key = fold_term(t.text, latin)
            if len(key) >= 4:
                keep_best_ranked(best, key, t)
        self.strings = sorted(best)
        self.terms = [best[k] for k in self.strings]
        self.vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), min_df=1, dtype=np.float32)
        self.matrix = self.vectorizer.fit_transform(self.strings) if self.strings else None
        self.ann = None
        if self.strings and len(self.strings) > ann_above:
            self.ann = self._ann(cache_dir)

    def _ann(self, cache_dir: Path | None):
        import nmslib

        index = nmslib.init(method="hnsw", space="cosinesimil_sparse", data_type=nmslib.DataType.SPARSE_VECTOR)
        index.addDataPointBatch(self.matrix)
        path = None
        if cache_dir is not None:
            h = hashlib.sha256("\n".join(self.strings).encode()).hexdigest()[:16]
            path = Path(cache_dir) / "tfidf-ann" / f"{h}.hnsw"
        if path is not None and path.exists():
            index.loadIndex(str(path), load_data=False)
        else:
            index.createIndex({"M": 30, "efConstruction": 100, "post": 0})
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(path.name + f".tmp{os.getpid()}")
                index.saveIndex(str(tmp), save_data=False)
                tmp.replace(path)
        index.setQueryTimeParams({"efSearch": 100})
        return index

    def nearest(self, text: str, k: int = 1) -> list[tuple[Term, float]]:
        """The k vocabulary terms most similar to the text, with their cosine similarity."""
        if self.matrix is None:
            return []
        q = self.vectorizer.transform([fold_term(text, self.latin)])
        if q.nnz == 0:
            return []
        if self.ann is not None:
            ids, dist = self.ann.knnQuery(q, k=k)
            return [(self.terms[i], float(1 - d)) for i, d in zip(ids, dist)]
        sims = (self.matrix @ q.T).toarray().ravel()
        order = sorted(range(len(sims)), key=lambda i: (-sims[i], self.terms[i].rank))[:k] if k > 1 else [int(sims.argmax())]
        return [(self.terms[i], float(sims[i])) for i in order if sims[i] > 0]


# Head words an eponym may stand without: "Lesch-Nyhan" (syndrome), "Crohn" (maladie de).
EPONYM_HEADS = {"en": ({"disease", "syndrome", "disorder"}, set()),
                "fr": (set(), {"maladie de", "syndrome de", "maladie d", "syndrome d"}),
                "es": (set(), {"enfermedad de", "sindrome de"})}


# the only stop-words a reordered (bag) match may contain: "cancer of the rectum"; never a
# coordinator ("Angelman syndrome and Prader-Willi" is two mentions)
BAG_FUNCTION_WORDS = {"en": {"of", "the", "in"}, "fr": {"de", "du", "des", "la", "le", "les", "l", "d"},
                      "es": {"de", "del", "la", "el", "los", "las"}, "ru": set()}


@dataclass(frozen=True)
class TermRules:
    """Which of TermMatcher's rules apply: GroundingParams' TermMatcher fields."""

    stem: bool = True  # stemmed token sequences
    stemmer: Stemmer = "light"  # how a word is reduced (see light_stem, lemma)
    bag: bool = True  # the same stemmed content words in another order
    acronyms: bool = True  # all-caps atoms, case-sensitively
    eponyms: bool = True  # an eponym without its head word
    max_tokens: int = 12  # the longest span tried, in words

    @classmethod
    def of(cls, params: GroundingParams) -> TermRules:
        return cls(stem=params.stem, stemmer=params.stemmer, bag=params.bag, acronyms=params.acronyms,
                   eponyms=params.eponyms)


def word_reducer(rules: TermRules, lang_code: str) -> Callable[[str], str]:
    """A word's stem or lemma under the rules (memoised: a text's words recur), or the word."""
    if not rules.stem:
        return lambda w: w
    if rules.stemmer == "pymorphy3":
        return lru_cache(maxsize=200000)(lambda w: lemma(w, lang_code))
    snowball = rules.stemmer == "snowball"
    return lru_cache(maxsize=200000)(lambda w: light_stem(w, lang_code, snowball))


def eponym_span(toks: list[str], suffix_heads: set[str], prefix_heads: set[str]) -> tuple[int, int] | None:
    """The words of a term left once its head word goes ("Lesch-Nyhan syndrome" -> "Lesch-Nyhan",
    "maladie de Crohn" -> "Crohn"), as a [start, end) word range; None without such a head."""
    rest = None
    if toks[-1] in suffix_heads:
        rest = (0, len(toks) - 1)
    for head in prefix_heads:
        h = head.split()
        if toks[:len(h)] == h and len(toks) > len(h):
            rest = (len(h), len(toks))
    return rest


class TextWords(NamedTuple):
    """A text's words as TermMatcher's rules read them: folded, their stems, whether each is a
    stop-word, and each word's start and end in the original text."""

    words: list[str]
    stems: list[str]
    stop: list[bool]
    starts: list[int]
    ends: list[int]


# a run of words [i, j) of a text: i, j, its (start, end) in the original text, its words
Run = tuple[int, int, tuple[int, int], tuple[str, ...]]


class TermMatcher(CandidateMatcher):
    """Token-level exact, stemmed and bag-of-stems matching of vocabulary strings on the
    fold()ed text (space-delimited languages)."""

    def __init__(self, terms: list[Term], latin: bool, lang_code: str, stopwords: set[str],
                 rules: TermRules = TermRules(), folded: list[str] | None = None):
        """`folded`: the terms' fold_terms when the caller has them already (fold_terms)."""
        self.latin = latin
        self.rules = rules
        self.stem_of = word_reducer(rules, lang_code)
        # a one-word stemmed match needs this many characters ("comidas" is not "coma": both stem
        # to "com"); a lemma is a dictionary word, so a shorter one is safe ("кори" -> "корь")
        self.min_single_stem = 4 if rules.stem and rules.stemmer == "pymorphy3" else 5
        self.stopwords = {fold_term(w, latin) for w in stopwords}
        self.use_bag = rules.bag
        self.bag_ok = {fold_term(w, latin) for w in BAG_FUNCTION_WORDS.get(lang_code, set())}
        self.exact: dict[tuple, Term] = {}
        self.stemmed: dict[tuple, Term] = {}
        self.bag: dict[tuple, Term] = {}
        self.acronyms: dict[str, Term] = {}
        self.eponyms: dict[tuple, tuple[Term, tuple[bool, ...]]] = {}
        acronym_cuis: dict[str, set[str]] = {}
        eponym_cuis: dict[tuple, set[str]] = {}
        heads = EPONYM_HEADS.get(lang_code, (set(), set()))
        longest = 1
        for t, folded_text in zip(terms, folded if folded is not None else fold_terms(terms, latin)):
            if is_acronym(t.text):
                if rules.acronyms:
                    keep_best_ranked(self.acronyms, t.text.strip(), t)
                    acronym_cuis.setdefault(t.text.strip(), set()).add(t.cui)
                continue
            toks = WORD.findall(folded_text)
            if not toks or (len(toks) == 1 and len(toks[0]) < 3):
                continue
            longest = max(longest, len(toks))
            self._index_words(t, toks, heads, eponym_cuis)
        self.acronyms = self._defining_acronyms(terms, acronym_cuis)
        self.eponyms = {k: v for k, v in self.eponyms.items() if len(eponym_cuis[k]) == 1 and k not in self.exact}
        self.max_tokens = min(rules.max_tokens, longest + 2)

    def _index_words(self, t: Term, toks: list[str], heads: tuple[set[str], set[str]],
                     eponym_cuis: dict[tuple, set[str]]) -> None:
        """Index a (non-acronym) term by its words: exactly, as an eponym, stemmed, as a bag."""
        keep_best_ranked(self.exact, tuple(toks), t)
        if self.rules.eponyms and len(toks) >= 2:
            rest = eponym_span(toks, *heads)
            if rest is not None:
                self._index_eponym(t, toks, rest, eponym_cuis)
        stems = tuple(map(self.stem_of, toks))
        if self.rules.stem:
            keep_best_ranked(self.stemmed, stems, t)
        content = [s for w, s in zip(toks, stems) if w not in self.stopwords]
        if self.rules.bag and len(content) >= 2:
            keep_best_ranked(self.bag, tuple(sorted(content)), t)

    def _index_eponym(self, t: Term, toks: list[str], rest: tuple[int, int], eponym_cuis: dict[tuple, set[str]]) -> None:
        """Index the eponym `toks[rest]` when it is a name ("Crohn", "Lesch-Nyhan"), not a letter
        or a code ("C", "FG", "L1"), with the capitals its words must keep."""
        orig = WORD.findall(unicodedata.normalize("NFKC", t.text).replace("'s ", " "))
        if len(orig) != len(toks):
            return
        caps = tuple(w[:1].isupper() for w in orig[rest[0]:rest[1]])
        key = tuple(toks[rest[0]:rest[1]])
        named = any(c and any(ch.islower() for ch in w) for c, w in zip(caps, orig[rest[0]:rest[1]]))
        if named and len(" ".join(key)) >= 4 and not all(w in self.stopwords for w in key):
            eponym_cuis.setdefault(key, set()).add(t.cui)
            cur = self.eponyms.get(key)
            if cur is None or t.rank < cur[0].rank:
                self.eponyms[key] = (t, caps)

    def _defining_acronyms(self, terms: list[Term], acronym_cuis: dict[str, set[str]]) -> dict[str, Term]:
        """The acronyms kept: an acronym naming several concepts (AS: aortic stenosis, Angelman
        syndrome, ...) is left to the text's own definition (abbreviation detection), and one
        must abbreviate one of its concept's names (a gene symbol does not)."""
        names: dict[str, list[str]] = {}
        acronym_concepts = {a.cui for a in self.acronyms.values()}
        for t in terms:
            if t.cui in acronym_concepts and not is_acronym(t.text):
                names.setdefault(t.cui, []).append(t.text)
        return {k: t for k, t in self.acronyms.items()
                if len(acronym_cuis[k]) == 1 and any(acronym_fits(k, n) for n in names.get(t.cui, []))}

    def candidates(self, text: str) -> list[Candidate]:
        """At most one candidate a run of words, from the first rule that matches it (exact,
        stemmed, eponym, bag of stems), in the order of the runs; then the text's acronyms."""
        words = self._words(text)
        runs = self._runs(text, words)
        found: dict[int, Candidate] = {}  # by the run's index in `runs`
        for rule in (self._exact, self._stemmed, self._eponym, self._bag):
            found.update(rule(text, words, runs, found))  # each reads only runs not found yet
        return [found[k] for k in sorted(found)] + self._acronym_candidates(text)

    def _words(self, text: str) -> TextWords:
        """The text's words on its fold()ed copy, with their stems and offsets."""
        norm, origin = fold(text, self.latin)
        toks = [(m.start(), m.end(), m.group()) for m in WORD.finditer(norm)]
        words = [w for _s, _e, w in toks]
        return TextWords(words, [self.stem_of(w) for w in words], [w in self.stopwords for w in words],
                         [origin[s] for s, _e, _w in toks], [origin[e - 1] + 1 for _s, e, _w in toks])

    def _runs(self, text: str, words: TextWords) -> list[Run]:
        """Every run of words [i, j) up to `max_tokens` long; a run of several words stops at a
        MENTION_BREAK (longer runs from i cross it too)."""
        runs = []
        n = len(words.words)
        for i in range(n):
            for j in range(i + 1, min(n, i + self.max_tokens) + 1):
                span = (words.starts[i], words.ends[j - 1])
                if j - i > 1 and MENTION_BREAK.search(text, span[0], span[1]):
                    break
                runs.append((i, j, span, tuple(words.words[i:j])))
        return runs

    def _exact(self, text: str, words: TextWords, runs: list[Run],
               found: dict[int, Candidate]) -> dict[int, Candidate]:
        """A vocabulary string's words, as they are."""
        get = self.exact.get
        return {k: (*span, t.cui, 1.0, Tier.EXACT) for k, (_i, _j, span, run) in enumerate(runs)
                if k not in found and (t := get(run)) is not None}

    def _stemmed(self, text: str, words: TextWords, runs: list[Run],
                 found: dict[int, Candidate]) -> dict[int, Candidate]:
        """Its words stemmed; one word alone needs `min_single_stem` characters ("comidas" is
        not "coma": both stem to "com")."""
        get, stems, shortest = self.stemmed.get, words.stems, self.min_single_stem
        return {k: (*span, t.cui, 0.95, Tier.STEMMED) for k, (i, j, span, _run) in enumerate(runs)
                if k not in found and (t := get(tuple(stems[i:j]))) is not None
                and (j - i > 1 or len(stems[i]) >= shortest)}

    def _eponym(self, text: str, words: TextWords, runs: list[Run],
                found: dict[int, Candidate]) -> dict[int, Candidate]:
        """An eponym without its head word ("Lesch-Nyhan"), written with the capitals its name
        has, and not the first words of another name ("von Willebrand factor")."""
        hits = {}
        get = self.eponyms.get
        for k, (_i, _j, span, run) in enumerate(runs):
            e = None if k in found else get(run)
            if e is None:
                continue
            t, caps = e
            surface = WORD.findall(text[span[0]:span[1]])
            free = not (GENE_CONTEXT.match(text, span[1]) or NAME_CONTINUES.match(text, span[1]))
            if free and len(surface) == len(caps) and all(w[:1].isupper() or not c for w, c in zip(surface, caps)):
                hits[k] = (*span, t.cui, 0.85, Tier.VARIANT)
        return hits

    def _bag(self, text: str, words: TextWords, runs: list[Run],
             found: dict[int, Candidate]) -> dict[int, Candidate]:
        """The same stemmed content words in another order, beginning and ending with one,
        with at most two of the language's BAG_FUNCTION_WORDS between ("cancer of the rectum")."""
        if not self.use_bag:
            return {}
        hits = {}
        stop = words.stop
        for k, (i, j, span, _run) in enumerate(runs):
            if j - i < 2 or stop[i] or stop[j - 1] or k in found:
                continue
            content = [words.stems[m] for m in range(i, j) if not stop[m]]
            fillers = [words.words[m] for m in range(i, j) if stop[m]]
            if len(content) >= 2 and len(fillers) <= 2 and all(w in self.bag_ok for w in fillers):
                t = self.bag.get(tuple(sorted(content)))
                if t is not None:
                    hits[k] = (*span, t.cui, 0.9, Tier.VARIANT)
        return hits

    def _acronym_candidates(self, text: str) -> list[Candidate]:
        """The kept acronyms ("COPD"), case-sensitively, except one the text uses as a gene
        ("APC gene": then none of its occurrences)."""
        if not self.acronyms:
            return []
        found = [(m, self.acronyms[m.group()]) for m in re.finditer(r"[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9]", text)
                 if m.group() in self.acronyms]
        genes = {m.group() for m, _t in found if GENE_CONTEXT.match(text, m.end())}
        return [(m.start(), m.end(), t.cui, 1.0, Tier.EXACT) for m, t in found if m.group() not in genes]

    def match(self, text: str) -> list[Match]:
        return select_matches(self.candidates(text), text)
