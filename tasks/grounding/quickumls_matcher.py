"""QuickUMLS' approximate matching on the fold()ed text, over an index `quickumls_index` built:
its n-grams searched with the compiled simstring reader, answers cached per n-gram."""
from __future__ import annotations

from pathlib import Path

from schemas.config import Language
from tasks.grounding.normalize import fold, fold_term
from tasks.grounding.params import Match, quickumls_language
from tasks.grounding.simstring_reader import SimstringReader, UnsupportedDatabase
from tasks.grounding.spans import MENTION_BREAK, Candidate, CandidateMatcher, Term, Tier, select_matches
from tasks.grounding.stopwords import ensure_nltk_stopwords, language_stopwords


def _similarity(x: str, y: str, n: int, name: str) -> float:
    from quickumls.toolbox import get_similarity

    return get_similarity(x=x, y=y, n=n, similarity_name=name)


def toolbox_safe_unicode(s: str) -> str:
    from quickumls.toolbox import safe_unicode

    return safe_unicode(s)


# parts of speech an n-gram neither starts nor ends on (QuickUMLS' own rule)
_SKIPPED_POS = ("ADP", "DET", "CONJ")


class QuickUMLSMatcher(CandidateMatcher):
    """QuickUMLS on the fold()ed text; offsets refer to the original text."""

    def __init__(self, index_dir: Path, lang: Language, threshold: float, window: int, cache_root: Path,
                 similarity: str = "jaccard", term_rank: dict[str, Term] | None = None):
        import spacy

        qlang, nltk_name = quickumls_language(lang.code)
        stop_langs = {"english": "en"}
        if lang.stopwords:
            stop_langs[nltk_name] = lang.stopwords
        ensure_nltk_stopwords(cache_root / "nltk_data", stop_langs)
        from quickumls import QuickUMLS, constants

        # QuickUMLS looks up a spaCy model name even when it is handed a pipeline
        # (spacy_component=True); languages it has no model for (Russian) get the blank one.
        constants.SPACY_LANGUAGE_MAP.setdefault(qlang, "xx")

        self.latin = "Latin" in lang.scripts
        self.nlp = spacy.blank(lang.spacy_lang)
        self.qu = QuickUMLS(str(index_dir), threshold=threshold, window=window, similarity_name=similarity,
                            accepted_semtypes=None, spacy_component=True)
        # simstring's search, compiled over the same files (same strings, same order): the
        # C++ reader's scattered look-ups were most of English grounding's CPU
        try:
            self.qu.ss_db = SimstringReader(Path(index_dir) / "umls-simstring.db", similarity, threshold)
        except UnsupportedDatabase:
            pass  # an index in a layout the compiled reader does not know: QuickUMLS' own reader
        self.stopwords = {fold_term(w, self.latin) for w in language_stopwords(lang)}
        self.term_rank = term_rank or {}
        self.index_dir = Path(index_dir)
        self._cache: dict[str, list] = {}
        self._cache_size = 500_000
        self._fresh: list[str] | None = None  # n-grams searched since take_fresh(), once track_fresh() is called
        qu = self.qu
        # the settings `_match` reproduces; anything else goes through QuickUMLS itself
        self._exact_replica = (qu.accepted_semtypes is None and qu.to_lowercase_flag and not qu.normalize_unicode_flag
                               and qu.overlapping_criteria == "score")

    def reopen(self) -> None:
        """Open the concept database again (a forked grounding worker must not share the
        parent's file handle); the simstring index is in memory and memory-mapped files."""
        from quickumls import toolbox

        self.qu.cuisem_db = toolbox.CuiSemTypesDB(str(self.index_dir / "cui-semtypes.db"),
                                                  database_backend=self.qu._database_backend)

    def _ngrams(self, doc) -> list[tuple[int, int, str]]:
        """QuickUMLS' `_make_ngrams` on a blank pipeline's doc, the same spans in the same order,
        from token attributes read once (spaCy's Doc indexing dominated the original)."""
        qu = self.qu
        stop, negations, valid_punct = qu._stopwords, qu.negations, qu.valid_punct
        toks = [(t.idx, len(t), t.text, t.text_with_ws, t.is_punct, t.is_space, t.like_num, t.lemma_, t.pos_)
                for t in doc]
        n, window, min_len = len(toks), qu.window, qu.min_match_length
        skip = {k for k, t in enumerate(toks) if t[8] == "DET"}
        out = []
        for i, (idx, length, text, _ws, punct, space, num, lemma, pos) in enumerate(toks):
            if punct or space or pos in _SKIPPED_POS:
                continue
            compensate = num or (text in stop and lemma not in negations) or pos in _SKIPPED_POS
            if i + 1 == n and not self._bad_end(toks[i], stop) and length >= min_len:
                out.append((idx, idx + length, text))
            # (QuickUMLS tests a Token for membership in a set of indices here, which never
            # holds: spans are never cut at an invalid middle token)
            for j in range(i + 1, min(n, i + window) + 1):
                if compensate:
                    compensate = False
                    continue
                if self._bad_end(toks[j - 1], stop):
                    continue
                start, end = idx, toks[j - 1][0] + toks[j - 1][1]
                if end - start < min_len:
                    continue
                out.append((start, end, "".join(toks[k][3] for k in range(i, j) if k not in skip).strip()))
        return out

    @staticmethod
    def _bad_end(tok, stop) -> bool:
        return tok[4] or tok[5] or tok[2] in stop or tok[8] in _SKIPPED_POS

    def _ngram_matches(self, ngram: str) -> list[tuple[str, str, float, int]]:
        """QuickUMLS' matches for one normalised n-gram, (term, cui, similarity, preferred) in
        its order; a pure function of the n-gram and the index, so kept (n-grams such as
        "patients with" recur in every other question)."""
        hit = self._cache.get(ngram)
        if hit is not None:
            return hit
        qu = self.qu
        found: list[tuple[str, str, float, int]] = []
        prev_cui = None
        for match in qu.ss_db.get(ngram):
            cuisem = sorted(qu.cuisem_db.get(match))
            sim = _similarity(ngram, match, qu.ngram_length, qu.similarity_name)
            if sim == 0:
                continue
            for cui, _semtypes, preferred in cuisem:
                if prev_cui is not None and prev_cui == cui:
                    if sim > found[-1][2]:
                        found.pop(-1)
                    else:
                        continue
                prev_cui = cui
                found.append((toolbox_safe_unicode(match), cui, sim, preferred))
        found.sort(key=lambda m: m[2] + m[3], reverse=True)
        self._remember(ngram, found)
        if self._fresh is not None:
            self._fresh.append(ngram)
        return found

    def _remember(self, ngram: str, found: list) -> None:
        if len(self._cache) >= self._cache_size:
            self._cache.clear()  # bounded; results do not depend on what is cached
        self._cache[ngram] = found

    def track_fresh(self) -> None:
        """From now on, note the n-grams searched (a forked worker, for ``take_fresh``)."""
        self._fresh = []

    def take_fresh(self) -> dict[str, list]:
        """The n-grams searched since ``track_fresh`` or the last call, with their matches
        (and forget them): what a forked worker hands back so that its parent, and the
        workers it forks next, do not search them again."""
        if not self._fresh:
            return {}
        fresh = {g: self._cache[g] for g in self._fresh if g in self._cache}
        self._fresh = []
        return fresh

    def after_fork(self) -> None:
        self.reopen()
        self.track_fresh()  # its searches go back to the parent (tasks/grounding/pool.py, _pool_ground)

    def take_found(self) -> dict[str, list] | None:
        return self.take_fresh() or None

    def absorb(self, found_by_ngram: dict[str, list]) -> None:
        """Keep another process's answers (``take_fresh``) as if searched here."""
        for ngram, found in found_by_ngram.items():
            if ngram not in self._cache:
                self._remember(ngram, found)

    def _match(self, doc) -> list[list[dict]]:
        """QuickUMLS' `_match(doc, best_match=True)` for this matcher's settings (no semantic
        type filter, lowercased index, no unicode normalisation, overlap by score)."""
        matches = []
        for start, end, ngram in self._ngrams(doc):
            found = self._ngram_matches(ngram.lower())
            if found:
                matches.append([{"start": start, "end": end, "ngram": ngram, "term": t, "cui": c, "similarity": s,
                                 "preferred": p} for t, c, s, p in found])
        matches.sort(key=lambda m: (m[0]["similarity"], m[0]["end"] - m[0]["start"]), reverse=True)
        taken: list[tuple[int, int]] = []
        out = []
        for group in matches:
            a, b = group[0]["start"], group[0]["end"]
            if not any((b > s and e > a) or (s < b and e > a) for s, e in taken):
                out.append(group)
                taken.append((a, b))
        return out

    def candidates(self, text: str) -> list[Candidate]:
        norm, origin = fold(text, self.latin)
        if not norm:
            return []
        doc = self.nlp(norm)
        out = []
        groups = self._match(doc) if self._exact_replica else self.qu._match(doc, best_match=True)
        for group in groups:
            def key(m):
                t = self.term_rank.get(m["term"])
                rank = t.rank if t is not None and t.cui == m["cui"] else (1, 99, m["cui"])
                return (-m["similarity"], rank)

            best = sorted(group, key=key)[0]
            words = norm[best["start"]:best["end"]].split()
            if words and (words[0] in self.stopwords or words[-1] in self.stopwords):
                continue
            s, e = origin[best["start"]], origin[best["end"] - 1] + 1
            if MENTION_BREAK.search(text, s, e):
                continue
            out.append((s, e, best["cui"], float(best["similarity"]), Tier.APPROXIMATE))
        return out

    def match(self, text: str) -> list[Match]:
        return select_matches(self.candidates(text), text)
