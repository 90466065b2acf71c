"""Grounding: find UMLS concepts (CUIs) mentioned in a text.

Space-delimited languages (en, fr, es, ru, ...) work on a normalised copy of the text
(`fold`: NFKC, casefold, accents and ligatures folded for Latin scripts, Greek letters
spelled out, dashes/slashes/apostrophes as spaces, possessive 's dropped), with offsets
mapped back to the original. Candidates come from:

1. `TermMatcher`: vocabulary strings matched token by token: exactly (score 1.0); after
   stemming (0.95; Snowball with -itis protected, British spellings folded for en: "tumours"
   = "tumor", "épanchements pleuraux" = "épanchement pleural"; or, where the registry says
   `morphology = "pymorphy3"` (ru), every word's dictionary lemma: "сахарным диабетом" =
   "сахарный диабет"); as the same stemmed content
   words in another order, with only "of/the/de/del..." between (0.9: "cancer of the rectum"
   = "rectum cancer"); an eponym without its head word (0.85: "Lesch-Nyhan" = "Lesch-Nyhan
   syndrome", capitals required). No match crosses brackets or clause punctuation. An
   all-capitals vocabulary atom ("COPD") matches case-sensitively, and only when it names one
   concept, abbreviates one of that concept's names (so gene symbols listed as disease
   synonyms, "WT1", are left out) and is not used as a gene ("APC gene" does not count).
2. `QuickUMLSMatcher`: approximate matching (simstring, character trigrams) on the folded
   text, with spaCy's blank tokenizer and a local stop-word corpus (nothing downloaded).
3. Abbreviations (en, fr, es): scispacy's AbbreviationDetector on `spacy.blank("en")`, plus
   "long form (XX)" definitions it misses when XX abbreviates a grounded mention. A defined
   short form takes its long form's concept (over any vocabulary acronym), when the match
   holds the long form's head ("Wiskott-Aldrich syndrome protein (WASP)" is a protein); the
   text is also read with short forms spelled out ("G6PD deficiency" = "glucose-6-phosphate
   dehydrogenase deficiency"); a long form no term covers is linked by `TfidfNameLinker` (char
   3-gram TF-IDF, cosine >= 0.8, scispacy EntityLinker-style) unless the linked term adds a
   head word ("... dehydrogenase" is not "... dehydrogenase deficiency").

CJK (zh, ja) use `CJKMatcher`: exact matching of NFKC + casefolded, space-free strings (a
half-width kana and its voiced mark normalised together: ｸﾞ = グ), katakana folded to
hiragana and Sudachi normalised forms for ja (送り仮名 and kanji variants: 引揚げ = 引き揚げ),
and word boundaries from a segmenter (jieba with the vocabulary's terms added, for zh;
Sudachi for ja): a term is not found inside another word (肺炎 in 肺炎链球菌), though a word
may add the disease suffix 病/症 (高血压 in 高血压病).

Then, for every language: overlapping candidates are resolved longest first (then exact
before stemmed before fuzzy, then score); bare generic head nouns ("disease", 疾病) and
bare stop-words are dropped; and where `negation` is on (zh, ja: exam vignettes list absent
findings, 无发热、呕吐 / 発熱なし) mentions in the scope of a negation cue are dropped
(`Grounder.ground(text, include_negated=True)` keeps them).

Per-language parameters (`LANGUAGE_DEFAULTS`, overridable by registry fields, see
`params_for`) were chosen on NCBI-disease train/develop, Mantra GSC and CNMLEQA;
docs/grounding.md has the measurements. Indexes are built from the atoms table and cached
by its content hash and the normalisation version.
"""
from __future__ import annotations

from pathlib import Path
import re

from schemas.config import Language
from tasks.grounding.abbreviations import AbbreviationExpander, expand_abbreviations
from tasks.grounding.matchers import CJKMatcher, TermMatcher, TfidfNameLinker, TermRules, cjk_fold, fold_terms, load_terms
from tasks.grounding.negation import negated
from tasks.grounding.normalize import GENERIC_TERMS, HEAD_WORDS, PAREN_SHORT, acronym_fits, fold_term
from tasks.grounding.params import GroundingParams, Match, params_for
from tasks.grounding.quickumls_index import quickumls_index
from tasks.grounding.quickumls_matcher import QuickUMLSMatcher
from tasks.grounding.runtime import gc_paused
from tasks.grounding.spans import WORD, Candidate, CandidateMatcher, Term, keep_best_ranked, select_matches
from tasks.grounding.stopwords import language_stopwords


class Grounder:
    """One language's grounder, built from the atoms table. `threshold` and `window` given
    explicitly override the language's tuned defaults (`params_for`); `params` replaces them
    whole (a benchmark's ablation builds its grounder so, not by patching the defaults)."""

    def __init__(self, atoms_path: Path, lang: Language, cache_root: Path, threshold: float | None = None,
                 window: int | None = None, *, params: GroundingParams | None = None):
        with gc_paused():
            self._build(Path(atoms_path), lang, Path(cache_root), params or params_for(lang, threshold, window))

    def _build(self, atoms_path: Path, lang: Language, cache_root: Path, p: GroundingParams) -> None:
        self.lang = lang
        self.params = p
        self.abbrev = None
        self.quickumls = None
        self.latin = "Latin" in lang.scripts
        terms = load_terms(Path(atoms_path), lang)
        self.generic = GENERIC_TERMS.get(lang.code, set()) if p.generic else set()
        if lang.grounder == "dictionary":
            self.matcher = CJKMatcher(terms, lang.code, segment=p.segment)
            self.generic = {cjk_fold(g, lang.code == "ja")[0] for g in self.generic}
        else:
            self.stopwords = {fold_term(w, self.latin) for w in language_stopwords(lang)}
            folded = fold_terms(terms, self.latin)  # once, for the matcher, the index and the ranks
            self.matcher = TermMatcher(terms, self.latin, lang.code, language_stopwords(lang), TermRules.of(p), folded)
            if p.quickumls:
                index = quickumls_index(Path(atoms_path), lang, Path(cache_root), terms, folded)
                rank: dict[str, Term] = {}
                for t, key in zip(terms, folded):
                    keep_best_ranked(rank, key, t)
                self.quickumls = QuickUMLSMatcher(index, lang, p.threshold, p.window, Path(cache_root),
                                              similarity=p.similarity, term_rank=rank)
            if p.abbreviations:
                self.abbrev = AbbreviationExpander()
        # the candidate matchers, run in turn on every text (their candidates resolved together)
        self.matchers: list[CandidateMatcher] = [self.matcher] + ([self.quickumls] if self.quickumls is not None else [])
        self._terms = terms
        self._cache_root = Path(cache_root)
        self._linker = None

    @property
    def linker(self) -> TfidfNameLinker:
        """Built on first use (only abbreviation long forms need it)."""
        if self._linker is None:
            self._linker = TfidfNameLinker(self._terms, self.latin, self._cache_root)
        return self._linker

    def _candidates(self, text: str) -> list[Candidate]:
        return [c for matcher in self.matchers for c in matcher.candidates(text)]

    def _abbreviation_candidates(self, text: str, pairs: list[tuple[int, int, int, int]]) -> list[tuple]:
        """Candidates that need the text's abbreviations spelled out: "G6PD deficiency" read as
        "glucose-6-phosphate dehydrogenase deficiency", and at a definition "X (XX) deficiency"
        read as "X deficiency". Only candidates that reach across a substitution are kept,
        with offsets mapped back to the original text."""
        edits = []  # (start, end, replacement) in the original text, non-overlapping
        for s0, s1, l0, l1 in sorted(pairs):
            if l1 <= s0 and re.fullmatch(r"\s*\(\s*", text[l1:s0]):
                close = re.match(r"\s*\)", text[s1:])
                if close:
                    edits.append((l1, s1 + close.end(), ""))
                continue
            edits.append((s0, s1, text[l0:l1]))
        if not edits:
            return []
        pieces: list[str] = []
        ostart: list[int] = []
        oend: list[int] = []
        joins: list[tuple[int, int]] = []
        pos = 0
        for a, b, rep in sorted(edits):
            if a < pos:
                continue
            for k in range(pos, a):
                pieces.append(text[k])
                ostart.append(k)
                oend.append(k + 1)
            r0 = len(pieces)
            for ch in rep:
                pieces.append(ch)
                ostart.append(a)
                oend.append(b)
            joins.append((r0, len(pieces)))  # an empty replacement is a join point
            pos = b
        for k in range(pos, len(text)):
            pieces.append(text[k])
            ostart.append(k)
            oend.append(k + 1)
        new = "".join(pieces)
        out = []
        for s, e, cui, score, tier in self._candidates(new):
            # a whole spelled-out long form plus more, or across a removed "(XX)"
            crosses = any((r0 < r1 and s <= r0 and r1 <= e and (s, e) != (r0, r1)) or (r0 == r1 and s < r0 < e)
                          for r0, r1 in joins)
            if crosses:
                out.append((ostart[s], oend[e - 1], cui, score, tier))
        return out

    def _head_grounded(self, text: str, matches: list[Match], l0: int, l1: int) -> bool:
        inside = [m for m in matches if m.start >= l0 and m.end <= l1]
        if not inside:
            return False
        best = max(inside, key=lambda m: (m.end - m.start, m.score, m.cui))
        if best.end - best.start < 0.5 * (l1 - l0):
            return False
        if self.params.head_final:
            return not text[best.end:l1].strip(" -)")
        return not text[l0:best.start].strip(" -(")

    def _parenthesised_pairs(self, text: str, matches: list[Match], pairs: list[tuple]) -> list[tuple]:
        """Definitions scispacy's detector leaves out ("ataxia-telangiectasia (A-T)"): a grounded
        mention right before "(XX)" whose letters XX abbreviate (acronym_fits); then every
        other occurrence of XX in the text too."""
        known = {text[s0:s1] for s0, s1, _l0, _l1 in pairs}
        out = []
        for m in matches:
            par = PAREN_SHORT.match(text, m.end)
            if not par:
                continue
            short = par.group(1)
            if short in known or sum(c.isupper() for c in short) < 2 or not acronym_fits(short, m.text):
                continue
            known.add(short)
            for occ in re.finditer(r"(?<![\w-])" + re.escape(short) + r"(?![\w-])", text):
                out.append((occ.start(), occ.end(), m.start, m.end))
        return out

    def _adds_head(self, long_form: str, term: str) -> bool:
        """Does the vocabulary term add a head word the long form lacks? "glucose-6-phosphate
        dehydrogenase" names the enzyme, "... deficiency" the disease; "central nervous system"
        is not "central nervous system cancer"."""
        heads = HEAD_WORDS.get(self.lang.code, set()) | self.generic
        have = set(WORD.findall(fold_term(long_form, self.latin)))
        stem = self.matcher.stem_of
        have_stems = {stem(w) for w in have}
        return any(w in heads and stem(w) not in have_stems for w in WORD.findall(fold_term(term, self.latin)))

    def _link_long_forms(self, text: str, matches: list[Match], pairs: list[tuple[int, int, int, int]]) -> list[Match]:
        """A long form no match covers by half gets its nearest vocabulary string's concept
        (TF-IDF cosine >= link_long_forms), as a mention of its own."""
        out = list(matches)
        for l0, l1 in sorted({(l0, l1) for _s0, _s1, l0, l1 in pairs}):
            inside = [m for m in out if m.start < l1 and l0 < m.end]
            if any(m.end - m.start >= 0.5 * (l1 - l0) for m in inside):
                continue
            hits = self.linker.nearest(text[l0:l1])
            if hits and hits[0][1] >= self.params.link_long_forms and not self._adds_head(text[l0:l1], hits[0][0].text):
                out = [m for m in out if not (m.start < l1 and l0 < m.end)]
                out.append(Match(l0, l1, text[l0:l1], hits[0][0].cui, round(hits[0][1], 4)))
        return sorted(out, key=lambda m: (m.start, m.end, m.cui))

    def _is_generic(self, m: Match) -> bool:
        """A bare generic head noun, or (space-delimited languages) a bare stop-word."""
        if self.lang.grounder == "dictionary":
            return cjk_fold(m.text, self.lang.code == "ja")[0] in self.generic
        t = fold_term(m.text, self.latin)
        return t in self.generic or t in self.stopwords

    def ground(self, text: str, include_negated: bool = False) -> list[Match]:
        cands = self._candidates(text)
        pairs = self.abbrev.pairs(text) if self.abbrev is not None else []
        if pairs:
            cands += self._abbreviation_candidates(text, pairs)
        matches = [m for m in select_matches(cands, text) if not self._is_generic(m)]
        if pairs and self.params.link_long_forms:
            matches = self._link_long_forms(text, matches, pairs)
        if self.abbrev is not None:
            pairs = pairs + self._parenthesised_pairs(text, matches, pairs)
            # a long form grounded only in part passes its concept on only when the match holds
            # the long form's head: "Wiskott-Aldrich syndrome protein (WASP)" names a protein
            pairs = [p for p in pairs if self._head_grounded(text, matches, p[2], p[3])]
            # a short form the text defines means what its long form means here, whatever a
            # vocabulary acronym says: drop vocabulary matches on it when the long form is grounded
            defined = {(s0, s1) for s0, s1, _l0, _l1 in pairs}
            matches = [m for m in matches if (m.start, m.end) not in defined]
            matches = expand_abbreviations(text, matches, pairs, min_cover=0.5)
        if self.params.negation and not include_negated:
            matches = [m for m in matches if not negated(text, m, self.lang.code, self.latin)]
        return matches
