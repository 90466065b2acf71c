"""QuickUMLS without its installer: the index built from the atoms table, once per content and
normalisation version, one builder at a time across threads and processes."""
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
from tasks.grounding.matchers import fold_terms, load_terms
from tasks.grounding.normalize import NORM_VERSION, is_acronym
from tasks.grounding.params import quickumls_language
from tasks.grounding.runtime import gc_paused
from tasks.grounding.spans import Term


_LOCK = threading.Lock()



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
        qlang = quickumls_language(lang.code)[0]
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
