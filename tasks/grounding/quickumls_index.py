"""QuickUMLS without its installer: the index built from the atoms table, a local stop-word corpus, the matcher."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
import fcntl
import functools
import hashlib
import os
import pickle
import shutil
import threading

from schemas.config import Language
from tasks.grounding.matchers import Term, _BREAK, _select, fold_terms, gc_paused, load_terms
from tasks.grounding.normalize import NORM_VERSION, fold, fold_term, is_acronym
from tasks.grounding.params import Match, QUICKUMLS_LANG
from tasks.grounding.simstring_reader import SimstringReader, UnsupportedDatabase


_LOCK = threading.Lock()


_NLTK_LOCK = threading.Lock()


def _ensure_nltk_stopwords(root: Path, languages: dict[str, str]) -> None:
    """QuickUMLS reads NLTK's stopwords corpus and downloads it when missing. We write the
    corpus ourselves, in NLTK's layout, from spaCy's bundled stop-word lists, so nothing
    is ever downloaded."""
    import importlib

    import nltk

    corpus = root / "corpora" / "stopwords"
    with _NLTK_LOCK:  # shards build their grounders concurrently on a thread pool
        corpus.mkdir(parents=True, exist_ok=True)
        for nltk_name, spacy_code in languages.items():
            target = corpus / nltk_name
            if not target.exists():
                words = importlib.import_module(f"spacy.lang.{spacy_code}.stop_words").STOP_WORDS
                tmp = target.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
                tmp.write_text("\n".join(sorted(words)) + "\n", encoding="utf-8")
                tmp.replace(target)
        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
        # NLTK binds its stopwords reader to the first root it loaded from: a process that
        # grounds with a second cache root (`mmedbench ground` after a build, tests) would
        # look for a new language's list in the old root. Rebind when a list is missing there.
        bound = getattr(nltk.corpus.stopwords, "_root", None)
        if bound is not None and not all(os.path.exists(os.path.join(bound.path, n)) for n in languages):
            from nltk.corpus.reader import StopwordsCorpusReader
            from nltk.corpus.util import LazyCorpusLoader

            nltk.corpus.stopwords = LazyCorpusLoader("stopwords", StopwordsCorpusReader, r"(?!README|\.).*", encoding="utf8")


def _stopwords(lang: Language) -> set[str]:
    if not lang.stopwords:
        return set()
    import importlib

    try:
        return set(importlib.import_module(f"spacy.lang.{lang.stopwords}.stop_words").STOP_WORDS)
    except ImportError:
        return set()


def index_entries(terms: list[Term], folded: list[str]) -> list[tuple[str, str, int]]:
    """(folded term, cui, preferred) rows of a QuickUMLS index, in the atoms' order: terms are
    fold()ed exactly as the text is; acronym atoms are left to the case-sensitive matcher; a
    (cui, term) pair keeps its first atom's preferred flag, as QuickUMLS' installer does."""
    seen = set()
    entries = []
    for t, term in zip(terms, folded):
        if len(term) < 3 or (t.cui, term) in seen or is_acronym(t.text):
            continue
        seen.add((t.cui, term))
        entries.append((term, t.cui, 1 if not t.rank[0] else 0))
    return entries


def write_index(entries: list[tuple[str, str, int]], simstring_dir: Path, cuisty_dir: Path) -> None:
    """What quickumls.install.parse_and_encode_ngrams writes for these entries (every one with
    the placeholder semantic type T000), with each database key written once: QuickUMLS
    reads, unpickles, extends and rewrites a term's CUI set on every entry (6.4 s per 200k
    terms). Same layout and values: simstring gets each distinct term once, in first-seen
    order; cui.unqlite maps a term to its pickled {(cui, preferred)}; semtypes.unqlite a cui
    to its pickled {"T000"}; keys NFKD-normalised (so two terms equal after NFKD share one
    set) and UTF-8 encoded, as quickumls.toolbox does."""
    from quickumls.toolbox import CuiSemTypesDB, SimstringDBWriter, db_key_encode, safe_unicode

    simstring_dir.mkdir(parents=True, exist_ok=True)
    cuisty_dir.mkdir(parents=True, exist_ok=True)
    ss_db = SimstringDBWriter(str(simstring_dir))
    cuis_of: dict[str, set[tuple[str, int]]] = {}
    key_of: dict[str, str] = {}  # term -> its NFKD key, computed once (QuickUMLS did it twice per entry)
    for term, cui, preferred in entries:
        key = key_of.get(term)
        if key is None:
            key = key_of[term] = safe_unicode(term)
            ss_db.db.insert(key)  # SimstringDBWriter.insert(term), NFKD already applied
        cui_key = cui if cui.isascii() else safe_unicode(cui)  # NFKD leaves ASCII alone
        cuis_of.setdefault(key, set()).add((cui_key, preferred))
    ss_db.db.close()  # writes the n-gram index files
    db = CuiSemTypesDB(str(cuisty_dir), database_backend="unqlite")
    semtypes = pickle.dumps({"T000"})
    cuis = set()
    for key, pairs in cuis_of.items():
        db.cui_db_put(db_key_encode(key), pickle.dumps(pairs))
        cuis.update(cui for cui, _preferred in pairs)
    for cui in sorted(cuis):
        db.semtypes_db_put(db_key_encode(cui), semtypes)
    db.cui_db.close()
    db.semtypes_db.close()


def index_dir(atoms_path: Path, lang: Language, cache_root: Path) -> Path:
    """Where the QuickUMLS index of these atoms lives: keyed by their content hash and the
    normalisation version."""
    st = Path(atoms_path).stat()
    return cache_root / "quickumls" / f"{_atoms_digest(str(atoms_path), st.st_size, st.st_mtime_ns)}-{lang.code}"


@functools.lru_cache(maxsize=64)
def _atoms_digest(path: str, size: int, mtime_ns: int) -> str:
    # asked for by the prebuild check, the helper, the wait and the build, per language:
    # hundreds of MB of English atoms at full scale, read once per (path, size, mtime)
    h = hashlib.sha256(Path(path).read_bytes())
    h.update(NORM_VERSION.encode())
    return h.hexdigest()[:16]


def index_built(atoms_path: Path, lang: Language, cache_root: Path) -> bool:
    return (index_dir(atoms_path, lang, cache_root) / "done.flag").exists()


# builder locks this process took ahead of building (a build's index helper takes those of
# every index it will build before it starts, so the build's process waits for each
# instead of building one itself): index folder -> the locked file descriptor
_HELD: dict[Path, int] = {}


def _lock_file(dest: Path) -> int:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest.parent / f".{dest.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock_ahead(dest: Path) -> None:
    """Take the builder lock of the index at `dest` now; `quickumls_index` releases it once
    it has built that index (or failed to)."""
    if dest not in _HELD:
        _HELD[dest] = _lock_file(dest)


def wait_for_index(dest: Path) -> None:
    """Return once nobody holds the index's builder lock (its builder published it, or
    gave up)."""
    with _builder_lock(dest):
        pass


@contextmanager
def _builder_lock(dest: Path):
    """One builder per index across processes (a build's helper process, another run on
    the same work dir): the others wait here, then find it built."""
    fd = _HELD.pop(dest, None)
    if fd is None:
        fd = _lock_file(dest)
    try:
        yield
    finally:
        os.close(fd)  # closing releases the flock


def quickumls_index(atoms_path: Path, lang: Language, cache_root: Path, terms: list[Term] | None = None,
                    folded: list[str] | None = None) -> Path:
    """Build (once) a QuickUMLS index for one language's atoms; return its folder. A caller
    that has the atoms' `load_terms` and their `fold_term`s already passes both."""
    dest = index_dir(atoms_path, lang, cache_root)
    if (dest / "done.flag").exists():
        if dest in _HELD:
            os.close(_HELD.pop(dest))
        return dest
    with _LOCK, _builder_lock(dest):
        if (dest / "done.flag").exists():
            return dest
        tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
        if tmp.exists():  # a killed build with this pid left it half-written
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        qlang = QUICKUMLS_LANG.get(lang.code, ("ENG", "english"))[0]
        (tmp / "language.flag").write_text(qlang)
        (tmp / "database_backend.flag").write_text("unqlite")
        (tmp / "lowercase.flag").write_text("")
        with gc_paused():
            if terms is None:
                terms = load_terms(Path(atoms_path), lang)
            if folded is None:
                folded = fold_terms(terms, "Latin" in lang.scripts)
            entries = index_entries(terms, folded)
            # writing needs neither the terms nor their folded forms: freed first (when
            # loaded here), the paper build's English index peaks at 1.65 GB, not 1.95
            del terms, folded
            write_index(entries, tmp / "umls-simstring.db", tmp / "cui-semtypes.db")
        (tmp / "done.flag").write_text(str(len(entries)))
        if dest.exists() and not (dest / "done.flag").exists():
            shutil.rmtree(dest, ignore_errors=True)  # a killed build's leftover
        try:
            tmp.rename(dest)
        except OSError:
            if not (dest / "done.flag").exists():
                raise
            # another process sharing the work dir published the same index first (and may
            # be reading it): keep theirs, never remove it under them
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _similarity(x: str, y: str, n: int, name: str) -> float:
    from quickumls.toolbox import get_similarity

    return get_similarity(x=x, y=y, n=n, similarity_name=name)


def toolbox_safe_unicode(s: str) -> str:
    from quickumls.toolbox import safe_unicode

    return safe_unicode(s)


class QuickUMLSMatcher:
    """QuickUMLS on the fold()ed text; offsets refer to the original text."""

    def __init__(self, index_dir: Path, lang: Language, threshold: float, window: int, cache_root: Path,
                 similarity: str = "jaccard", term_rank: dict[str, Term] | None = None):
        import spacy

        qlang, nltk_name = QUICKUMLS_LANG.get(lang.code, ("ENG", "english"))
        stop_langs = {"english": "en"}
        if lang.stopwords:
            stop_langs[nltk_name] = lang.stopwords
        _ensure_nltk_stopwords(cache_root / "nltk_data", stop_langs)
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
        self.stopwords = {fold_term(w, self.latin) for w in _stopwords(lang)}
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
            if punct or space or pos in ("ADP", "DET", "CONJ"):
                continue
            compensate = num or (text in stop and lemma not in negations) or pos in ("ADP", "DET", "CONJ")
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
        return tok[4] or tok[5] or tok[2] in stop or tok[8] in ("ADP", "DET", "CONJ")

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

    def candidates(self, text: str) -> list[tuple[int, int, str, float, int]]:
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
            if _BREAK.search(text, s, e):
                continue
            out.append((s, e, best["cui"], float(best["similarity"]), 3))
        return out

    def match(self, text: str) -> list[Match]:
        return _select(self.candidates(text), text)
