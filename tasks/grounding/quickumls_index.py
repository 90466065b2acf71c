"""QuickUMLS without its installer: the index built from the atoms table, once per content and
normalisation version, one builder at a time across threads and processes.

An index is a cache entry, trusted only once verified (git, SQLite: a failed write never
leaves state the next run trusts). It is built under a temporary name, checked (simstring's
C++ writer ignores a failed write: a full disk leaves its files cut short, silently), fsynced
and renamed into place with `files.json` recording every file's size and `done.flag` (its
entry count) written last; before use the record and the files' own headers are checked again, and an index that fails is removed and built
anew. Room for it is checked before the C++ writer runs: on a full disk it aborts the process."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
import fcntl
import functools
import errno
import hashlib
import json
import os
import pickle
import shutil
import struct
import threading

from common.jsonio import fsync_tree
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


def write_index(entries: list[tuple[str, str, int]], simstring_dir: Path, cuisty_dir: Path) -> dict[str, int]:
    """What quickumls.install.parse_and_encode_ngrams writes for these entries (every one with
    the placeholder semantic type T000), with each database key written once: QuickUMLS
    reads, unpickles, extends and rewrites a term's CUI set on every entry (6.4 s per 200k
    terms). Same layout and values: simstring gets each distinct term once, in first-seen
    order; cui.unqlite maps a term to its pickled {(cui, preferred)}; semtypes.unqlite a cui
    to its pickled {"T000"}; keys NFKD-normalised (so two terms equal after NFKD share one
    set) and UTF-8 encoded, as quickumls.toolbox does. Returns the keys each unqlite database
    must hold (checked before the index is trusted)."""
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
    return {"cui": len(cuis_of), "semtypes": len(cuis)}


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
    return index_problem(index_dir(atoms_path, lang, cache_root)) is None


DONE = "done.flag"  # written last: the entry count
RECORD = "files.json"  # {"entries": n, "bytes": {file: size}}; an index from before it has its headers checked alone
SIMSTRING = "umls-simstring.db"
CUISTY = "cui-semtypes.db"
MASTER = "umls-terms.simstring"
# room an index needs, checked before writing it: the sample's English index is 4.4 MB for
# 4,908 entries (890 bytes an entry), French 2.2 MB for 1,427
INDEX_BYTES_PER_ENTRY = 2048
INDEX_BYTES_FLOOR = 1 << 20


def _files(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in (DONE, RECORD) and not p.name.startswith(f".{RECORD}.")}


def _header_problem(folder: Path) -> str | None:
    """What the simstring files' own headers say is wrong (each records its full size)."""
    db = folder / SIMSTRING
    master = db / MASTER
    try:
        with open(master, "rb") as fh:
            head = fh.read(36)
        if len(head) < 36 or head[:4] != b"SSDB" or struct.unpack_from("<I", head, 12)[0] != master.stat().st_size:
            return f"{master.name}: cut short or not a simstring database"
        for cdb in sorted(db.glob(f"{MASTER}.*.cdb")):
            with open(cdb, "rb") as fh:
                head = fh.read(8)
            if len(head) < 8 or head[:4] != b"CDB+" or struct.unpack_from("<I", head, 4)[0] != cdb.stat().st_size:
                return f"{cdb.name}: cut short or not a CDB++ file"
    except OSError as exc:
        return f"{master.name}: {exc.strerror or exc}"
    journals = sorted((folder / CUISTY).glob("*_journal"))
    if journals:  # unqlite's rollback journal outlives a transaction that never committed (a full disk)
        return f"{CUISTY}/{journals[0].name}: a write that never completed"
    return None


def _key_counts(folder: Path) -> dict[str, int]:
    from quickumls.toolbox import CuiSemTypesDB

    db = CuiSemTypesDB(str(folder / CUISTY), database_backend="unqlite")
    try:
        return {"cui": sum(1 for _ in db.cui_db), "semtypes": sum(1 for _ in db.semtypes_db)}
    finally:
        db.cui_db.close()
        db.semtypes_db.close()


def index_problem(folder: Path) -> str | None:
    """Why the index at `folder` cannot be used (None: it can): not built, its record
    unreadable, a file of another size than recorded, or a simstring header that disagrees
    with its file."""
    if not (folder / DONE).is_file():
        return "not built"
    try:
        raw = (folder / RECORD).read_text(encoding="utf-8")
    except FileNotFoundError:  # an index from before the record: checked whole once, then recorded
        return _legacy_problem(folder)
    except (OSError, UnicodeDecodeError) as exc:
        return f"{RECORD}: unreadable ({exc})"
    try:
        recorded = json.loads(raw)["bytes"]
    except (ValueError, KeyError, TypeError):
        return f"{RECORD}: cut short or not a record"
    try:
        actual = _files(folder)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if actual != recorded:
        name = next(n for n in sorted(set(actual) | set(recorded)) if actual.get(n) != recorded.get(n))
        return f"{name}: {actual.get(name, 'no')} bytes, recorded {recorded.get(name, 'none')}"
    return _header_problem(folder)


def _legacy_problem(folder: Path) -> str | None:
    """An index written before `files.json`: its headers, and unqlite databases that hold
    keys (a full disk left the concepts' one empty, its transaction never committed). One
    that passes gets its record, so this runs once."""
    problem = _header_problem(folder)
    if problem is not None:
        return problem
    try:
        held = _key_counts(folder)
    except Exception as exc:  # noqa: BLE001 - unqlite's errors are its own types: unreadable is unusable
        return f"{CUISTY}: unreadable ({type(exc).__name__})"
    if held["cui"] and not held["semtypes"]:
        return f"{CUISTY}/semtypes.unqlite: holds no key, {held['cui']} terms have concepts"
    try:
        atomic = folder / f".{RECORD}.{os.getpid()}"
        atomic.write_text(json.dumps({"entries": None, "keys": held, "bytes": _files(folder)}, sort_keys=True) + "\n")
        atomic.rename(folder / RECORD)
    except OSError:
        pass  # checked again next time
    return None


def _room_for(entries: int, folder: Path) -> None:
    """Raise the full disk's OSError before the C++ writer runs out of room (it aborts)."""
    need = INDEX_BYTES_FLOOR + entries * INDEX_BYTES_PER_ENTRY
    free = shutil.disk_usage(folder).free
    if free < need:
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)}: {free >> 10} KB free, the index needs about "
                                    f"{need >> 10} KB", str(folder.parent))  # the temporary folder goes



def _written(tmp: Path, entries: int, keys: dict[str, int]) -> None:
    """Check, record and sync a freshly written index: its simstring headers must agree with
    its files and its unqlite databases hold every key (neither writer says when the disk
    filled under it: simstring's files are cut short, unqlite's transaction left uncommitted)."""
    problem = _header_problem(tmp)
    if problem is None:
        held = _key_counts(tmp)
        if held != keys:
            problem = f"{CUISTY}: holds {held['cui']} term and {held['semtypes']} concept keys, written {keys['cui']} and {keys['semtypes']}"
    if problem is not None:
        if shutil.disk_usage(tmp).free < INDEX_BYTES_FLOOR:
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (the index was cut short: {problem})", str(tmp.parent))
        raise RuntimeError(f"the QuickUMLS index written at {tmp} is damaged: {problem}")
    record = json.dumps({"entries": entries, "keys": keys, "bytes": _files(tmp)}, sort_keys=True)
    (tmp / RECORD).write_text(record + "\n", encoding="utf-8")
    fsync_tree(tmp)
    (tmp / DONE).write_text(str(entries))  # last: an index with it is complete
    fsync_tree(tmp)


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
    that has the atoms' `load_terms` and their `fold_term`s already passes both. An index
    that fails its check (`index_problem`: a disk that filled, a copy cut short) is built again."""
    dest = index_dir(atoms_path, lang, cache_root)
    if index_problem(dest) is None:
        if dest in _HELD:
            os.close(_HELD.pop(dest))
        return dest
    with _LOCK, _builder_lock(dest):
        if index_problem(dest) is None:
            return dest
        tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
        if tmp.exists():  # a killed build with this pid left it half-written
            shutil.rmtree(tmp)
        try:
            _build_into(tmp, atoms_path, lang, terms, folded)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)  # the room it took is the next run's
            raise
        if dest.exists():  # a killed or cut-short build's leftover (we hold the builder lock)
            shutil.rmtree(dest, ignore_errors=True)
        try:
            tmp.rename(dest)
        except OSError:
            if index_problem(dest) is not None:
                raise
            # another process sharing the work dir published the same index first (and may
            # be reading it): keep theirs, never remove it under them
            shutil.rmtree(tmp, ignore_errors=True)
        _sync_folder(dest.parent)
    return dest


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _build_into(tmp: Path, atoms_path: Path, lang: Language, terms: list[Term] | None, folded: list[str] | None) -> None:
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
        _room_for(len(entries), tmp)
        keys = write_index(entries, tmp / SIMSTRING, tmp / CUISTY)
    _written(tmp, len(entries), keys)
